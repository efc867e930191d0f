// The tapegrad command line program: every subcommand's options (the only file that compiles CLI11; the
// subcommands, in app/<command>.cpp, take their options as a plain struct from commands.hpp). User errors
// become one line on stderr and exit code 2.
#include "commands.hpp"
#include "output.hpp"
#include "precision.hpp"

#include <tapegrad/autodiff/error.hpp>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <map>
#include <string>

namespace tapegrad::app {
namespace {

/// A NODE argument: a name, never empty (an empty one would read as "not given").
const CLI::Validator node_name(
    [](const std::string& s) {
      return s.empty() ? std::string("give a node's name, not an empty one") : std::string();
    },
    "NODE");

CLI::App* add_check_command(CLI::App& cli, CheckCommand& cmd) {
  CLI::App* sub = cli.add_subcommand(
      "check", "Check attention's gradients three ways (tape, hand-written, high-precision finite differences), "
               "with dual numbers and per node, on the chapter's examples 1 and 2 and a seeded random asymmetric "
               "case. Without --precision: double against 50 digits, then 50 against 100. Exit 0 when every "
               "check passes, 1 when one fails.");
  sub->add_option("FILE", cmd.file, "A graph file (JSON) to check instead of the built-in attention cases");
  sub->add_option("--inputs", cmd.inputs, "With FILE: the inputs to check, comma separated (default: all)")
      ->delimiter(',');
  sub->add_option("--precision", cmd.precision, "Engine precision: " + precision_spellings() + ", or N digits (MPFR)");
  sub->add_option("--reference-precision", cmd.reference,
                  "Reference precision in decimal digits (MPFR), at least the engine's; default max(50, 2 x engine)");
  sub->add_option("--seed", cmd.seed, "Seed of the random case and of every random direction")->capture_default_str();
  sub->add_option("--size", cmd.size,
                  "T,D,d,r of the random case (each 1 to 64; default 4,3,3,2, or 4,4,4,4 for the extended attention)");
  sub->add_option("--threads", cmd.threads, "Threads for the finite-difference coordinates (0: every core)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  sub->add_flag("--stats", cmd.stats,
                "After the report: the random case's tape (nodes, bytes) and the peak resident memory");
  sub->add_option("--shard", cmd.shard,
                  "i/n: only share i of n of the work (finite differences input by input, per-node checks, ...), "
                  "as a partial JSON report for 'tapegrad merge'");
  sub->add_option("--gradients", cmd.gradients,
                  "With FILE: check these gradients (JSON {\"gradients\": {input: matrix}}, as 'tapegrad grad "
                  "--format json' writes) against the tape's in the reference precision, itself checked first");
  sub->add_option("--claimed-precision", cmd.claimed,
                  "With --gradients: the precision they claim, which sets their threshold (default double): " +
                      precision_spellings() + ", or N digits");
  sub->add_option("--order", cmd.order,
                  "With FILE: 2 adds the Hessian checks (forward over reverse against nested dual numbers and "
                  "against differences of the gradient, in the reference precision)")
      ->check(CLI::Range(1, 2))
      ->capture_default_str();
  sub->add_option("--jacobian", cmd.jacobian,
                  "With FILE: check the Jacobian of this node (of any shape) instead of the output's gradient: "
                  "every (node entry, input entry) pair, one backward sweep per node entry; names the worst pair")
      ->check(node_name);
  sub->add_flag("--detect-anomaly", cmd.detect_anomaly,
                "Anomaly mode for the engine's tapes: the first NaN or infinity in a value or gradient is an error "
                "naming the node");
  sub->add_flag("--verbose", cmd.verbose, "Text: every check's line, not only the summary and the failures");
  sub->add_flag("--strict", cmd.strict,
                "A node the per-node check cannot replay (a user's op without apply) fails the check instead of "
                "being listed as not checked");
  sub->add_flag("--quiet", cmd.quiet, "No progress bar (it shows only on a terminal, for checks over about 1 s)");
  sub->add_flag("--causal", cmd.causal, "Extended attention: causal mask, query i sees keys j <= i + offset");
  sub->add_option("--offset", cmd.offset,
                  "Extended attention: N cached positions before the T queries (keys: T + N); default 0");
  sub->add_option("--heads", cmd.heads, "Extended attention: H heads (H must divide d and r)")
      ->check(CLI::Range(1, 64));
  sub->add_option("--padding", cmd.padding,
                  "Extended attention: key flags, 1 real and 0 padding, one per key, such as 1,1,1,0");
  sub->add_option("--dropout", cmd.dropout,
                  "Extended attention: dropout probability on the attention weights (seeded by --seed)");
  sub->add_flag("--strict-masks", cmd.strict_masks,
                "Extended attention: a query that sees no key is an error (default: its output is 0)");
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

CLI::App* add_hessian_command(CLI::App& cli, HessianCommand& cmd) {
  CLI::App* sub = cli.add_subcommand("hessian", "Print the Hessian of a graph file's output with respect to every "
                                                "input entry (inputs in file order, each row-major), forward over "
                                                "reverse");
  sub->add_option("FILE", cmd.file, "The graph file (JSON)")->required();
  sub->add_option("--precision", cmd.precision, "Precision: " + precision_spellings() + ", or N digits (MPFR)")
      ->capture_default_str();
  sub->add_option("--format", cmd.format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  return sub;
}

CLI::App* add_grad_command(CLI::App& cli, GradCommand& cmd) {
  CLI::App* sub = cli.add_subcommand("grad", "Evaluate a graph file and print its value, every value and the "
                                             "gradient of its output w.r.t. every input");
  sub->add_option("FILE", cmd.file, "The graph file (JSON)")->required();
  sub->add_option("--precision", cmd.precision, precision_spellings() + ", or N decimal digits (MPFR)")
      ->capture_default_str();
  sub->add_option("--format", cmd.format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->add_flag("--all-nodes", cmd.all_nodes, "Also print every node's gradient (\"node_gradients\" in JSON)");
  sub->add_option("--jacobian", cmd.jacobian,
                  "Print this node's value and its Jacobian w.r.t. every input instead (\"jacobians\" in JSON: one "
                  "row per node entry, one column per input entry, both row-major)")
      ->check(node_name);
  sub->add_flag("--stats", cmd.stats, "Also print tape nodes, bytes in values and gradients, and peak memory");
  sub->add_flag("--audit", cmd.audit,
                "Fan-out audit: nodes with more than one consumer and the gradient contributions summed into them");
  sub->add_flag("--detect-anomaly", cmd.detect_anomaly,
                "Anomaly mode: the first node whose value or gradient holds NaN or an infinity is an error "
                "naming it (op, label, parents, shapes, coordinate)");
  return sub;
}

CLI::App* add_bugs_command(CLI::App& cli, BugsCommand& cmd) {
  CLI::App* sub = cli.add_subcommand(
      "bugs", "Switch on each classic gradient fault and show which checks catch it, and whether PyTorch's "
              "gradcheck and JAX's check_grads would (exit 0 only when all are caught)");
  sub->add_option("FILE", cmd.file,
                  "A graph file: inject every fault that applies to its graph (the overwrite fault at each value with "
                  "more than one consumer, each op's slip at each node of that op) and print the mutation score");
  sub->add_option("--format", cmd.format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  return sub;
}

CLI::App* add_merge_command(CLI::App& cli, MergeCommand& cmd) {
  CLI::App* sub = cli.add_subcommand(
      "merge", "Combine the partial JSON reports of 'tapegrad check --format json --shard i/n' (every i from 0 to "
               "n-1) into the whole report, as one run would print it. Exit 0 when every check passes, 1 when one "
               "fails.");
  sub->add_option("PARTIAL", cmd.files, "The partial reports, in any order")->required();
  sub->add_option("--format", cmd.format, "text or json (the report as 'tapegrad check' prints it)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->add_flag("--verbose", cmd.verbose, "Text: every check's line, not only the summary and the failures");
  return sub;
}

CLI::App* add_ops_command(CLI::App& cli, OpsCommand& cmd) {
  CLI::App* sub = cli.add_subcommand("ops", "List every op graph files take: name, operands, parameters with "
                                            "their defaults, shapes, formula and header");
  sub->add_option("--format", cmd.format, "text, json or markdown")
      ->check(CLI::IsMember({"text", "json", "markdown"}))
      ->capture_default_str();
  return sub;
}

CLI::App* add_dot_command(CLI::App& cli, DotCommand& cmd) {
  CLI::App* sub = cli.add_subcommand("dot", "Print a graph file's tape as Graphviz DOT (render: dot -Tsvg)");
  sub->add_option("FILE", cmd.file, "The graph file (JSON)")->required();
  sub->add_option("--precision", cmd.precision, "Precision to evaluate in (as for grad)")->capture_default_str();
  sub->add_flag("--values", cmd.values, "Show each node's value");
  sub->add_flag("--grads", cmd.grads, "Show each node's gradient");
  sub->add_flag("--check", cmd.check, "Colour each node by its per-node VJP check");
  sub->add_option("--fault", cmd.fault,
                  "Inject fault ID of 'tapegrad bugs' (1: overwrite on fan-out; 11 and up: an op's slip) at one node, "
                  "drawn with a thick dashed border; with --check the node the per-node check blames is red")
      ->check(CLI::Range(1, 1000));
  sub->add_option("--at", cmd.at,
                  "With --fault: the node (or input, for fault 1) to inject it at; default: the "
                  "first where it changes something")
      ->check(node_name);
  return sub;
}

} // namespace
} // namespace tapegrad::app

int main(int argc, char** argv) {
  CLI::App cli{"tapegrad: reverse-mode automatic differentiation on a tape, built to verify gradients.\n"
               "With no arguments it records the attention chapter's worked example 1 (single-head\n"
               "self-attention, T = D = d = r = 2) in double and in 50 digits, runs backward, and prints\n"
               "the tape, A, O, J and the gradient of J at every node.",
               "tapegrad"};
  std::string level = "warn";
  const std::map<std::string, spdlog::level::level_enum> levels{
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug}, {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},   {"error", spdlog::level::err},   {"off", spdlog::level::off}};
  cli.add_option("--log-level", level, "Log messages at this level and above, on stderr")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  std::string out_file;
  cli.add_option("--out", out_file,
                 "Write the report to FILE instead of stdout, atomically (a temporary file in the same directory, "
                 "then renamed): an interrupted or failed run never leaves a partial report");
  cli.fallthrough(); // --out and --log-level may also come after the subcommand
  tapegrad::app::CheckCommand check;
  CLI::App* check_cmd = tapegrad::app::add_check_command(cli, check);
  tapegrad::app::GradCommand grad;
  CLI::App* grad_cmd = tapegrad::app::add_grad_command(cli, grad);
  tapegrad::app::HessianCommand hessian;
  CLI::App* hessian_cmd = tapegrad::app::add_hessian_command(cli, hessian);
  tapegrad::app::BugsCommand bugs;
  CLI::App* bugs_cmd = tapegrad::app::add_bugs_command(cli, bugs);
  tapegrad::app::MergeCommand merge;
  CLI::App* merge_cmd = tapegrad::app::add_merge_command(cli, merge);
  tapegrad::app::OpsCommand ops;
  CLI::App* ops_cmd = tapegrad::app::add_ops_command(cli, ops);
  tapegrad::app::DotCommand dot;
  CLI::App* dot_cmd = tapegrad::app::add_dot_command(cli, dot);

  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tapegrad: " << e.what() << " (see tapegrad --help)\n";
    return 2;
  }

  spdlog::set_default_logger(spdlog::stderr_color_mt("tapegrad"));
  spdlog::set_level(levels.at(level));
  try {
    return tapegrad::app::run_with_output(out_file, std::cout, [&](std::ostream& out) {
      if (check_cmd->parsed()) return tapegrad::app::run_check_command(check, out);
      if (grad_cmd->parsed()) return tapegrad::app::run_grad_command(grad, out);
      if (hessian_cmd->parsed()) return tapegrad::app::run_hessian_command(hessian, out);
      if (ops_cmd->parsed()) return tapegrad::app::run_ops_command(ops, out);
      if (dot_cmd->parsed()) return tapegrad::app::run_dot_command(dot, out);
      if (bugs_cmd->parsed()) return tapegrad::app::run_bugs_command(bugs, out);
      if (merge_cmd->parsed()) return tapegrad::app::run_merge_command(merge, out);
      return tapegrad::app::run_default(out);
    });
  } catch (const tapegrad::Error& e) {
    std::cerr << "tapegrad: error: " << e.what() << "\n";
    return 2;
  }
}
