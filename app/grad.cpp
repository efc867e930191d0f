// `tapegrad grad FILE`: a graph file evaluated and differentiated in the precision asked for; every value
// and every input's gradient (every node's with --all-nodes) as exact-enough decimals, JSON or text; with
// --jacobian NODE, that node's value and its Jacobian w.r.t. every input instead.
#include "commands.hpp"
#include "engine.hpp"
#include "precision.hpp"

namespace tapegrad::app {

int run_grad_command(const GradCommand& cmd, std::ostream& out) {
  const Precision p = parse_precision("--precision", cmd.precision);
  if (!cmd.jacobian.empty() && (cmd.all_nodes || cmd.audit))
    throw UsageError(std::string("--jacobian prints the node's Jacobian, not the gradients of the output: ") +
                     (cmd.all_nodes ? "--all-nodes" : "--audit") + " does not apply");
  const GraphSpec spec = read_graph_file(cmd.file);
  const GradArgs args{cmd.precision, cmd.format, cmd.all_nodes, cmd.audit, cmd.stats, cmd.detect_anomaly, cmd.jacobian};
  // Everything is computed before anything is printed: an error leaves stdout empty.
  const std::string text =
      with_precision(p, [&](auto type) { return run_grad<typename decltype(type)::type>(spec, args); });
  out << text;
  return 0;
}

} // namespace tapegrad::app
