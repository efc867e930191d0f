// `tapegrad merge`: the partial reports of `tapegrad check --shard i/n` (i = 0 .. n-1, each run anywhere)
// combined into the report one whole run prints: checks in the order of their units of work, the warnings
// (every shard computes them), and the verdict over all checks.
#include "commands.hpp"

#include <tapegrad/autodiff/error.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

namespace tapegrad::app {

CLI::App* add_merge_command(CLI::App& cli, MergeCommand& cmd) {
  CLI::App* sub = cli.add_subcommand(
      "merge", "Combine the partial JSON reports of 'tapegrad check --format json --shard i/n' (every i from 0 to "
               "n-1) into the whole report, as one run would print it. Exit 0 when every check passes, 1 when one "
               "fails.");
  sub->add_option("PARTIAL", cmd.files, "The partial reports, in any order")->required();
  return sub;
}

int run_merge_command(const MergeCommand& cmd, std::ostream& out) {
  std::map<long, nlohmann::json> shards; // by index
  long count = -1;
  for (const std::string& file : cmd.files) {
    std::ifstream in(file);
    if (!in) throw UsageError("merge: " + file + ": cannot open the file");
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw UsageError("merge: " + file + ": not a JSON report (" + std::string(e.what()) + ")");
    }
    const bool partial = doc.is_object() && doc.contains("shard") && doc["shard"].is_object() &&
                         doc["shard"].value("index", -1L) >= 0 && doc["shard"].value("count", 0L) > 1 &&
                         doc.contains("checks") && doc["checks"].is_array() && doc.contains("warnings");
    if (!partial)
      throw UsageError("merge: " + file + ": not a partial report of 'tapegrad check --format json --shard i/n'");
    const long index = doc["shard"]["index"], n = doc["shard"]["count"];
    if (count >= 0 && n != count)
      throw UsageError("merge: " + file + ": shard " + std::to_string(index) + " of " + std::to_string(n) +
                       ", but the others are of " + std::to_string(count));
    count = n;
    if (!shards.emplace(index, std::move(doc)).second)
      throw UsageError("merge: " + file + ": shard " + std::to_string(index) + " is given twice");
  }
  if (static_cast<long>(shards.size()) != count) {
    std::string missing;
    for (long i = 0; i < count; ++i)
      if (!shards.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    throw UsageError("merge: shards " + missing + " of " + std::to_string(count) + " are missing");
  }
  nlohmann::json checks = nlohmann::json::array();
  for (auto& [index, doc] : shards)
    for (auto& c : doc["checks"])
      checks.push_back(std::move(c));
  std::stable_sort(checks.begin(), checks.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a.value("task", 0UL) < b.value("task", 0UL);
  });
  const bool passed = !checks.empty() && std::all_of(checks.begin(), checks.end(),
                                                     [](const nlohmann::json& c) { return c.value("passed", false); });
  const nlohmann::json doc{
      {"verdict", passed ? "pass" : "fail"}, {"checks", checks}, {"warnings", shards.at(0)["warnings"]}};
  out << doc.dump(2) << "\n";
  return passed ? 0 : 1;
}

} // namespace tapegrad::app
