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

#include "../autodiff/error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
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

struct NodeSpec {
  std::string name, op;
  std::vector<std::string> args;
  std::optional<std::string> factor; ///< scale
  long offset = 0;                   ///< causal_mask
  long begin = 0, count = 0;         ///< slice_rows, slice_cols
  std::vector<bool> keys;            ///< padding_mask: one flag per key, false = padding
  std::vector<long> targets;         ///< cross_entropy: one class index per row
};

struct GraphSpec {
  std::string file; ///< as named in messages
  std::string description;
  std::vector<std::pair<std::string, MatrixText>> inputs; ///< in file order
  std::vector<NodeSpec> nodes;                            ///< in file order
  std::string output;
};

/// One op of the format: its number of arguments (0: one or more) and the extra keys it takes.
struct GraphFileOp {
  std::size_t args;
  std::vector<std::string> keys; ///< required, except causal_mask's "offset" (default 0)
};

/// The ops of the format.
inline const std::map<std::string, GraphFileOp>& graph_file_ops() {
  static const std::map<std::string, GraphFileOp> ops{{"matmul", {2, {}}},
                                                      {"transpose", {1, {}}},
                                                      {"scale", {1, {"factor"}}},
                                                      {"softmax", {1, {}}},
                                                      {"sum", {1, {}}},
                                                      {"add", {2, {}}},
                                                      {"sub", {2, {}}},
                                                      {"mul", {2, {}}},
                                                      {"exp", {1, {}}},
                                                      {"log", {1, {}}},
                                                      {"causal_mask", {1, {"offset"}}},
                                                      {"padding_mask", {1, {"keys"}}},
                                                      {"slice_rows", {1, {"begin", "count"}}},
                                                      {"slice_cols", {1, {"begin", "count"}}},
                                                      {"concat_cols", {0, {}}},
                                                      {"cross_entropy", {1, {"targets"}}}};
  return ops;
}

/// "matmul, transpose, ...": the ops, for messages.
inline std::string graph_file_op_list() {
  std::string list;
  for (const auto& [name, op] : graph_file_ops())
    list += (list.empty() ? "" : ", ") + name;
  return list;
}

namespace detail {

struct JsonMember;

/// A JSON value with each number's original text kept.
struct JsonNode {
  enum class Kind { null, boolean, number, integer, string, array, object } kind = Kind::null;
  std::string text; ///< number: as written; string: the string; boolean: "true"/"false"
  std::vector<JsonNode> items;
  std::vector<JsonMember> members; // a vector of an incomplete type is fine (C++17); a std::pair of one is not
  std::string duplicate_key;       ///< set when an object repeats a key
};

/// One "key": value of an object.
struct JsonMember {
  std::string key;
  JsonNode value;
};

/// Builds a JsonNode tree from nlohmann's SAX events; refuses nesting deeper than max_depth (a deep
/// document would otherwise exhaust the stack when the tree is destroyed).
class TreeBuilder : public nlohmann::json_sax<nlohmann::json> {
public:
  static constexpr std::size_t max_depth = 64;
  JsonNode root;
  std::string error;

