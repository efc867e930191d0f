// `tapegrad dot FILE`: the recorded tape as Graphviz DOT. Node ids are tape indices (deterministic); labels
// give name, op and shape, and optionally values and gradients; --check colours each node by its per-node
// VJP check (green passed, red failed; inputs grey). With --fault ID, the graph with that fault of `tapegrad
// bugs` injected at one node (drawn with a thick dashed border), in double as `tapegrad bugs FILE` runs it.
#include "commands.hpp"
#include "dot_writer.hpp"
#include "engine.hpp"
#include "precision.hpp"

#include <tapegrad/graph/verification/op_faults.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace tapegrad::app {
namespace {

/// `dot FILE --fault ID [--at NODE]`: fault 1 (overwrite) at a value with more than one consumer, or op fault
/// ID at a node of its op where it changes something; the first such in file order unless --at names one.
std::string run_dot_fault(const DotCommand& cmd, const GraphSpec& spec) {
  if (cmd.precision != "double")
    throw UsageError("--fault: faults are injected in double, as tapegrad bugs runs them; drop --precision");
  const std::string where = cmd.at.empty() ? "" : " at '" + cmd.at + "'";
  const FileGraph<double> graph(spec);
  MpfrDigits digits(50); // the reference of tapegrad check for double
  const FileGraph<mpfr_real> lifted = graph.lifted<mpfr_real>();
  Tape<mpfr_real> reference;
  std::size_t marked = 0;
  std::string mark;
  std::unique_ptr<Tape<double>> tape;
  if (cmd.fault == 1) {
    std::optional<std::pair<std::size_t, std::string>> site;
    for (const auto& v : fan_out_values(graph))
      if (!site && (cmd.at.empty() || v.second == cmd.at)) site = v;
    if (!site)
      throw UsageError("--fault 1 (overwrite on fan-out): " + spec.file + " has no input or node" +
                       (cmd.at.empty() ? "" : " named '" + cmd.at + "'") +
                       " with a gradient read by more than one node");
    marked = site->first;
    tape = std::make_unique<Tape<double>>(TapeOptions{.overwrite_fault_node = marked});
    tape->backward(graph(*tape, graph.record_inputs(*tape)));
    lifted(reference, lifted.record_inputs(reference));
    mark = "FAULT 1: overwrite on fan-out (a VJP assigns)";
  } else {
    const OpFaultInfo* info = OpFaults::find(cmd.fault);
    if (info == nullptr)
      throw UsageError("--fault " + std::to_string(cmd.fault) +
                       ": a graph file takes fault 1 (overwrite on fan-out) or an op fault, 11 to " +
                       std::to_string(OpFaults::infos.back()->id) +
                       " (tapegrad bugs lists them); 2 to 7 and 10 are faults of the chapter's attention");
    std::optional<FaultSite> site;
    std::string why;
    for (const FaultSite& s : fault_sites(graph))
      if (s.fault == info && (cmd.at.empty() || s.name == cmd.at)) {
        if (s.invisible.empty() && !site) site = s;
        if (!s.invisible.empty() && why.empty()) why = s.name + ": " + s.invisible;
      }
    if (!site)
      throw UsageError("--fault " + std::to_string(cmd.fault) + " (" + std::string(info->name) + "): " +
                       (why.empty() ? spec.file + " has no " + std::string(info->op->name) + " node" + where
                                    : "it changes nothing in " + spec.file + " at " + why));
    marked = graph.index_of(site->name); // the tape index: inputs, then real constants, then nodes
    tape = std::make_unique<Tape<double>>();
    tape->backward(FaultyFileGraph<double>(graph, site->node, cmd.fault)(*tape, graph.record_inputs(*tape)));
    FaultyFileGraph<mpfr_real>(lifted, site->node, cmd.fault)(reference, lifted.record_inputs(reference));
    mark = "FAULT " + std::to_string(cmd.fault) + ": " + std::string(info->name);
  }
  const std::map<std::size_t, bool> verdict =
      cmd.check ? node_verdicts(*tape, reference, 1) : std::map<std::size_t, bool>{};
  return tape_dot(*tape, verdict, cmd.values, cmd.grads, marked, mark);
}

} // namespace

int run_dot_command(const DotCommand& cmd, std::ostream& out) {
  const Precision p = parse_precision("--precision", cmd.precision);
  if (!cmd.at.empty() && cmd.fault == 0) throw UsageError("--at names where --fault injects its fault; give --fault");
  const GraphSpec spec = read_graph_file(cmd.file);
  if (cmd.check || cmd.fault != 0) require_numeric_inputs(spec, cmd.check ? "dot --check" : "dot --fault");
  if (cmd.fault != 0) {
    out << run_dot_fault(cmd, spec);
    return 0;
  }
  const DotArgs args{cmd.values, cmd.grads, cmd.check, 1};
  const std::string text =
      with_precision(p, [&](auto type) { return run_dot<typename decltype(type)::type>(spec, args); });
  out << text;
  return 0;
}

} // namespace tapegrad::app
