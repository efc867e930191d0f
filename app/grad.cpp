// `tapegrad grad FILE`: a graph file evaluated and differentiated in the precision asked for; every value
// and every input's gradient (every node's with --all-nodes) as exact-enough decimals, JSON or text.
#include "commands.hpp"
#include "engine.hpp"
#include "precision.hpp"

namespace tapegrad::app {

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
  sub->add_flag("--stats", cmd.stats, "Also print tape nodes, bytes in values and gradients, and peak memory");
  sub->add_flag("--audit", cmd.audit,
                "Fan-out audit: nodes with more than one consumer and the gradient contributions summed into them");
  sub->add_flag("--detect-anomaly", cmd.detect_anomaly,
                "Anomaly mode: the first node whose value or gradient holds NaN or an infinity is an error "
                "naming it (op, label, parents, shapes, coordinate)");
  return sub;
}

int run_grad_command(const GradCommand& cmd, std::ostream& out) {
  const Precision p = parse_precision("--precision", cmd.precision);
  const GraphSpec spec = read_graph_file(cmd.file);
  const GradArgs args{cmd.precision, cmd.format, cmd.all_nodes, cmd.audit, cmd.stats, cmd.detect_anomaly};
  // Everything is computed before anything is printed: an error leaves stdout empty.
  const std::string text =
      with_precision(p, [&](auto type) { return run_grad<typename decltype(type)::type>(spec, args); });
  out << text;
  return 0;
}

} // namespace tapegrad::app
