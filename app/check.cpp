// `tapegrad check`: the attention graph checked three ways (tape, hand-written backward, finite differences
// in a higher precision), plus dual numbers, every node's VJP and the saturation guard, on the chapter's
// examples 1 and 2 and a seeded random asymmetric case. Text for people, JSON for programs.
#include "commands.hpp"
#include "engine.hpp"
#include "precision.hpp"

#include <nlohmann/json.hpp>

#include <iomanip>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

namespace tapegrad::app {
namespace {

std::array<int, 4> parse_size(const std::string& text) {
  const auto bad = [&] {
    return UsageError("--size: expected four integers T,D,d,r from 1 to 64, such as 4,3,3,2; got '" + text + "'");
  };
  std::array<int, 4> size{};
  std::istringstream in(text);
  for (std::size_t k = 0; k < 4; ++k) {
    char comma = ',';
    if (k > 0 && !(in >> comma)) throw bad();
    if (comma != ',' || !(in >> size[k]) || size[k] < 1 || size[k] > 64) throw bad();
  }
  if (in.peek() != std::char_traits<char>::eof()) throw bad();
  return size;
}

struct Run {
  Precision engine;
  unsigned reference_digits;
};

std::string shorten(const std::string& number, std::size_t digits) {
  // Keeps the sign, `digits` significant characters and the exponent: enough for a person to compare.
  const std::size_t e = number.find_first_of("eE");
  const std::string mantissa = number.substr(0, e), exponent = e == std::string::npos ? "" : number.substr(e);
  return mantissa.size() > digits + 2 ? mantissa.substr(0, digits + 2) + "..." + exponent : number;
}

void print_text(std::ostream& out, const std::vector<Run>& runs, const CheckReport& report, const CheckCommand& cmd) {
  if (cmd.file.empty())
    out << "tapegrad check: attention checked three ways (tape, hand-written backward, finite differences in a "
           "higher precision),\nplus dual numbers (forward mode, no step) and every node's VJP alone.\n"
        << "seed " << cmd.seed << ", random case T,D,d,r = " << cmd.size << "; ";
  else
    out << "tapegrad check " << cmd.file
        << ": the tape against finite differences in a higher precision, dual "
           "numbers (forward mode, no step) and every node's VJP alone.\nseed "
        << cmd.seed << "; ";
  out << (cmd.directional ? "DIRECTIONAL mode (weaker: random projections, not every coordinate)"
                          : "every coordinate of every input")
      << ".\nThresholds are fixed before the run from the precisions and the step; errors are relative to the "
         "largest reference entry.\nRuns:";
  for (const Run& r : runs)
    out << " engine " << r.engine.name << " against a " << r.reference_digits << "-digit MPFR reference;";
  out << "\n";
  std::string graph, precision;
  std::size_t failed = 0;
  for (const CheckResult& c : report.checks) {
    if (c.engine_precision + c.graph != precision + graph) {
      graph = c.graph;
      precision = c.engine_precision;
      out << "\n== " << graph << " [engine " << c.engine_precision << "] ==\n";
    }
    failed += !c.passed;
    out << "  " << (c.passed ? "pass" : "FAIL") << "  " << std::left << std::setw(40) << c.name << std::setw(16)
        << c.input << " rel " << c.max_rel_error << (c.passed ? " <= " : " >  ") << c.threshold << "  (abs "
        << c.max_abs_error << " at (" << c.worst_row << ", " << c.worst_col << "): reference " << shorten(c.numeric, 20)
        << ", checked " << shorten(c.analytic, 20) << "; step " << c.step << (c.note.empty() ? "" : "; " + c.note)
        << ")\n";
  }
  if (!report.warnings.empty()) out << "\nwarnings:\n";
  for (const std::string& w : report.warnings)
    out << "  " << w << "\n";
  out << "\nverdict: " << (report.passed() ? "PASS" : "FAIL") << " (" << report.checks.size() << " checks, " << failed
      << " failed, " << report.warnings.size() << " warnings)\n";
}

void print_json(std::ostream& out, const CheckReport& report) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& c : report.checks)
    checks.push_back({{"graph", c.graph},
                      {"name", c.name},
                      {"input", c.input},
                      {"engine_precision", c.engine_precision},
                      {"reference_precision", c.reference_precision},
                      {"max_abs_error", c.max_abs_error},
                      {"max_rel_error", c.max_rel_error},
                      {"worst_index", {c.worst_row, c.worst_col}},
                      {"numeric", c.numeric},
                      {"analytic", c.analytic},
                      {"step", c.step},
                      {"threshold", c.threshold},
                      {"passed", c.passed},
                      {"note", c.note}});
  const nlohmann::json doc{
      {"verdict", report.passed() ? "pass" : "fail"}, {"checks", checks}, {"warnings", report.warnings}};
  out << doc.dump(2) << "\n";
}

} // namespace

