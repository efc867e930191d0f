// `tapegrad check`: the attention graph checked three ways (tape, hand-written backward, finite differences
// in a higher precision), plus dual numbers, every node's VJP and the saturation guard, on the chapter's
// examples 1 and 2 and a seeded random asymmetric case. Text for people, JSON for programs.
#include "commands.hpp"
#include "engine.hpp"
#include "precision.hpp"
#include "report.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
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

std::vector<bool> parse_padding(const std::string& text, std::size_t keys) {
  std::vector<bool> flags;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item != "0" && item != "1")
      throw UsageError("--padding: expected key flags 1 (a real position) or 0 (padding) separated by commas, "
                       "such as 1,1,0,1; got '" +
                       text + "'");
    flags.push_back(item == "1");
  }
  if (flags.size() != keys)
    throw UsageError("--padding: " + std::to_string(flags.size()) + " flags for " + std::to_string(keys) +
                     " keys (T + offset); give one per key");
  return flags;
}

/// The extended attention of --causal, --offset, --heads, --padding, --dropout, --strict-masks.
AttentionConfig parse_config(const CheckCommand& cmd, const std::array<int, 4>& size) {
  AttentionConfig c;
  c.causal = cmd.causal;
  if (cmd.offset < 0 || cmd.offset > 64)
    throw UsageError("--offset: " + std::to_string(cmd.offset) + " cached positions; give 0 to 64");
  c.offset = cmd.offset;
  c.heads = cmd.heads > 0 ? cmd.heads : 1;
  if (size[2] % c.heads != 0 || size[3] % c.heads != 0)
    throw UsageError("--heads " + std::to_string(c.heads) + ": d = " + std::to_string(size[2]) +
                     " and r = " + std::to_string(size[3]) + " (from --size T,D,d,r) must be multiples of the heads");
  if (!cmd.padding.empty()) c.key_padding = parse_padding(cmd.padding, static_cast<std::size_t>(size[0] + cmd.offset));
  if (!(cmd.dropout >= 0 && cmd.dropout < 1))
    throw UsageError("--dropout: " + to_string(cmd.dropout, 6) + " is not a probability in [0, 1)");
  c.dropout = cmd.dropout;
  c.dropout_seed = cmd.seed;
  c.masked_rows = cmd.strict_masks ? MaskedRows::error : MaskedRows::zero;
  return c;
}

std::string describe(const AttentionConfig& c) {
  std::string s = std::to_string(c.heads) + (c.heads == 1 ? " head" : " heads");
  if (c.causal) s += ", causal";
  if (c.offset) s += ", " + std::to_string(c.offset) + " cached positions (query i sees keys j <= i + offset)";
  if (!c.key_padding.empty()) {
    s += ", key padding ";
    for (bool k : c.key_padding)
      s += k ? '1' : '0';
  }
  if (c.dropout > 0)
    s += ", dropout " + to_string(c.dropout, 6) + " (pattern seed " + std::to_string(c.dropout_seed) + ")";
  if (c.masked_rows == MaskedRows::error) s += ", strict masks";
  return s + "; positions P and output projection Wo";
}

/// A pair of a Jacobian's check of `file`: "Y(0, 1) / X(1, 0)", the output entry (the check's graph after
/// "FILE: ") and the input entry where the error is worst.
std::string pair_name(const CheckResult& c, const std::string& file) {
  const std::string prefix = file + ": ";
  return (c.graph.starts_with(prefix) ? c.graph.substr(prefix.size()) : c.graph) + " / " + c.input + worst_entry(c);
}

struct Run {
  Precision engine;
  unsigned reference_digits;
};

void print_text(std::ostream& out, const std::vector<Run>& runs, const CheckReport& report, const CheckCommand& cmd,
                const CheckArgs& args) {
  const auto& [n, D, d, r] = args.size;
  if (cmd.file.empty())
    out << "tapegrad check: attention checked three ways (tape, hand-written backward, finite differences in a "
           "higher precision),\nplus dual numbers (forward mode, no step) and every node's VJP alone.\n"
        << (args.config ? "extended attention: " + describe(*args.config) + "\n" : "") << "seed " << cmd.seed
        << ", random case T,D,d,r = " << n << "," << D << "," << d << "," << r << "; ";
  else
    out << "tapegrad check " << cmd.file
        << (cmd.jacobian.empty() ? ""
                                 : " --jacobian " + cmd.jacobian + ": the Jacobian of node " + cmd.jacobian +
                                       ", each entry's gradient (a backward sweep seeded with its unit matrix)")
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
  print_report(out, report, cmd.verbose);
  if (cmd.jacobian.empty()) return;
  if (const CheckResult* w = worst_pair(report))
    out << "worst pair (" << cmd.jacobian << " entry, input entry): " << pair_name(*w, cmd.file) << " [engine "
        << w->engine_precision << "], tape vs finite differences rel " << w->max_rel_error
        << (w->passed ? " <= " : " > ") << w->threshold << (w->passed ? " (passed)" : " (FAILED)")
        << "; rel is relative to the largest reference entry of that entry's gradient of the input\n";
  else
    out << "worst pair: none compared (--directional checks random projections, not pairs)\n";
}