  bool null() override { return put({JsonNode::Kind::null, "null", {}, {}, {}}); }
  bool boolean(bool v) override { return put({JsonNode::Kind::boolean, v ? "true" : "false", {}, {}, {}}); }
  bool number_integer(number_integer_t v) override {
    return put({JsonNode::Kind::integer, std::to_string(v), {}, {}, {}});
  }
  bool number_unsigned(number_unsigned_t v) override {
    return put({JsonNode::Kind::integer, std::to_string(v), {}, {}, {}});
  }
  bool number_float(number_float_t, const string_t& s) override { return put({JsonNode::Kind::number, s, {}, {}, {}}); }
  bool string(string_t& s) override { return put({JsonNode::Kind::string, s, {}, {}, {}}); }
  bool binary(binary_t&) override { return fail("binary values are not JSON text"); }
  bool start_object(std::size_t) override { return open(JsonNode::Kind::object); }
  bool key(string_t& k) override {
    JsonNode& obj = *stack_.back();
    for (const auto& [name, value] : obj.members)
      if (name == k && obj.duplicate_key.empty()) obj.duplicate_key = k;
    obj.members.push_back(JsonMember{k, JsonNode{}});
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(JsonNode::Kind::array); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    std::string what = ex.what(); // "[json.exception.parse_error.101] parse error at line 3, column 7: ..."
    const std::size_t tag = what.find("] ");
    if (what.rfind("[json.exception.", 0) == 0 && tag != std::string::npos) what = what.substr(tag + 2);
    return fail("malformed JSON: " + what);
  }

private:
  std::vector<JsonNode*> stack_;
  bool fail(std::string message) {
    if (error.empty()) error = std::move(message);
    return false;
  }
  // Places a finished value: as the root, into the open array, or as the value of the last key.
  JsonNode* place(JsonNode v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    JsonNode& parent = *stack_.back();
    if (parent.kind == JsonNode::Kind::array) {
      parent.items.push_back(std::move(v));
      return &parent.items.back();
    }
    parent.members.back().value = std::move(v);
    return &parent.members.back().value;
  }
  bool put(JsonNode v) {
    place(std::move(v));
    return true;
  }
  bool open(JsonNode::Kind kind) {
    if (stack_.size() >= max_depth) return fail("JSON nested deeper than " + std::to_string(max_depth) + " levels");
    JsonNode v;
    v.kind = kind;
    stack_.push_back(place(std::move(v)));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }
};

inline const char* kind_name(JsonNode::Kind k) {
  switch (k) {
  case JsonNode::Kind::null:
    return "null";
  case JsonNode::Kind::boolean:
    return "a boolean";
  case JsonNode::Kind::number:
  case JsonNode::Kind::integer:
    return "a number";
  case JsonNode::Kind::string:
    return "a string";
  case JsonNode::Kind::array:
    return "an array";
  case JsonNode::Kind::object:
    return "an object";
  }
  return "a value";
}

/// A decimal as the format allows it in a string: optional sign, digits with an optional point, optional
/// exponent; or inf, -inf, nan.
inline bool is_decimal_text(const std::string& s) {
  static const std::regex decimal(R"([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)");
  return s == "inf" || s == "-inf" || s == "+inf" || s == "nan" || std::regex_match(s, decimal);
}

class SpecReader {
public:
  explicit SpecReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& problem) const {
    throw GraphFileError(file_ + ": " + (where.empty() ? "" : where + ": ") + problem);
  }

