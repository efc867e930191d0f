#pragma once
// Graph files: a small graph as one JSON object, read without compiling anything.
//
//   {"description": "...", "inputs": {"X": [[1, 0], [0, 1]], ...},
//    "nodes": [{"name": "Q", "op": "matmul", "args": ["X", "WQ"]}, ...], "output": "J"}
//
// Entries are JSON numbers or strings, read as the EXACT decimal they spell (nlohmann-json's SAX interface
// hands over each number's original text) and rounded once into the target precision; strings may be
// "inf", "-inf" or "nan" (a NaN input is refused). Names are unique; a node uses inputs and earlier nodes.
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

/// A matrix as written: rows x cols decimal texts, row by row.
struct MatrixText {
  long rows = 0, cols = 0;
  std::vector<std::string> entries;
};

/// One parameter of a node as the file gives it (or its op's default), checked against its ParamType.
struct ParamText {
  std::string_view name;
  ParamType type = ParamType::number;
  std::string number;        ///< number: the exact decimal text
  long integer = 0;          ///< integer
  std::vector<long> indices; ///< indices
  std::vector<bool> flags;   ///< flags
};

struct NodeSpec {
  std::string name, op;
  const OpInfo* info = nullptr; ///< the op's descriptor (one of BuiltinOps)
  std::vector<std::string> args;
  std::vector<ParamText> params; ///< every parameter of the op, in its descriptor's order, defaults filled in
};

struct GraphSpec {
  std::string file; ///< as named in messages
  std::string description;
  std::vector<std::pair<std::string, MatrixText>> inputs; ///< in file order
  std::vector<NodeSpec> nodes;                            ///< in file order
  std::string output;
};

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

  /// A matrix: a list of rows of numbers or decimal strings. NaN is refused unless `nan_allowed` (a gradient
  /// file may hold one: the check then fails on it).
  MatrixText matrix(const JsonNode& v, const std::string& where, bool nan_allowed = false) const {
    if (v.kind != JsonNode::Kind::array)
      fail(where, std::string("a matrix is a list of rows, not ") + kind_name(v.kind));
    MatrixText m;
    m.rows = static_cast<long>(v.items.size());
    if (m.rows == 0) fail(where, "empty matrix (no rows)");
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      const JsonNode& row = v.items[i];
      const std::string at = where + " row " + std::to_string(i);
      if (row.kind != JsonNode::Kind::array)
        fail(at, std::string("a row is a list of entries, not ") + kind_name(row.kind));
      if (row.items.empty()) fail(at, "empty row");
      if (i == 0)
        m.cols = static_cast<long>(row.items.size());
      else if (static_cast<long>(row.items.size()) != m.cols)
        fail(at, "ragged matrix: this row has " + std::to_string(row.items.size()) + " entries but row 0 has " +
                     std::to_string(m.cols));
      for (std::size_t j = 0; j < row.items.size(); ++j) {
        const JsonNode& e = row.items[j];
        const std::string entry = where + " entry (" + std::to_string(i) + ", " + std::to_string(j) + ")";
        if (e.kind == JsonNode::Kind::string) {
          if (!is_decimal_text(e.text)) fail(entry, "'" + e.text + "' is not a decimal number, inf, -inf or nan");
        } else if (e.kind != JsonNode::Kind::number && e.kind != JsonNode::Kind::integer) {
          fail(entry, std::string("an entry is a number or a decimal string, not ") + kind_name(e.kind));
        }
        if (e.text == "nan" && !nan_allowed)
          fail(entry, "NaN input: a graph's inputs must be numbers (inf and -inf are allowed)");
        m.entries.push_back(e.text);
      }
    }
    return m;
  }

  GraphSpec spec(const JsonNode& root) {
    GraphSpec g;
    g.file = file_;
    if (root.kind != JsonNode::Kind::object)
      fail("", std::string("a graph file is one JSON object, not ") + kind_name(root.kind));
    if (!root.duplicate_key.empty()) fail("", "key '" + root.duplicate_key + "' appears twice");
    const JsonNode *inputs = nullptr, *nodes = nullptr, *output = nullptr;
    for (const auto& [key, value] : root.members) {
      if (key == "inputs")
        inputs = &value;
      else if (key == "nodes")
        nodes = &value;
      else if (key == "output")
        output = &value;
      else if (key == "description") {
        if (value.kind != JsonNode::Kind::string) fail("description", "must be a string");
        g.description = value.text;
      } else {
        fail("", "unknown key '" + key + "' (a graph file has inputs, nodes, output and optionally description)");
      }
    }
    if (!inputs) fail("", "missing key 'inputs'");
    if (!nodes) fail("", "missing key 'nodes'");
    if (!output) fail("", "missing key 'output'");

    if (inputs->kind != JsonNode::Kind::object)
      fail("inputs", std::string("must be an object of named matrices, not ") + kind_name(inputs->kind));
    if (!inputs->duplicate_key.empty()) fail("inputs", "input '" + inputs->duplicate_key + "' is defined twice");
    if (inputs->members.empty()) fail("inputs", "a graph needs at least one input");
    for (const auto& [name, value] : inputs->members) {
      declare(name, "input '" + name + "'");
      g.inputs.emplace_back(name, matrix(value, "input '" + name + "'"));
    }

    if (nodes->kind != JsonNode::Kind::array)
      fail("nodes", std::string("must be a list, not ") + kind_name(nodes->kind));
    for (std::size_t k = 0; k < nodes->items.size(); ++k)
      g.nodes.push_back(node(nodes->items[k], k));

    if (output->kind != JsonNode::Kind::string) fail("output", "must be the name of a node or input");
    if (!defined_.count(output->text)) fail("output", "'" + output->text + "' is not an input or a node");
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
    const std::size_t arity = n.info->arity;
    if (!args || args->kind != JsonNode::Kind::array) fail(where, "needs \"args\", a list of names");
    if (n.info->variadic && args->items.size() < arity)
      fail(where, "takes " + (arity == 1 ? std::string("one") : std::to_string(arity)) + " or more arguments, got " +
                      std::to_string(args->items.size()));
    if (!n.info->variadic && args->items.size() != arity)
      fail(where, "takes " + std::to_string(arity) + " argument" + (arity == 1 ? "" : "s") + ", got " +
                      std::to_string(args->items.size()));
    for (const JsonNode& a : args->items) {
      if (a.kind != JsonNode::Kind::string) fail(where, "arguments are names (strings)");
      if (!defined_.count(a.text))
        fail(where, "argument '" + a.text + "' is not an input or an earlier node (a node may use only those)");
      n.args.push_back(a.text);
    }
    const auto& specs = n.info->params;
    for (const auto& given : extra) { // not a structured binding: clang 14 cannot capture one in a lambda
      const std::string& key = given.first;
      if (std::none_of(specs.begin(), specs.end(), [&](const ParamSpec& p) { return p.in_files && p.name == key; }))
        fail(where, "has \"" + key + "\", which " + n.op + " does not take");
    }
    for (const ParamSpec& p : specs) {
      const auto given = p.in_files ? extra.find(std::string(p.name)) : extra.end();
      if (given != extra.end()) {
        n.params.push_back(parameter(p, *given->second, where));
        continue;
      }
      if (p.required()) fail(where, "needs \"" + std::string(p.name) + "\"");
      if (p.optional) continue; // absent, and absence means something (no default)
      JsonNode text;            // the default, as a file would write it
      text.kind = p.type == ParamType::number ? JsonNode::Kind::string : JsonNode::Kind::integer;
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
