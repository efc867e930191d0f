#pragma once
// The fuzzer's dictionary: the words of the graph-file format itself (tests/fuzz/graph_file.dict, which holds no
// op) followed by every op name and every file parameter key of the op list (ops/ops.hpp), so a new op reaches
// the fuzzer without a line written for it. scripts/fuzz writes it with the fuzz_dictionary program.
#include <tapegrad/ops/ops.hpp>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tapegrad::fuzz {

/// A libFuzzer dictionary entry for a JSON string: the word in JSON quotes, inside the entry's own quotes.
inline std::string quoted_entry(std::string_view word) { return "\"\\\"" + std::string(word) + "\\\"\""; }

/// The entries the op list adds: each op's name and each parameter key a graph file may write, once each, in
/// the op list's order.
inline std::vector<std::string> op_dictionary_entries() {
  std::vector<std::string> entries;
  std::set<std::string> seen;
  const auto add = [&](std::string_view word) {
    std::string entry = quoted_entry(word);
    if (seen.insert(entry).second) entries.push_back(std::move(entry));
  };
  for (const OpInfo* op : BuiltinOps::infos) {
    add(op->name);
    for (const ParamSpec& p : op->params)
      if (p.in_files) {
        add(p.name);
        for (std::string_view c : p.choices)
          add(c);
      }
  }
  return entries;
}

} // namespace tapegrad::fuzz
