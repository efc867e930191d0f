#pragma once
// Graph files: a small graph as one JSON object, read without compiling anything.
//
//   {"description": "...", "inputs": {"X": [[1, 0], [0, 1]], ...},
//    "nodes": [{"name": "Q", "op": "matmul", "args": ["X", "WQ"]}, ...], "output": "J"}
//
// Entries are JSON numbers or strings, read as the EXACT decimal they spell (nlohmann-json's SAX interface
// hands over each number's original text) and rounded once into the target precision; strings may be
// "inf", "-inf" or "nan" (graph-format-v3: `grad` computes through a NaN; the commands that check gradients
// refuse one, require_numeric_inputs). Names are unique; a node uses inputs and earlier nodes.
// This header parses and validates everything that does not depend on values; graph_build.hpp records the
// graph on a tape. Every problem is a GraphFileError naming the file, the node and the problem.

#include "../../autodiff/error.hpp"
#include "../../ops/ops.hpp"
#include "json_tree.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tapegrad {

/// An invalid graph file: the message names the file, the node (when there is one) and the problem.
class GraphFileError : public Error {
public:
  using Error::Error;
};

/// A tensor as written: its shape and its entries' decimal texts, row-major.
struct TensorText {
  Shape shape;
  std::vector<std::string> entries;
};

/// One parameter of a node as the file gives it (or its op's default), checked against its ParamType.
struct ParamText {
  std::string_view name;
  ParamType type = ParamType::number;
  std::string number;        ///< number: the exact decimal text
  long integer = 0;          ///< integer
  std::vector<long> indices; ///< indices, dims (an integer as a list of one), sizes
  bool boolean = false;      ///< boolean
  std::string choice;        ///< choice
  std::vector<bool> flags;   ///< flags
};

struct NodeSpec {
  std::string name, op;
  const OpInfo* info = nullptr;  ///< the op's descriptor (one of BuiltinOps)
  std::vector<std::string> args; ///< the real operands (inputs, real constants, earlier nodes), in order
  /// The int and bool constant operands: (the op's parameter that holds it, the constant's name).
  std::vector<std::pair<std::string_view, std::string>> constant_args;
  std::vector<ParamText> params; ///< every parameter of the op, in its descriptor's order, defaults filled in
};

/// A constant of a graph file (format v3): never differentiated. Real entries are decimal texts as inputs' are; int
/// entries integers; bool entries "true" or "false".
struct ConstantSpec {
  enum class Dtype { real, integer, boolean };
  std::string name;
  Dtype dtype = Dtype::real;
  TensorText value;
};

/// "real", "int", "bool": a constant's dtype as files write it.
inline std::string dtype_name(ConstantSpec::Dtype d) {
  return d == ConstantSpec::Dtype::real ? "real" : d == ConstantSpec::Dtype::integer ? "int" : "bool";
}
/// "a real", "an int", "a bool".
inline std::string with_article(ConstantSpec::Dtype d) {
  return (d == ConstantSpec::Dtype::integer ? "an " : "a ") + dtype_name(d);
}

struct GraphSpec {
  std::string file; ///< as named in messages
  std::string description;
  std::vector<std::pair<std::string, TensorText>> inputs; ///< in file order
  std::vector<ConstantSpec> constants;                    ///< in file order
  std::vector<NodeSpec> nodes;                            ///< in file order
  std::string output;
};

/// For the commands that check gradients (check, bugs, dot --check): a UsageError naming the file and the first
/// input or real constant entry that is NaN. The format allows one (`grad` computes through it), but no gradient can be
/// checked at a point that is not a number: every difference quotient there is NaN.
inline void require_numeric_inputs(const GraphSpec& spec, std::string_view command) {
  const auto refuse = [&](const std::string& what, const TensorText& t) {
    for (std::size_t e = 0; e < t.entries.size(); ++e)
      if (t.entries[e] == "nan")
        throw UsageError(spec.file + ": " + what + " entry " + entry_string(t.shape, static_cast<Eigen::Index>(e)) +
                         " is NaN: '" + std::string(command) +
                         "' cannot check a gradient at a point that is not a number ('grad' computes through it)");
  };
  for (const auto& [name, value] : spec.inputs)
    refuse("input '" + name + "'", value);
  for (const ConstantSpec& c : spec.constants)
    if (c.dtype == ConstantSpec::Dtype::real) refuse("constant '" + c.name + "'", c.value);
}