/// "i/n" with 0 <= i < n <= 10000.
Shard parse_shard(const std::string& text) {
  Shard shard;
  char slash = 0;
  std::istringstream in(text);
  long i = -1, n = 0;
  if (!(in >> i >> slash >> n) || slash != '/' || in.peek() != std::char_traits<char>::eof() || n < 1 || n > 10000 ||
      i < 0 || i >= n)
    throw UsageError("--shard: expected i/n with 0 <= i < n <= 10000, such as 0/3; got '" + text + "'");
  shard.index = static_cast<unsigned>(i);
  shard.count = static_cast<unsigned>(n);
  return shard;
}

/// The reference digits for `engine` (`role`: "engine's" or "claimed"): --reference-precision, or the default.
unsigned reference_digits_for(const Precision& engine, const std::string& reference, const std::string& role) {
  if (reference.empty()) return default_reference_digits(engine);
  const Precision r = parse_precision("--reference-precision", reference);
  if (!r.is_digits())
    throw UsageError("--reference-precision: give a number of decimal digits (the reference is MPFR), not '" +
                     reference + "'");
  if (r.digits < engine.digits)
    throw UsageError("--reference-precision: " + reference + " digits is below the " + role + " " +
                     std::to_string(engine.digits) + " (" + engine.name +
                     "); the reference must be at least as precise");
  return r.digits;
}

/// `check FILE --gradients G [--claimed-precision P]`.
int run_given_command(const CheckCommand& cmd, const CheckArgs& args, std::ostream& out) {
  if (cmd.file.empty()) throw UsageError("--gradients needs a graph FILE (the graph the gradients are of)");
  if (!cmd.precision.empty())
    throw UsageError("--gradients: --precision picks the tape's engine, which the given gradients replace; give "
                     "their precision with --claimed-precision");
  if (!cmd.inputs.empty())
    throw UsageError("--gradients: the inputs checked are those the gradient file gives; --inputs does not apply");
  if (!cmd.shard.empty()) throw UsageError("--gradients: --shard does not apply; the check runs whole");
  if (cmd.stats)
    throw UsageError("--gradients: --stats does not apply (for the tape's size: tapegrad grad FILE --stats)");
  const Precision claimed = parse_precision("--claimed-precision", cmd.claimed.empty() ? "double" : cmd.claimed);
  const unsigned reference = reference_digits_for(claimed, cmd.reference, "claimed");
  const GraphSpec spec = read_graph_file(cmd.file);
  require_numeric_inputs(spec, "check");
  const GradientSpec given = read_gradient_file(cmd.gradients);
  const CheckReport report = run_check_given(spec, given, claimed, args, reference);
  if (cmd.format == "json") {
    out << report_json(report).dump(2) << "\n";
  } else {
    out << "tapegrad check " << cmd.file << " --gradients " << cmd.gradients << ": the given gradients against the "
        << "tape's in a " << reference << "-digit MPFR reference,\nwhich is itself checked first against finite "
        << "differences in " << 2 * reference << " digits, dual numbers and every node's VJP.\nThe gradients claim "
        << claimed.name << ": each passes when its error relative to its largest reference entry is within the "
        << "claim's budget (1024 eps) plus the reference's, fixed before the run.\n";
    print_report(out, report, cmd.verbose);
  }
  return report.passed() ? 0 : 1;
}

} // namespace

