// `tapegrad dot FILE`: the recorded tape as Graphviz DOT. Node ids are tape indices (deterministic); labels
// give name, op and shape, and optionally values and gradients; --check colours each node by its per-node
// VJP check (green passed, red failed; inputs grey).
#include "commands.hpp"
#include "engine.hpp"
#include "precision.hpp"

namespace tapegrad::app {

int run_dot_command(const DotCommand& cmd, std::ostream& out) {
  const Precision p = parse_precision("--precision", cmd.precision);
  const GraphSpec spec = read_graph_file(cmd.file);
  const DotArgs args{cmd.values, cmd.grads, cmd.check, 1};
  const std::string text =
      with_precision(p, [&](auto type) { return run_dot<typename decltype(type)::type>(spec, args); });
  out << text;
  return 0;
}

} // namespace tapegrad::app