/// "matmul, transpose, ...": the ops graph files take, for messages.
inline std::string graph_file_op_list() {
  std::string list;
  for (const OpInfo* op : BuiltinOps::infos)
    list += (list.empty() ? "" : ", ") + std::string(op->name);
  return list;
}

/// Whether some op takes a parameter called `key` in graph files.
inline bool is_parameter_of_some_op(const std::string& key) {
  for (const OpInfo* op : BuiltinOps::infos)
    for (const ParamSpec& p : op->params)
      if (p.in_files && p.name == key) return true;
  return false;
}

namespace detail {

class SpecReader {
public:
  explicit SpecReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& problem) const {
    throw GraphFileError(file_ + ": " + (where.empty() ? "" : where + ": ") + problem);
  }

  /// A tensor: a number or decimal string (rank 0; "inf", "-inf" and "nan" as strings), or a list of k
  /// equal-shaped tensors (rank + 1), at most max_rank deep, no list empty.
  TensorText tensor(const JsonNode& v, const std::string& where,
                    ConstantSpec::Dtype dtype = ConstantSpec::Dtype::real) const {
    TensorText t;
    for (const JsonNode* n = &v; n->kind == JsonNode::Kind::array; n = &n->items[0]) {
      if (n->items.empty())
        fail(where, t.shape.rank() == 0 ? "an empty list (every size must be at least 1)"
                                        : "an empty list at depth " + std::to_string(t.shape.rank()) +
                                              " (every size must be at least 1)");
      if (t.shape.rank() == max_rank) fail(where, "nested deeper than rank " + std::to_string(max_rank));
      t.shape.push_back(static_cast<Eigen::Index>(n->items.size()));
    }
    std::vector<Eigen::Index> index;
    entries(v, where, dtype, t, index);
    return t;
  }

private:
  void entries(const JsonNode& v, const std::string& where, ConstantSpec::Dtype dtype, TensorText& t,
               std::vector<Eigen::Index>& index) const {
    const std::size_t depth = index.size();
    if (depth < t.shape.rank()) {
      const std::string at = where + " at " + index_string(index);
      if (v.kind != JsonNode::Kind::array)
        fail(at, std::string("a list of ") + std::to_string(t.shape[depth]) + " was expected (as its first " +
                     "sibling holds), not " + kind_name(v.kind));
      if (static_cast<Eigen::Index>(v.items.size()) != t.shape[depth])
        fail(at, "ragged: this list has " + std::to_string(v.items.size()) +
                     " entries but the first at its depth has " + std::to_string(t.shape[depth]));
      for (std::size_t i = 0; i < v.items.size(); ++i) {
        index.push_back(static_cast<Eigen::Index>(i));
        entries(v.items[i], where, dtype, t, index);
        index.pop_back();
      }
      return;
    }
    const std::string entry = where + (depth == 0 ? "" : " entry " + index_string(index));
    if (v.kind == JsonNode::Kind::array) fail(entry, "ragged: a list where the first at its depth is a number");
    if (dtype == ConstantSpec::Dtype::integer) {
      if (v.kind != JsonNode::Kind::integer)
        fail(entry, std::string("an int constant's entries are JSON integers, not ") + kind_name(v.kind) +
                        (v.kind == JsonNode::Kind::number || v.kind == JsonNode::Kind::string ? " " + v.text : ""));
      t.entries.push_back(v.text);
      return;
    }
    if (dtype == ConstantSpec::Dtype::boolean) {
      if (v.kind != JsonNode::Kind::boolean)
        fail(entry, std::string("a bool constant's entries are true or false, not ") + kind_name(v.kind));
      t.entries.push_back(v.text);
      return;
    }
    if (v.kind == JsonNode::Kind::string) {
      if (!is_decimal_text(v.text)) fail(entry, "'" + v.text + "' is not a decimal number, inf, -inf or nan");
    } else if (v.kind == JsonNode::Kind::array) {
      fail(entry, "ragged: a list where the first at its depth is a number");
    } else if (v.kind != JsonNode::Kind::number && v.kind != JsonNode::Kind::integer) {
      fail(entry, std::string("an entry is a number or a decimal string, not ") + kind_name(v.kind));
    }
    t.entries.push_back(v.text);
  }

public:
  GraphSpec spec(const JsonNode& root) {
    GraphSpec g;
    g.file = file_;
    if (root.kind != JsonNode::Kind::object)
      fail("", std::string("a graph file is one JSON object, not ") + kind_name(root.kind));
    if (!root.duplicate_key.empty()) fail("", "key '" + root.duplicate_key + "' appears twice");
    const JsonNode *inputs = nullptr, *nodes = nullptr, *output = nullptr, *constants = nullptr;
    for (const auto& [key, value] : root.members) {
      if (key == "inputs")
        inputs = &value;
      else if (key == "constants")
        constants = &value;
      else if (key == "nodes")
        nodes = &value;
      else if (key == "output")
        output = &value;
      else if (key == "description") {
        if (value.kind != JsonNode::Kind::string) fail("description", "must be a string");
        g.description = value.text;
      } else {
        fail("", "unknown key '" + key +
                     "' (a graph file has inputs, nodes, output and optionally constants and description)");
      }
    }
    if (!inputs) fail("", "missing key 'inputs'");
    if (!nodes) fail("", "missing key 'nodes'");
    if (!output) fail("", "missing key 'output'");

    if (inputs->kind != JsonNode::Kind::object)
      fail("inputs", std::string("must be an object of named tensors, not ") + kind_name(inputs->kind));
    if (!inputs->duplicate_key.empty()) fail("inputs", "input '" + inputs->duplicate_key + "' is defined twice");
    if (inputs->members.empty()) fail("inputs", "a graph needs at least one input");
    for (const auto& [name, value] : inputs->members) {
      declare(name, "input '" + name + "'");
      g.inputs.emplace_back(name, tensor(value, "input '" + name + "'"));
    }
    if (constants) read_constants(*constants, g);

    if (nodes->kind != JsonNode::Kind::array)
      fail("nodes", std::string("must be a list, not ") + kind_name(nodes->kind));
    for (std::size_t k = 0; k < nodes->items.size(); ++k)
      g.nodes.push_back(node(nodes->items[k], k));

    if (output->kind != JsonNode::Kind::string) fail("output", "must be the name of a node or input");
    if (!defined_.count(output->text)) fail("output", "'" + output->text + "' is not an input or a node");
    if (dtypes_.count(output->text))
      fail("output", "'" + output->text + "' is a constant; the output is a node or an input");
    g.output = output->text;
    return g;
  }

private:
  long integer(const JsonNode& v, const std::string& where, const std::string& what) {
    if (v.kind != JsonNode::Kind::integer) fail(where, what + " must be an integer");
    try {
      return std::stol(v.text);
    } catch (const std::exception&) {
      fail(where, what + " " + v.text + " is out of range");
    }
  }

