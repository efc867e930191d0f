#pragma once
// An op's descriptor (OpInfo): the name graph files use, the node type listings show, arity, parameters and how
// files write them, formula, the flags the checker reads. One per op, a constexpr static member of its struct
// (autodiff/op.hpp says what an op is); nothing here knows any particular op.

#include <cstddef>
#include <span>
#include <string_view>

namespace tapegrad {

/// How a parameter is written in a graph file.
enum class ParamType {
  number,       ///< an exact decimal (JSON number or decimal string), rounded once into the precision
  integer,      ///< a JSON integer ("1", 1.0 and 1e0 are not)
  indices,      ///< a non-empty list of JSON integers >= 0
  flags,        ///< a non-empty list of 0 and 1
  dims,         ///< dims: a JSON integer or a non-empty list of them (negative counts from the end)
  integer_list, ///< a list of JSON integers, possibly empty (a shape's sizes, a permutation of dims)
  boolean,      ///< a JSON bool
  choice,       ///< one of the strings ParamSpec::choices lists ("approximate": "none" or "tanh")
  constant,     ///< an int or bool constant operand (OpInfo::const_operands): a graph file gives it among the args
};

inline const char* param_type_name(ParamType t) {
  switch (t) {
  case ParamType::number:
    return "number";
  case ParamType::integer:
    return "integer";
  case ParamType::indices:
    return "indices";
  case ParamType::flags:
    return "flags";
  case ParamType::dims:
    return "dims";
  case ParamType::integer_list:
    return "integer list";
  case ParamType::boolean:
    return "boolean";
  case ParamType::choice:
    return "choice";
  case ParamType::constant:
    return "constant";
  }
  return "?";
}

/// Which entries of an operand an op is defined at (beyond, the op throws DomainError).
enum class Domain {
  any,      ///< every entry
  positive, ///< entries > 0 (log, sqrt)
  nonzero,  ///< entries != 0 (a divisor)
};

/// "> 0", "!= 0": the condition in words, for messages and listings; empty for Domain::any.
constexpr std::string_view domain_condition(Domain d) {
  return d == Domain::positive ? "> 0" : d == Domain::nonzero ? "!= 0" : "";
}

struct ParamSpec {
  std::string_view name = {};
  ParamType type;
  std::string_view default_value; ///< as a graph file would write it; empty: required (unless optional)
  std::string_view doc;
  bool in_files = true;  ///< false: a C++-only option (graph files and `tapegrad ops` do not show it)
  bool optional = false; ///< may be absent, with no default: its absence has a meaning of its own (sum's "axis")
  std::span<const std::string_view> choices{}; ///< ParamType::choice: the strings it may be
  std::size_t list_length = 0; ///< ParamType::dims: a list in a file must have this many entries (0: any number)
  bool required() const { return default_value.empty() && !optional; }
};

/// An int or bool operand of an op (targets, token ids, a mask): a constant, never differentiated, so a node keeps
/// it as a parameter (ParamType::constant), not as a parent. A graph file writes it among the args, as the name of
/// an int or bool constant, at `position`.
struct ConstOperand {
  std::size_t position = 0;    ///< among the args of a graph file's node
  std::string_view param = {}; ///< the parameter that holds it on the node
  bool boolean = false;        ///< a bool constant (a mask); else an int one (indices)
  bool optional = false;       ///< may be left out (cross_entropy's v2 form has no target operand)
};

/// An op's descriptor: one per op, a constexpr static member of its struct. Nodes point at it, so its
/// address is the op's identity.
struct OpInfo {
  std::string_view name = {};        ///< in graph files: "matmul"
  std::string_view call = {};        ///< the C++ function, as called: "matmul(a, b)"
  std::string_view node = {};        ///< the node type in listings: "MatMul"
  std::string_view file = {};        ///< the header under ops/ that defines it: "matmul.hpp"
  std::size_t arity = 1;             ///< operands; with `variadic`, the least number
  bool variadic = false;             ///< takes arity or more operands
  std::size_t optional_operands = 0; ///< real operands that may follow the arity ones (layer_norm's weight, bias)
  std::span<const ParamSpec> params{};
  std::string_view formula = {}; ///< the forward, one line
  std::string_view shapes = {};  ///< "a: m x n, b: n x p -> m x p"
  std::string_view dual = {};    ///< what Dual<T> needs beyond + - * / (scalar functions): "exp"
  bool row_normaliser = false;   ///< softmax-like: each row sums to 1 (the saturation guard looks at it)
  bool kink = false; ///< not differentiable where an operand entry is 0 (relu, abs): the kink guard looks at it
  /// Not differentiable where entries of a reduced slice tie for its maximum (amax over its "dim"): the kink guard
  /// looks at it.
  bool ties = false;
  bool masks = false; ///< its value may hold -inf on purpose (anomaly mode allows it)
  /// Its value carries no derivative (detach): a constant from here on. Finite differences hold it at its
  /// recorded value; the per-node check does not difference it (its VJP is 0 by definition, not by its values).
  bool detaches = false;
  bool input = false;                ///< a leaf of the tape, not an op
  std::span<const Domain> domains{}; ///< per operand, where its entries must lie; operands past the list: anywhere
  std::span<const ConstOperand> const_operands{}; ///< its int and bool operands, besides the `arity` real ones
};

/// OpInfo::domains of a unary op defined for entries > 0 (log, sqrt).
inline constexpr Domain positive_operand[] = {Domain::positive};

/// Where the entries of operand k of `op` must lie.
constexpr Domain operand_domain(const OpInfo& op, std::size_t k) {
  return k < op.domains.size() ? op.domains[k] : Domain::any;
}

/// The most real operands op takes (SIZE_MAX for a variadic one).
constexpr std::size_t max_operands(const OpInfo& op) {
  return op.variadic ? static_cast<std::size_t>(-1) : op.arity + op.optional_operands;
}

/// The C++ function's name ("hadamard" for the op files call "mul"), for messages.
constexpr std::string_view function_name(const OpInfo& op) {
  return op.call.empty() ? op.name : op.call.substr(0, op.call.find('('));
}

/// The descriptor of a tape's leaves.
inline constexpr OpInfo input_op{.name = "input",
                                 .node = "Input",
                                 .arity = 0,
                                 .formula = "a value the graph reads",
                                 .masks = true, // a score masked by hand may be -inf
                                 .input = true};

/// The descriptor of a tape's constants: leaves no gradient is computed for (torch's requires_grad=False).
inline constexpr OpInfo constant_op{.name = "constant",
                                    .node = "Constant",
                                    .arity = 0,
                                    .formula = "a value the graph reads, without a gradient",
                                    .masks = true,
                                    .input = true};

/// The shapes column of a unary elementwise op's descriptor.
inline constexpr std::string_view elementwise_shapes = "a: any rank -> a's shape";

} // namespace tapegrad