CLI::App* add_check_command(CLI::App& cli, CheckCommand& cmd) {
  CLI::App* sub = cli.add_subcommand(
      "check", "Check attention's gradients three ways (tape, hand-written, high-precision finite differences), "
               "with dual numbers and per node, on the chapter's examples 1 and 2 and a seeded random asymmetric "
               "case. Without --precision: double against 50 digits, then 50 against 100. Exit 0 when every "
               "check passes, 1 when one fails.");
  sub->add_option("FILE", cmd.file, "A graph file (JSON) to check instead of the built-in attention cases");
  sub->add_option("--inputs", cmd.inputs, "With FILE: the inputs to check, comma separated (default: all)")
      ->delimiter(',');
  sub->add_option("--precision", cmd.precision,
                  "Engine precision: float, double, long-double, float128, 50, 100, or N digits (MPFR)");
  sub->add_option("--reference-precision", cmd.reference,
                  "Reference precision in decimal digits (MPFR), at least the engine's; default max(50, 2 x engine)");
  sub->add_option("--seed", cmd.seed, "Seed of the random case and of every random direction")->capture_default_str();
  sub->add_option("--size", cmd.size, "T,D,d,r of the random case (each 1 to 64)")->capture_default_str();
  sub->add_option("--format", cmd.format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->add_flag("--directional", cmd.directional,
                "Random projections instead of every coordinate (for large inputs; weaker, and labelled so)");
  sub->add_option("--directions", cmd.directions, "Random directions for --directional and for dual numbers")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  return sub;
}

int run_check_command(const CheckCommand& cmd, std::ostream& out) {
  CheckArgs args;
  args.seed = cmd.seed;
  args.size = parse_size(cmd.size);
  args.directional = cmd.directional;
  args.directions = cmd.directions;

  std::vector<Run> runs;
  if (cmd.precision.empty()) {
    if (!cmd.reference.empty())
      throw UsageError("--reference-precision needs --precision (the default runs double/50 and 50/100)");
    runs = {{parse_precision("--precision", "double"), 50}, {parse_precision("--precision", "50"), 100}};
  } else {
    const Precision engine = parse_precision("--precision", cmd.precision);
    unsigned reference = default_reference_digits(engine);
    if (!cmd.reference.empty()) {
      const Precision r = parse_precision("--reference-precision", cmd.reference);
      if (r.kind != Precision::Kind::mpfr && r.kind != Precision::Kind::float50 && r.kind != Precision::Kind::float100)
        throw UsageError("--reference-precision: give a number of decimal digits (the reference is MPFR), not '" +
                         cmd.reference + "'");
      if (r.digits < engine.digits)
        throw UsageError("--reference-precision: " + cmd.reference + " digits is below the engine's " +
                         std::to_string(engine.digits) + " (" + engine.name +
                         "); the reference must be at least as "
                         "precise");
      reference = r.digits;
    }
    runs = {{engine, reference}};
  }

  if (cmd.file.empty() && !cmd.inputs.empty()) throw UsageError("--inputs needs a graph FILE");
  std::optional<GraphSpec> spec;
  if (!cmd.file.empty()) spec = read_graph_file(cmd.file);
  CheckReport report;
  for (const Run& run : runs)
    report.append(with_precision(run.engine, [&](auto type) {
      using T = typename decltype(type)::type;
      return spec ? run_check_file<T>(*spec, cmd.inputs, args, run.reference_digits)
                  : run_check<T>(args, run.reference_digits);
    }));
  if (cmd.format == "json")
    print_json(out, report);
  else
    print_text(out, runs, report, cmd);
  return report.passed() ? 0 : 1;
}

} // namespace tapegrad::app