  /// "constants": {name: {"dtype": "real" | "int" | "bool", "value": tensor}}.
  void read_constants(const JsonNode& constants, GraphSpec& g) {
    if (constants.kind != JsonNode::Kind::object)
      fail("constants", std::string("must be an object of named constants, not ") + kind_name(constants.kind));
    if (!constants.duplicate_key.empty())
      fail("constants", "constant '" + constants.duplicate_key + "' is defined twice");
    for (const auto& [name, value] : constants.members) {
      const std::string where = "constant '" + name + "'";
      declare(name, where);
      if (value.kind != JsonNode::Kind::object)
        fail(where, std::string("a constant is {\"dtype\": \"real\" | \"int\" | \"bool\", \"value\": a tensor}, not ") +
                        kind_name(value.kind));
      if (!value.duplicate_key.empty()) fail(where, "key '" + value.duplicate_key + "' appears twice");
      const JsonNode *dtype = nullptr, *tensor_value = nullptr;
      for (const auto& member : value.members) {
        if (member.key == "dtype")
          dtype = &member.value;
        else if (member.key == "value")
          tensor_value = &member.value;
        else
          fail(where, "unknown key '" + member.key + "' (a constant has dtype and value)");
      }
      if (!dtype || !tensor_value) fail(where, std::string("needs \"") + (dtype ? "value" : "dtype") + "\"");
      ConstantSpec c;
      c.name = name;
      if (dtype->kind == JsonNode::Kind::string && dtype->text == "real")
        c.dtype = ConstantSpec::Dtype::real;
      else if (dtype->kind == JsonNode::Kind::string && dtype->text == "int")
        c.dtype = ConstantSpec::Dtype::integer;
      else if (dtype->kind == JsonNode::Kind::string && dtype->text == "bool")
        c.dtype = ConstantSpec::Dtype::boolean;
      else
        fail(where, "\"dtype\" must be \"real\", \"int\" or \"bool\"");
      c.value = tensor(*tensor_value, where, c.dtype);
      if (c.dtype == ConstantSpec::Dtype::integer)
        for (std::size_t e = 0; e < c.value.entries.size(); ++e)
          try {
            (void)std::stol(c.value.entries[e]);
          } catch (const std::exception&) {
            fail(where, "entry " + c.value.entries[e] + " is out of range");
          }
      dtypes_[name] = c.dtype;
      g.constants.push_back(std::move(c));
    }
  }