int run_check_command(const CheckCommand& cmd, std::ostream& out) {
  CheckArgs args;
  args.seed = cmd.seed;
  const bool extended = cmd.extended();
  if (extended && !cmd.file.empty())
    throw UsageError("--causal, --offset, --heads, --padding, --dropout and --strict-masks apply to the built-in "
                     "attention case, not to a graph FILE (put the masks in the file)");
  const int heads = cmd.heads > 0 ? cmd.heads : 1;
  args.size = parse_size(!cmd.size.empty() ? cmd.size
                         : !extended       ? "4,3,3,2"
                         : 4 % heads == 0  ? "4,4,4,4"
                                           : "4,4," + std::to_string(2 * heads) + "," + std::to_string(2 * heads));
  if (extended) args.config = parse_config(cmd, args.size);
  args.directional = cmd.directional;
  args.directions = cmd.directions;
  args.threads = cmd.threads;
  args.progress = !cmd.quiet;
  args.detect_anomaly = cmd.detect_anomaly;
  args.strict = cmd.strict;
  args.jacobian = cmd.jacobian;
  if (!cmd.jacobian.empty()) {
    if (cmd.file.empty()) throw UsageError("--jacobian needs a graph FILE (NODE is one of its nodes)");
    if (!cmd.gradients.empty())
      throw UsageError("--jacobian checks the tape's Jacobian of a node; --gradients checks given gradients of the "
                       "output: give one of them");
    if (cmd.order != 1) throw UsageError("--order 2 checks the output's Hessian; --jacobian does not apply");
  }
  if (!cmd.gradients.empty()) {
    if (cmd.order != 1) throw UsageError("--order 2 checks the tape's Hessian; --gradients checks given gradients");
    return run_given_command(cmd, args, out);
  }
  if (cmd.order != 1 && cmd.file.empty())
    throw UsageError("--order 2 needs a graph FILE (the built-in attention cases are checked to first order)");
  if (cmd.order != 1 && !cmd.shard.empty()) throw UsageError("--order 2: --shard does not apply to the Hessian checks");
  if (cmd.order != 1 && !cmd.inputs.empty())
    throw UsageError("--order 2 checks the Hessian with respect to every input entry: --inputs does not apply");
  if (!cmd.claimed.empty()) throw UsageError("--claimed-precision goes with --gradients (the precision they claim)");

  std::vector<Run> runs;
  if (cmd.precision.empty()) {
    if (!cmd.reference.empty())
      throw UsageError("--reference-precision needs --precision (the default runs double/50 and 50/100)");
    runs = {{parse_precision("--precision", "double"), 50}, {parse_precision("--precision", "50"), 100}};
  } else {
    const Precision engine = parse_precision("--precision", cmd.precision);
    runs = {{engine, reference_digits_for(engine, cmd.reference, "engine's")}};
  }

  if (cmd.file.empty() && !cmd.inputs.empty()) throw UsageError("--inputs needs a graph FILE");
  if (cmd.stats && (cmd.format == "json" || !cmd.file.empty()))
    throw UsageError(
        "--stats goes with the built-in case in text format (for a graph file: tapegrad grad FILE --stats)");
  Shard shard; // numbers the units of work even in a whole run, so merged partial reports equal it
  if (!cmd.shard.empty()) {
    shard = parse_shard(cmd.shard);
    if (cmd.format != "json")
      throw UsageError("--shard writes a partial report for 'tapegrad merge': add --format json");
  }
  args.shard = &shard;
  std::optional<GraphSpec> spec;
  if (!cmd.file.empty()) {
    spec = read_graph_file(cmd.file);
    require_numeric_inputs(*spec, "check");
  }
  CheckReport report;
  for (const Run& run : runs)
    report.append(with_precision(run.engine, [&](auto type) {
      using T = typename decltype(type)::type;
      if (!spec) return run_check<T>(args, run.reference_digits);
      CheckReport r = run_check_file<T>(*spec, cmd.inputs, args, run.reference_digits);
      if (cmd.order == 2) r.append(run_check_hessian<T>(*spec, run.reference_digits));
      return r;
    }));
  if (cmd.format == "json") {
    nlohmann::json doc = report_json(report, shard);
    // A partial report's worst pair would be only its share's: merge has every check.
    if (const CheckResult* w = cmd.jacobian.empty() || shard.count > 1 ? nullptr : worst_pair(report))
      doc["worst_pair"] = {{"pair", pair_name(*w, cmd.file)}, {"check", check_json(*w)}};
    out << doc.dump(2) << "\n";
  } else {
    print_text(out, runs, report, cmd, args);
  }
  if (cmd.stats && cmd.file.empty())
    for (const Run& run : runs)
      out << "stats [engine " << run.engine.name << "]: " << with_precision(run.engine, [&](auto type) {
        return check_stats<typename decltype(type)::type>(args);
      }) << "\n";
  if (shard.count > 1) // a partial report: fails only if one of its own checks failed
    return std::all_of(report.checks.begin(), report.checks.end(), [](const CheckResult& c) { return c.passed; }) ? 0
                                                                                                                  : 1;
  return report.passed() ? 0 : 1;
}

} // namespace tapegrad::app
