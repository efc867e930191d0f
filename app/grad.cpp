// `tapegrad grad FILE`: a graph file evaluated and differentiated in the precision asked for; every value
// and every input's gradient (every node's with --all-nodes) as exact-enough decimals, JSON or text.
#include "commands.hpp"
#include "engine.hpp"
#include "precision.hpp"

namespace tapegrad::app {

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