  void declare(const std::string& name, const std::string& where) {
    if (name.empty()) fail(where, "names must not be empty");
    if (!defined_.insert(name).second) fail(where, "the name '" + name + "' is already used (names are unique)");
  }

  NodeSpec node(const JsonNode& v, std::size_t k) {
    std::string where = "node " + std::to_string(k);
    if (v.kind != JsonNode::Kind::object) fail(where, std::string("a node is an object, not ") + kind_name(v.kind));
    if (!v.duplicate_key.empty()) fail(where, "key '" + v.duplicate_key + "' appears twice");
    NodeSpec n;
    const JsonNode *name = nullptr, *op = nullptr, *args = nullptr;
    std::map<std::string, const JsonNode*> extra; // the op's own keys
    for (const auto& [key, value] : v.members) {
      if (key == "name")
        name = &value;
      else if (key == "op")
        op = &value;
      else if (key == "args")
        args = &value;
      else if (is_parameter_of_some_op(key))
        extra[key] = &value;
      else
        fail(where, "unknown key '" + key + "'");
    }
    if (!name || name->kind != JsonNode::Kind::string) fail(where, "needs a \"name\" string");
    n.name = name->text;
    where = "node '" + n.name + "'";
    if (!op || op->kind != JsonNode::Kind::string) fail(where, "needs an \"op\" string");
    n.op = op->text;
    n.info = BuiltinOps::find(n.op);
    if (n.info == nullptr) fail(where, "unknown op '" + n.op + "' (ops: " + graph_file_op_list() + ")");
    where += " (" + n.op + ")";
    const auto& consts = n.info->const_operands;
    const std::size_t arity =
        n.info->arity + static_cast<std::size_t>(std::count_if(consts.begin(), consts.end(),
                                                               [](const ConstOperand& c) { return !c.optional; }));
    const std::size_t most = max_operands(*n.info) + consts.size();
    if (!args || args->kind != JsonNode::Kind::array) fail(where, "needs \"args\", a list of names");
    if (n.info->variadic && args->items.size() < arity)
      fail(where, "takes " + (arity == 1 ? std::string("one") : std::to_string(arity)) + " or more arguments, got " +
                      std::to_string(args->items.size()));
    if (!n.info->variadic && (args->items.size() < arity || args->items.size() > most))
      fail(where, "takes " + std::to_string(arity) +
                      (most > arity ? (most > arity + 1 ? " to " : " or ") + std::to_string(most) : "") + " argument" +
                      (most == 1 ? "" : "s") + ", got " + std::to_string(args->items.size()));
    for (std::size_t position = 0; position < args->items.size(); ++position) {
      const JsonNode& a = args->items[position];
      if (a.kind != JsonNode::Kind::string) fail(where, "arguments are names (strings)");
      if (!defined_.count(a.text))
        fail(where, "argument '" + a.text + "' is not an input or an earlier node (a node may use only those)");
      const auto constant =
          std::find_if(consts.begin(), consts.end(), [&](const ConstOperand& c) { return c.position == position; });
      const auto dtype = dtypes_.find(a.text);
      if (constant != consts.end()) {
        const ConstantSpec::Dtype wanted =
            constant->boolean ? ConstantSpec::Dtype::boolean : ConstantSpec::Dtype::integer;
        if (dtype == dtypes_.end() || dtype->second != wanted)
          fail(where, "argument '" + a.text + "' is " +
                          (dtype == dtypes_.end() ? std::string("not a constant")
                                                  : with_article(dtype->second) + " constant") +
                          "; " + n.op + "'s " + std::string(constant->param) + " is " +
                          (constant->boolean ? "a bool" : "an int") + " constant");
        n.constant_args.emplace_back(constant->param, a.text);
      } else {
        if (dtype != dtypes_.end() && dtype->second != ConstantSpec::Dtype::real)
          fail(where, "argument '" + a.text + "' is " + with_article(dtype->second) + " constant, where " + n.op +
                          " takes a real operand");
        n.args.push_back(a.text);
      }
    }
    const auto& specs = n.info->params;
    for (const auto& given : extra) { // not a structured binding: clang 14 cannot capture one in a lambda
      const std::string& key = given.first;
      if (std::none_of(specs.begin(), specs.end(), [&](const ParamSpec& p) { return p.in_files && p.name == key; }))
        fail(where, "has \"" + key + "\", which " + n.op + " does not take");
    }
    for (const ParamSpec& p : specs) {
      if (p.type == ParamType::constant) continue; // an operand among the args, checked with them above
      const auto given = p.in_files ? extra.find(std::string(p.name)) : extra.end();
      if (given != extra.end()) {
        n.params.push_back(parameter(p, *given->second, where));
        continue;
      }
      if (p.required()) fail(where, "needs \"" + std::string(p.name) + "\"");
      if (p.optional) continue; // absent, and absence means something (no default)
      JsonNode text;            // the default, as a file would write it
      text.kind = p.type == ParamType::number || p.type == ParamType::choice ? JsonNode::Kind::string
                  : p.type == ParamType::boolean                             ? JsonNode::Kind::boolean
                                                                             : JsonNode::Kind::integer;
      text.text = std::string(p.default_value);
      n.params.push_back(parameter(p, text, where));
    }
    declare(n.name, where);
    return n;
  }

