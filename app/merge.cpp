// `tapegrad merge`: the partial reports of `tapegrad check --shard i/n` (i = 0 .. n-1, each run anywhere)
// combined into the report one whole run prints: checks in the order of their units of work, the warnings
// (every shard computes them), and the verdict over all checks.
#include "commands.hpp"
#include "report.hpp"

#include <tapegrad/autodiff/error.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

namespace tapegrad::app {

int run_merge_command(const MergeCommand& cmd, std::ostream& out) {
  std::map<long, nlohmann::json> shards; // by index
  std::map<long, std::string> files;     // by index: where each shard came from
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
    const auto integer_at = [&](const char* key) { // -1 unless shard.key is an integer
      const nlohmann::json& shard = doc["shard"];
      return shard.contains(key) && shard[key].is_number_integer() ? shard[key].get<long>() : -1L;
    };
    const bool partial = doc.is_object() && doc.contains("shard") && doc["shard"].is_object() &&
                         integer_at("index") >= 0 && integer_at("count") > 1 &&
                         integer_at("index") < integer_at("count") && doc.contains("checks") &&
                         doc["checks"].is_array() && doc.contains("warnings") && doc["warnings"].is_array();
    if (!partial)
      throw UsageError("merge: " + file + ": not a partial report of 'tapegrad check --format json --shard i/n'");
    const long index = doc["shard"]["index"], n = doc["shard"]["count"];
    if (count >= 0 && n != count)
      throw UsageError("merge: " + file + ": shard " + std::to_string(index) + " of " + std::to_string(n) +
                       ", but the others are of " + std::to_string(count));
    count = n;
    if (!shards.emplace(index, std::move(doc)).second)
      throw UsageError("merge: " + file + ": shard " + std::to_string(index) + " is given twice");
    files[index] = file;
  }
  if (static_cast<long>(shards.size()) != count) {
    std::string missing;
    for (long i = 0; i < count; ++i)
      if (!shards.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    throw UsageError("merge: shards " + missing + " of " + std::to_string(count) + " are missing");
  }
  CheckReport report;
  for (auto& [index, doc] : shards)
    for (const auto& c : doc["checks"])
      report.checks.push_back(check_from_json(c, "merge: " + files[index] + " (shard " + std::to_string(index) + ")"));
  std::stable_sort(report.checks.begin(), report.checks.end(),
                   [](const CheckResult& a, const CheckResult& b) { return a.task < b.task; });
  // Every shard's warnings, each once: most (the saturation guard's) every shard computes; some (a node the
  // per-node check could not replay) only the shard that ran that unit of work.
  for (auto& [index, doc] : shards)
    for (const auto& w : doc["warnings"]) {
      if (!w.is_string()) throw UsageError("merge: shard " + std::to_string(index) + ": a warning is not a string");
      if (std::find(report.warnings.begin(), report.warnings.end(), w.get<std::string>()) == report.warnings.end())
        report.warnings.push_back(w.get<std::string>());
    }
  if (cmd.format == "json") {
    out << report_json(report).dump(2) << "\n";
  } else {
    out << "tapegrad merge: " << count << " partial reports of 'tapegrad check --shard i/" << count
        << "', combined as one run prints them\n";
    print_report(out, report, cmd.verbose);
  }
  return report.passed() ? 0 : 1;
}

} // namespace tapegrad::app
