#pragma once
// What an op says about itself: its descriptor (OpInfo: the name graph files use, the node type listings
// show, arity, parameters, formula, flags the checker reads) and the values of its parameters on one node
// (Params<T>). Nothing here knows any particular op: each ops/<op>.hpp defines one descriptor, and
// ops/ops.hpp lists them once.
//
// An op is a struct with
//   static constexpr OpInfo info{...};
//   template <class A, Real T> static Shape shape(std::span<const A> operands, const Params<T>&);
//       the result's shape from the operands' (anything with shape() and name(): a Var, or a shape
//       alone); throws ShapeError naming the op, the operands and their shapes when they do not fit
//   template <Real T> static Var<T> apply(std::span<const Var<T>> operands, const Params<T>&, std::string label);
//       records the op; the tape replays a node with it (the per-node check, finite differences)
// and records its nodes with Tape<T>::record<Op>(...), which keeps &Op::info, the parameters and the replay.
// A built-in op defines apply right after its struct and ends with its line for autodiff/instances.hpp
// (TAPEGRAD_OP_INSTANCE in operands.hpp), so our own builds compile it once per engine type.

#include "error.hpp"
#include "real.hpp"
#include "shape.hpp"
#include "tensor.hpp"

#include <array>
#include <cassert>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

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

/// A choice parameter's string (ParamType::choice).
struct Choice {
  std::string value;
  friend bool operator==(const Choice&, const Choice&) = default;
};

/// A number parameter: its value in T and, when it came from text (a graph file), the exact decimal.
template <Real T> struct Number {
  T value;
  std::string text; ///< empty when made in C++ from a T
};

/// The parameters of one node, by name, in the order of the op's ParamSpecs. Few (an op has at most
/// `capacity`), so they live inline: recording a node with parameters allocates nothing for them.
template <Real T> class Params {
public:
  static constexpr std::size_t capacity = 4;
  /// A number; an integer; indices, dims or sizes; flags; a bool; a choice; an int or bool constant operand (bools
  /// as 1 and 0), shared: copies of the parameters (replays, other precisions) do not copy its entries.
  using Value = std::variant<std::monostate, Number<T>, long, std::vector<long>, std::vector<bool>, bool, Choice,
                             std::shared_ptr<const Tensor<long>>>;

  Params() = default;
  Params& set(std::string_view name, Value value) {
    for (std::size_t k = 0; k < size_; ++k)
      if (names_[k] == name) {
        values_[k] = std::move(value);
        return *this;
      }
    if (size_ == capacity)
      throw UsageError("Params: more than " + std::to_string(capacity) + " parameters (setting '" + std::string(name) +
                       "')");
    names_[size_] = name;
    values_[size_++] = std::move(value);
    return *this;
  }
  Params& number(std::string_view name, const T& x) { return set(name, Number<T>{x, {}}); }

  std::size_t size() const { return size_; }
  std::string_view name(std::size_t k) const { return names_[k]; }
  const Value& value(std::size_t k) const { return values_[k]; }
  bool has(std::string_view name) const { return find(name) != nullptr; }

  const T& number(std::string_view name) const { return get<Number<T>>(name).value; }
  /// A number's exact decimal text, or T's shortest round-trip decimal when it was made in C++.
  std::string number_text(std::string_view name) const {
    const Number<T>& n = get<Number<T>>(name);
    return n.text.empty() ? to_decimal(n.value) : n.text;
  }
  /// Whether a number came from text (a graph file's exact decimal) rather than from a T made in C++.
  bool number_from_text(std::string_view name) const { return !get<Number<T>>(name).text.empty(); }
  long integer(std::string_view name) const { return get<long>(name); }
  const std::vector<long>& indices(std::string_view name) const { return get<std::vector<long>>(name); }
  /// Dims (ParamType::dims: an integer is a list of one) and integer lists (ParamType::integer_list).
  const std::vector<long>& dims(std::string_view name) const { return get<std::vector<long>>(name); }
  const std::vector<long>& integer_list(std::string_view name) const { return get<std::vector<long>>(name); }
  bool boolean(std::string_view name) const { return get<bool>(name); }
  const std::string& choice(std::string_view name) const { return get<Choice>(name).value; }
  /// An int or bool constant operand (ParamType::constant).
  const Tensor<long>& ints(std::string_view name) const { return *ints_shared(name); }
  const std::shared_ptr<const Tensor<long>>& ints_shared(std::string_view name) const {
    return get<std::shared_ptr<const Tensor<long>>>(name);
  }
  /// A bool parameter, or `otherwise` when it is absent.
  bool boolean_or(std::string_view name, bool otherwise) const { return has(name) ? boolean(name) : otherwise; }
  const std::vector<bool>& flags(std::string_view name) const { return get<std::vector<bool>>(name); }

  /// The same parameters in U, numbers converted by `to` (exactly: U holds T).
  template <Real U, class To> Params<U> converted(const To& to) const {
    Params<U> out;
    for (std::size_t k = 0; k < size_; ++k)
      std::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, Number<T>>)
              out.set(names_[k], Number<U>{to(v.value), v.text});
            else
              out.set(names_[k], v);
          },
          values_[k]);
    return out;
  }

