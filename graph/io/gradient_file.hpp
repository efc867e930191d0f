#pragma once
// Gradient files: gradients computed elsewhere (another framework, a hand-written backward, a low-precision
// kernel), for `tapegrad check FILE --gradients G.json`.
//
//   {"gradients": {"X": [[0.25, "-1.5e-3"], ...], "Wq": [[...]], ...}}
//
// the shape `tapegrad grad --format json` writes, so a file it wrote is read as is: "value", the output's value
// where the gradients were taken, is read when present (the check compares it, so gradients of another function
// or at another point are caught); its other keys, such as "values" or "precision", are ignored. Entries are JSON
// numbers or decimal strings, read as the exact decimal they spell, as graph files' are; "nan" is allowed (the check
// then fails on it). Which names and shapes fit is for the graph to say (app/given.cpp): this header only reads.

#include "graph_file.hpp"

#include <string>
#include <utility>
#include <vector>

namespace tapegrad {

struct GradientSpec {
  std::string file;                                          ///< as named in messages
  std::vector<std::pair<std::string, TensorText>> gradients; ///< in file order
  std::string value; ///< the output's value where the gradients were taken ("value"), when given; else empty
};

/// Parses gradient-file text; `file` names it in messages. GraphFileError for anything malformed.
inline GradientSpec parse_gradient_file(const std::string& text, const std::string& file) {
  const detail::JsonNode root = parse_json_tree(text, file);
  const detail::SpecReader reader(file);
  if (root.kind != detail::JsonNode::Kind::object)
    reader.fail("", std::string("a gradient file is one JSON object, not ") + detail::kind_name(root.kind));
  if (!root.duplicate_key.empty()) reader.fail("", "key '" + root.duplicate_key + "' appears twice");
  const detail::JsonNode* gradients = nullptr;
  GradientSpec spec;
  spec.file = file;
  for (const auto& [key, value] : root.members)
    if (key == "gradients") {
      gradients = &value;
    } else if (key == "value") {
      const bool number = value.kind == detail::JsonNode::Kind::number || value.kind == detail::JsonNode::Kind::integer;
      if (!number && !(value.kind == detail::JsonNode::Kind::string && detail::is_decimal_text(value.text)))
        reader.fail("value", "the output's value is a number or a decimal string");
      spec.value = value.text;
    }
  if (gradients == nullptr)
    reader.fail("", "missing key 'gradients' (an object of named matrices, as 'tapegrad grad --format json' writes)");
  if (gradients->kind != detail::JsonNode::Kind::object)
    reader.fail("gradients",
                std::string("must be an object of named matrices, not ") + detail::kind_name(gradients->kind));
  if (!gradients->duplicate_key.empty())
    reader.fail("gradients", "the gradient of '" + gradients->duplicate_key + "' is given twice");
  if (gradients->members.empty()) reader.fail("gradients", "no gradient is given");
  for (const auto& [name, value] : gradients->members)
    spec.gradients.emplace_back(name, reader.tensor(value, "gradient of '" + name + "'"));
  return spec;
}

/// Reads and parses a gradient file (at most 64 MiB).
inline GradientSpec read_gradient_file(const std::string& path) {
  return parse_gradient_file(read_json_text(path, "a gradient file"), path);
}

} // namespace tapegrad
