#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>

namespace tapegrad::app {
namespace {

/// A finite double as a JSON number; NaN and infinities (which JSON has not) as null.
nlohmann::json number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }
double number_of(const nlohmann::json& j) {
  return j.is_null() ? std::numeric_limits<double>::quiet_NaN() : j.get<double>();
}

CheckKind kind_from_id(const std::string& id, const std::string& where) {
  for (CheckKind k : check_kinds)
    if (id == kind_id(k)) return k;
  throw UsageError(where + ": unknown kind of check '" + id + "'");
}

std::string shorten(const std::string& number, std::size_t digits) {
  // Keeps the sign, `digits` significant characters and the exponent: enough for a person to compare.
  const std::size_t e = number.find_first_of("eE");
  const std::string mantissa = number.substr(0, e), exponent = e == std::string::npos ? "" : number.substr(e);
  if (mantissa.size() <= digits + 2) return number;
  // Appended in place: GCC 12 at -O2 warns (-Warray-bounds, a false positive) on `a + "..." + b` here.
  std::string shortened = mantissa.substr(0, digits + 2);
  shortened.append("...").append(exponent);
  return shortened;
}

/// "7.2 correct digits", "exact", "no correct digits (NaN)".
std::string digits_text(const CheckResult& c) {
  const double d = correct_digits(c);
  if (std::isnan(d)) return "no correct digits (NaN)";
  if (std::isinf(d)) return "exact";
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << std::max(d, 0.0) << " correct digits";
  return s.str();
}

/// A given gradient's line shows how many of its digits are right (a reader of such a check wants that most).
void print_line(std::ostream& out, const CheckResult& c) {
  const bool given = c.kind == CheckKind::given_vs_reference;
  out << "    " << (c.passed ? "pass" : "FAIL") << "  " << std::left << std::setw(40) << c.name << std::setw(16)
      << c.input << " rel " << c.max_rel_error << (c.passed ? " <= " : " >  ") << c.threshold << "  ("
      << (given ? digits_text(c) + "; " : "") << "abs " << c.max_abs_error << " at " << worst_entry(c) << ": reference "
      << shorten(c.numeric, given ? 40 : 20) << ", " << (given ? "given " : "checked ")
      << shorten(c.analytic, given ? 40 : 20) << "; step " << c.step << (c.note.empty() ? "" : "; " + c.note) << ")\n";
}

} // namespace

nlohmann::json check_json(const CheckResult& c) {
  return {{"graph", c.graph},
          {"kind", kind_id(c.kind)},
          {"other", c.other},
          {"name", c.name},
          {"input", c.input},
          {"node", c.node},
          {"node_name", c.node_name},
          {"engine_precision", c.engine_precision},
          {"reference_precision", c.reference_precision},
          {"max_abs_error", c.max_abs_error},
          {"max_rel_error", c.max_rel_error},
          {"abs_error", number(c.abs_error)},
          {"rel_error", number(c.rel_error)},
          {"worst_index", worst_index(c)},
          {"shape", std::vector<Eigen::Index>(c.shape.begin(), c.shape.end())},
          {"numeric", c.numeric},
          {"analytic", c.analytic},
          {"step", c.step},
          {"threshold", c.threshold},
          {"threshold_value", number(c.threshold_value)},
          {"ratio", number(c.ratio)},
          {"correct_digits", number(correct_digits(c))},
          {"passed", c.passed},
          {"note", c.note},
          {"task", c.task}};
}

