#pragma once
// A JSON document as a tree that keeps every number's original text (nlohmann-json's SAX interface hands it
// over), so a graph file's decimals can be read exactly. Knows nothing of graphs.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace tapegrad {

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
/// exponent; or inf, -inf, nan. In the notation of a regular expression, [+-]?(D+.?D*|.D+)([eE][+-]?D+)?
/// with D a digit, scanned by hand (std::regex cost every file that includes this header seconds of compile).
inline bool is_decimal_text(const std::string& s) {
  if (s == "inf" || s == "-inf" || s == "+inf" || s == "nan") return true;
  std::size_t k = 0;
  const auto digits = [&] {
    const std::size_t from = k;
    while (k < s.size() && s[k] >= '0' && s[k] <= '9')
      ++k;
    return k - from;
  };
  if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
  std::size_t mantissa = digits();
  if (k < s.size() && s[k] == '.') {
    ++k;
    mantissa += digits();
  }
  if (mantissa == 0) return false; // neither D+ before the point nor D+ after it
  if (k < s.size() && (s[k] == 'e' || s[k] == 'E')) {
    ++k;
    if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
    if (digits() == 0) return false;
  }
  return k == s.size();
}

} // namespace detail

} // namespace tapegrad