  MatrixText matrix(const JsonNode& v, const std::string& where) const {
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
        if (e.text == "nan") fail(entry, "NaN input: a graph's inputs must be numbers (inf and -inf are allowed)");
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
      else if (key == "factor" || key == "offset" || key == "begin" || key == "count" || key == "keys" ||
               key == "targets")
        extra[key] = &value;
      else
        fail(where, "unknown key '" + key + "'");
    }
    if (!name || name->kind != JsonNode::Kind::string) fail(where, "needs a \"name\" string");
    n.name = name->text;
    where = "node '" + n.name + "'";
    if (!op || op->kind != JsonNode::Kind::string) fail(where, "needs an \"op\" string");
    n.op = op->text;
    const auto known = graph_file_ops().find(n.op);
    if (known == graph_file_ops().end()) fail(where, "unknown op '" + n.op + "' (ops: " + graph_file_op_list() + ")");
    where += " (" + n.op + ")";
    const std::size_t arity = known->second.args;
    if (!args || args->kind != JsonNode::Kind::array) fail(where, "needs \"args\", a list of names");
    if (arity == 0 && args->items.empty()) fail(where, "takes one or more arguments, got 0");
    if (arity > 0 && args->items.size() != arity)
      fail(where, "takes " + std::to_string(arity) + " argument" + (arity == 1 ? "" : "s") + ", got " +
                      std::to_string(args->items.size()));
    for (const JsonNode& a : args->items) {
      if (a.kind != JsonNode::Kind::string) fail(where, "arguments are names (strings)");
      if (!defined_.count(a.text))
        fail(where, "argument '" + a.text + "' is not an input or an earlier node (a node may use only those)");
      n.args.push_back(a.text);
    }
    const std::vector<std::string>& takes = known->second.keys;
    for (const auto& [key, value] : extra)
      if (std::find(takes.begin(), takes.end(), key) == takes.end())
        fail(where, "has \"" + key + "\", which " + n.op + " does not take");
    for (const std::string& key : takes)
      if (!extra.count(key) && key != "offset") fail(where, "needs \"" + key + "\"");
    if (const auto f = extra.find("factor"); f != extra.end()) {
      const JsonNode* factor = f->second;
      if (factor->kind == JsonNode::Kind::string
              ? !is_decimal_text(factor->text)
              : factor->kind != JsonNode::Kind::number && factor->kind != JsonNode::Kind::integer)
        fail(where, "\"factor\" must be a number or a decimal string");
      if (factor->text == "nan") fail(where, "\"factor\" must not be nan");
      n.factor = factor->text;
    }
    if (extra.count("offset")) n.offset = integer(*extra["offset"], where, "\"offset\"");
    if (extra.count("begin")) n.begin = integer(*extra["begin"], where, "\"begin\"");
    if (extra.count("count")) n.count = integer(*extra["count"], where, "\"count\"");
    if (const auto f = extra.find("keys"); f != extra.end()) {
      if (f->second->kind != JsonNode::Kind::array || f->second->items.empty())
        fail(where, "\"keys\" must be a non-empty list of flags, 1 (a real key) or 0 (padding)");
      for (const JsonNode& flag : f->second->items) {
        if (flag.kind != JsonNode::Kind::integer || (flag.text != "0" && flag.text != "1"))
          fail(where, "\"keys\" entries must be 1 (a real key) or 0 (padding), not " + flag.text);
        n.keys.push_back(flag.text == "1");
      }
    }
    if (const auto f = extra.find("targets"); f != extra.end()) {
      if (f->second->kind != JsonNode::Kind::array || f->second->items.empty())
        fail(where, "\"targets\" must be a non-empty list of class indices (integers >= 0)");
      for (const JsonNode& t : f->second->items) {
        const long target = integer(t, where, "\"targets\" entries");
        if (target < 0) fail(where, "\"targets\" entries are class indices >= 0, not " + t.text);
        n.targets.push_back(target);
      }
    }
    declare(n.name, where);
    return n;
  }

  std::string file_;
  std::set<std::string> defined_;
};

} // namespace detail

/// Parses graph-file text; `file` names it in messages.
inline GraphSpec parse_graph(const std::string& text, const std::string& file) {
  detail::TreeBuilder builder;
  const bool ok = nlohmann::json::sax_parse(text, &builder, nlohmann::json::input_format_t::json, true);
  if (!ok || !builder.error.empty())
    throw GraphFileError(file + ": " + (builder.error.empty() ? "malformed JSON" : builder.error));
  return detail::SpecReader(file).spec(builder.root);
}

/// Reads and parses a graph file (at most 64 MiB).
inline GraphSpec read_graph_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw GraphFileError(path + ": cannot open the file");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  constexpr std::streamoff limit = 64LL << 20;
  if (size < 0) throw GraphFileError(path + ": cannot read the file");
  if (size > limit) throw GraphFileError(path + ": the file is larger than the 64 MiB a graph file may be");
  in.seekg(0);
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), size);
  if (!in) throw GraphFileError(path + ": cannot read the file");
  return parse_graph(text, path);
}

} // namespace tapegrad