CheckResult check_from_json(const nlohmann::json& j, const std::string& where) {
  try {
    CheckResult c;
    c.graph = j.at("graph").get<std::string>();
    c.kind = kind_from_id(j.at("kind").get<std::string>(), where);
    c.other = j.at("other").get<std::string>();
    c.name = j.at("name").get<std::string>();
    c.input = j.at("input").get<std::string>();
    c.node = j.at("node").get<long>();
    c.node_name = j.at("node_name").get<std::string>();
    c.engine_precision = j.at("engine_precision").get<std::string>();
    c.reference_precision = j.at("reference_precision").get<std::string>();
    c.max_abs_error = j.at("max_abs_error").get<std::string>();
    c.max_rel_error = j.at("max_rel_error").get<std::string>();
    c.abs_error = number_of(j.at("abs_error"));
    c.rel_error = number_of(j.at("rel_error"));
    const auto integers = [&](const char* key) { // a list of JSON integers (no 0.9, no true)
      const nlohmann::json& list = j.at(key);
      if (!list.is_array() ||
          !std::all_of(list.begin(), list.end(), [](const auto& x) { return x.is_number_integer(); }))
        throw UsageError(where + ": check '" + c.name + "' of graph '" + c.graph + "': its " + key + " " + list.dump() +
                         " is not a list of integers");
      return list.get<std::vector<Eigen::Index>>();
    };
    if (!j.contains("shape"))
      throw UsageError(where + ": check '" + c.name + "' of graph '" + c.graph +
                       "' has no \"shape\": the report was written by an older tapegrad; run its shards again");
    const auto index = integers("worst_index");
    const auto sizes = integers("shape");
    const auto refuse = [&](const std::string& problem) {
      throw UsageError(where + ": check '" + c.name + "' of graph '" + c.graph + "': its worst_index " +
                       j.at("worst_index").dump() + " " + problem + " " + j.at("shape").dump());
    };
    if (index.size() != sizes.size() || sizes.size() > max_rank) refuse("does not index its shape");
    Eigen::Index flat = 0, entries = 1;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      if (sizes[k] < 1 || index[k] < 0 || index[k] >= sizes[k]) refuse("is outside its shape");
      entries = saturating_product(entries, sizes[k]);
      if (entries == std::numeric_limits<Eigen::Index>::max()) refuse("indexes more entries than a tensor holds:");
      flat = flat * sizes[k] + index[k]; // < entries: no overflow
    }
    c.shape = Shape(std::span<const Eigen::Index>(sizes));
    c.worst_row = flat / c.shape.cols();
    c.worst_col = flat % c.shape.cols();
    c.numeric = j.at("numeric").get<std::string>();
    c.analytic = j.at("analytic").get<std::string>();
    c.step = j.at("step").get<std::string>();
    c.threshold = j.at("threshold").get<std::string>();
    c.threshold_value = number_of(j.at("threshold_value"));
    c.ratio = number_of(j.at("ratio"));
    c.passed = j.at("passed").get<bool>();
    c.note = j.at("note").get<std::string>();
    c.task = j.at("task").get<std::size_t>();
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(where + ": a check of the report is not as 'tapegrad check --format json' writes it (" +
                     std::string(e.what()) + ")");
  }
}

nlohmann::json report_json(const CheckReport& report, const Shard& shard) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& c : report.checks)
    checks.push_back(check_json(c));
  nlohmann::json doc{{"verdict", report.passed() ? "pass" : "fail"}, {"checks", checks}, {"warnings", report.warnings}};
  if (shard.count > 1) {
    doc["verdict"] = "partial";
    doc["shard"] = {{"index", shard.index}, {"count", shard.count}, {"tasks", shard.next}};
  }
  return doc;
}

void print_report(std::ostream& out, const CheckReport& report, bool verbose) {
  // Groups: (graph, engine) in order of appearance, and within each the kinds of check in order of appearance.
  struct Group {
    std::string name;
    std::size_t ran = 0, failed = 0;
    const CheckResult* worst = nullptr;
    std::vector<const CheckResult*> checks;
  };
  struct Section {
    std::string graph, engine;
    std::vector<Group> groups;
  };
  std::vector<Section> sections;
  std::size_t failed = 0;
  for (const CheckResult& c : report.checks) {
    if (sections.empty() || sections.back().graph != c.graph || sections.back().engine != c.engine_precision)
      sections.push_back({c.graph, c.engine_precision, {}});
    std::vector<Group>& groups = sections.back().groups;
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.name == c.name; });
    if (g == groups.end()) g = groups.insert(groups.end(), Group{c.name, 0, 0, nullptr, {}});
    ++g->ran;
    g->failed += !c.passed;
    if (!g->worst || worse(c, *g->worst)) g->worst = &c;
    g->checks.push_back(&c);
    failed += !c.passed;
  }
  for (const Section& s : sections) {
    out << "\n== " << s.graph << " [engine " << s.engine << "] ==\n";
    for (const Group& g : s.groups) {
      const CheckResult& w = *g.worst;
      out << "  " << std::left << std::setw(40) << g.name << std::right << std::setw(4) << g.ran
          << (g.ran == 1 ? " check, " : " checks,") << std::left << " "
          << (g.failed == 0 ? "all pass" : std::to_string(g.failed) + " FAILED") << "; worst rel " << w.max_rel_error
          << (!w.passed                          ? " > " + w.threshold
              : w.rel_error <= w.threshold_value ? " <= " + w.threshold
                                                 : " (passed absolutely: abs " + w.max_abs_error + " within its floor)")
          << " (" << w.input << ")\n";
      for (const CheckResult* c : g.checks) // a given gradient's line always: its digits are the answer
        if (verbose || !c->passed || c->kind == CheckKind::given_vs_reference) print_line(out, *c);
    }
  }
  if (!report.warnings.empty()) out << "\nwarnings:\n";
  for (const std::string& w : report.warnings)
    out << "  " << w << "\n";
  if (!verbose) out << "\n(one line per kind of check and every failure in full; --verbose shows every check)";
  out << "\nverdict: " << (report.passed() ? "PASS" : "FAIL") << " (" << report.checks.size() << " checks, " << failed
      << " failed, " << report.warnings.size() << " warnings)\n";
}

} // namespace tapegrad::app