private:
  const Value* find(std::string_view name) const {
    for (std::size_t k = 0; k < size_; ++k)
      if (names_[k] == name) return &values_[k];
    return nullptr;
  }
  template <class V> const V& get(std::string_view name) const {
    const Value* v = find(name);
    if (v == nullptr || !std::holds_alternative<V>(*v))
      throw UsageError("parameter '" + std::string(name) + "' is " + (v == nullptr ? "missing" : "of another type") +
                       " (the op's apply() was called with parameters its descriptor does not describe)");
    return std::get<V>(*v);
  }

  std::array<std::string_view, capacity> names_{};
  std::array<Value, capacity> values_{};
  std::size_t size_ = 0;
};

/// Sets parameter `spec` of p to its default (ParamSpec::default_value), made in T from the text as a graph
/// file's reader makes it: a number rounded once from its decimal (keeping the text), an integer parsed.
/// UsageError for a parameter with no default, or of a type whose defaults are not written as text.
template <Real T> Params<T>& set_default(Params<T>& p, const ParamSpec& spec) {
  const std::string text(spec.default_value);
  if (text.empty()) throw UsageError("set_default: parameter '" + std::string(spec.name) + "' has no default");
  if (spec.type == ParamType::number) return p.set(spec.name, Number<T>{from_decimal<T>(text), text});
  if (spec.type == ParamType::integer) return p.set(spec.name, std::stol(text));
  if (spec.type == ParamType::boolean) return p.set(spec.name, text == "true");
  if (spec.type == ParamType::choice) return p.set(spec.name, Choice{text});
  throw UsageError("set_default: parameter '" + std::string(spec.name) + "' is a list; lists have no default");
}

/// An operand known by its shape alone (the random-graph generator, the docs): what shape() needs.
struct ShapeOperand {
  Shape dims;
  std::string label = "a";
  ShapeOperand() = default;
  ShapeOperand(Eigen::Index rows, Eigen::Index cols, std::string name = "a")
      : dims{rows, cols}, label(std::move(name)) {}
  ShapeOperand(Shape s, std::string name) : dims(s), label(std::move(name)) {}
  const Shape& shape() const { return dims; }
  Eigen::Index rows() const { return dims.rows(); }
  Eigen::Index cols() const { return dims.cols(); }
  std::string name() const { return label; }
};

/// "op(a, b): a is RxC but b is RxC; rule" as a ShapeError, for any operands with shape() and name().
template <class A>
[[noreturn]] void shape_mismatch(std::string_view op, const A& a, const A& b, std::string_view rule) {
  throw ShapeError(std::string(op) + "(" + a.name() + ", " + b.name() + "): " + a.name() + " is " +
                   shape_string(a.shape()) + " but " + b.name() + " is " + shape_string(b.shape()) + "; " +
                   std::string(rule));
}

/// A list of ops (ops/ops.hpp names the built-in ones once): what graph files, the `tapegrad ops` listing,
/// the random-graph generator and the docs iterate over.
template <class... Ops> struct OpList {
  static constexpr std::size_t size = sizeof...(Ops);
  static constexpr std::array<const OpInfo*, sizeof...(Ops)> infos{&Ops::info...};

  /// f.template operator()<Op>() for every op, in list order.
  template <class F> static void for_each(F&& f) { (f.template operator()<Ops>(), ...); }

  /// f.template operator()<Op>() for the op whose descriptor is `info` (one of the list's).
  template <class R, class F> static R visit(const OpInfo* info, F&& f) {
    R result{};
    [[maybe_unused]] const bool found = ((info == &Ops::info && (result = f.template operator()<Ops>(), true)) || ...);
    assert(found && "visit: the descriptor is one of the list's");
    return result;
  }

  /// The op named `name` in graph files, or null.
  static const OpInfo* find(std::string_view name) {
    for (const OpInfo* info : infos)
      if (info->name == name) return info;
    return nullptr;
  }
};

/// The shapes column of a unary elementwise op's descriptor.
inline constexpr std::string_view elementwise_shapes = "a: any rank -> a's shape";

/// The shape of an elementwise op: every operand as the first.
template <class A> Shape same_shape_as_first(std::span<const A> in) { return in[0].shape(); }

} // namespace tapegrad