  /// One parameter's value, checked against its type.
  ParamText parameter(const ParamSpec& spec, const JsonNode& v, const std::string& where) {
    ParamText t;
    t.name = spec.name;
    t.type = spec.type;
    const std::string key = "\"" + std::string(spec.name) + "\"";
    switch (spec.type) {
    case ParamType::constant: // an operand among the args (in_files is false): never a key
      fail(where, key + " is an operand, given among the args");
    case ParamType::number:
      if (v.kind == JsonNode::Kind::string ? !is_decimal_text(v.text)
                                           : v.kind != JsonNode::Kind::number && v.kind != JsonNode::Kind::integer)
        fail(where, key + " must be a number or a decimal string");
      if (v.text == "nan") fail(where, key + " must not be nan");
      t.number = v.text;
      break;
    case ParamType::integer:
      t.integer = integer(v, where, key);
      break;
    case ParamType::indices:
      if (v.kind != JsonNode::Kind::array || v.items.empty())
        fail(where, key + " must be a non-empty list of indices (integers >= 0)");
      for (const JsonNode& e : v.items) {
        const long index = integer(e, where, key + " entries");
        if (index < 0) fail(where, key + " entries are indices >= 0, not " + e.text);
        t.indices.push_back(index);
      }
      break;
    case ParamType::dims:
      if (v.kind == JsonNode::Kind::integer) {
        t.indices.push_back(integer(v, where, key));
        break;
      }
      if (spec.list_length > 0 && (v.kind != JsonNode::Kind::array || v.items.size() != spec.list_length))
        fail(where, key + " must be an integer or a list of " + std::to_string(spec.list_length) + " integer" +
                        (spec.list_length == 1 ? "" : "s"));
      if (v.kind != JsonNode::Kind::array || v.items.empty())
        fail(where, key + " must be an integer or a non-empty list of integers (dims)");
      for (const JsonNode& e : v.items)
        t.indices.push_back(integer(e, where, key + " entries"));
      break;
    case ParamType::integer_list:
      if (v.kind != JsonNode::Kind::array) fail(where, key + " must be a list of integers (sizes)");
      for (const JsonNode& e : v.items)
        t.indices.push_back(integer(e, where, key + " entries"));
      break;
    case ParamType::boolean:
      if (v.kind != JsonNode::Kind::boolean) fail(where, key + " must be true or false");
      t.boolean = v.text == "true";
      break;
    case ParamType::choice: {
      std::string list;
      for (std::string_view c : spec.choices)
        list += (list.empty() ? "\"" : ", \"") + std::string(c) + "\"";
      if (v.kind != JsonNode::Kind::string ||
          std::find(spec.choices.begin(), spec.choices.end(), v.text) == spec.choices.end())
        fail(where, key + " must be one of " + list);
      t.choice = v.text;
      break;
    }
    case ParamType::flags:
      if (v.kind != JsonNode::Kind::array || v.items.empty())
        fail(where, key + " must be a non-empty list of flags, 1 or 0");
      for (const JsonNode& e : v.items) {
        if (e.kind != JsonNode::Kind::integer || (e.text != "0" && e.text != "1"))
          fail(where, key + " entries must be 1 or 0, not " + e.text);
        t.flags.push_back(e.text == "1");
      }
      break;
    }
    return t;
  }

