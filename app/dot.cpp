// `tapegrad dot FILE`: the recorded tape as Graphviz DOT. Node ids are tape indices (deterministic); labels
// give name, op and shape, and optionally values and gradients; --check colours each node by its per-node
// VJP check (green passed, red failed; inputs grey).
#include "commands.hpp"
#include "engine.hpp"
#include "precision.hpp"

namespace tapegrad::app {

CLI::App* add_dot_command(CLI::App& cli, DotCommand& cmd) {
  CLI::App* sub = cli.add_subcommand("dot", "Print a graph file's tape as Graphviz DOT (render: dot -Tsvg)");
  sub->add_option("FILE", cmd.file, "The graph file (JSON)")->required();
  sub->add_option("--precision", cmd.precision, "Precision to evaluate in (as for grad)")->capture_default_str();
  sub->add_flag("--values", cmd.values, "Show each node's value");
  sub->add_flag("--grads", cmd.grads, "Show each node's gradient");
  sub->add_flag("--check", cmd.check, "Colour each node by its per-node VJP check");
  return sub;
}

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