  std::string file_;
  std::set<std::string> defined_;
  std::map<std::string, ConstantSpec::Dtype> dtypes_; ///< the constants, by name
};

} // namespace detail

/// JSON text as a tree that keeps each number's text; GraphFileError naming `file` when it is not JSON.
inline detail::JsonNode parse_json_tree(const std::string& text, const std::string& file) {
  detail::TreeBuilder builder;
  const bool ok = nlohmann::json::sax_parse(text, &builder, nlohmann::json::input_format_t::json, true);
  if (!ok || !builder.error.empty())
    throw GraphFileError(file + ": " + (builder.error.empty() ? "malformed JSON" : builder.error));
  return std::move(builder.root);
}

/// Parses graph-file text; `file` names it in messages.
inline GraphSpec parse_graph(const std::string& text, const std::string& file) {
  return detail::SpecReader(file).spec(parse_json_tree(text, file));
}

/// The whole text of the JSON file at `path` (at most 64 MiB; `what` names the kind of file in messages).
inline std::string read_json_text(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw GraphFileError(path + ": cannot open the file");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  constexpr std::streamoff limit = 64LL << 20;
  if (size < 0) throw GraphFileError(path + ": cannot read the file");
  if (size > limit) throw GraphFileError(path + ": the file is larger than the 64 MiB " + what + " may be");
  in.seekg(0);
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), size);
  if (!in) throw GraphFileError(path + ": cannot read the file");
  return text;
}

/// Reads and parses a graph file (at most 64 MiB).
inline GraphSpec read_graph_file(const std::string& path) {
  return parse_graph(read_json_text(path, "a graph file"), path);
}

} // namespace tapegrad
