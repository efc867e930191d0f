#pragma once
// Graphviz DOT of a recorded tape, shared by `tapegrad dot` in every precision (engine.tpp) and by `dot --fault`
// (dot.cpp, double): node ids are tape indices; labels give name, op and shape, optionally values and gradients;
// a verdict colours a node by its per-node VJP check (green passed, red failed; inputs grey).
#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/autodiff/print.hpp>

#include <map>
#include <sstream>
#include <string>

namespace tapegrad::app {

/// DOT string literal contents: quotes and backslashes escaped, line breaks as \l.
inline std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n')
      out += "\\l";
    else
      out += c;
  }
  return out;
}

/// Per tape node, whether every per-node check of it passed: the engine's `tape` against `reference` (the same
/// graph recorded on Tape<mpfr_real> in the digits in effect), each VJP against differences of its op alone.
template <Real T>
std::map<std::size_t, bool> node_verdicts(const Tape<T>& tape, const Tape<mpfr_real>& reference, std::uint64_t seed) {
  std::map<std::size_t, bool> verdict;
  const CheckReport r = node_check(tape, reference, seed, fd_threshold<T, mpfr_real>(engine_tolerance<T>()));
  for (const CheckResult& c : r.checks)
    if (c.node >= 0) {
      const auto i = static_cast<std::size_t>(c.node);
      verdict[i] = (verdict.count(i) ? verdict[i] : true) && c.passed;
    }
  return verdict;
}

/// The DOT text of `tape` (swept), each node in `verdict` coloured by it; `marked`, when it is a node of the
/// tape, drawn with a thick dashed border and `mark` added to its label (a fault injected there).
template <Real T> std::string tape_dot(Tape<T>& tape, const std::map<std::size_t, bool>& verdict, bool values,
                                       bool grads, std::size_t marked = std::numeric_limits<std::size_t>::max(),
                                       const std::string& mark = {}) {
  std::ostringstream out;
  out << "digraph tapegrad {\n  node [shape=box, fontname=\"monospace\"];\n";
  for (std::size_t i = 0; i < tape.size(); ++i) {
    const auto& n = tape.node(i);
    std::string label = tape.node_name(i) + "\n" + std::string(n.op->node) + " " + shape_string(n.shape);
    if (i == marked) label += "\n" + mark;
    // A matrix as its rows; any other rank as its storage view, a row per run of the last dim in row-major order.
    const std::string view = n.shape.rank() == 2 ? "" : " (" + shape_string(n.value.rows(), n.value.cols()) + " view)";
    if (values) label += "\nvalue" + view + "\n" + format_matrix(n.value, 6);
    if (grads && n.needs_grad) label += "\ngradient" + view + "\n" + format_matrix(tape.grad(tape.var(i)), 6);
    if (grads && !n.needs_grad)
      label += n.is_input() ? "\nno gradient (a constant)" : "\nno gradient (made from constants only)";
    out << "  n" << i << " [label=\"" << dot_escape(label) << "\\l\"";
    if (n.is_input())
      out << ", style=\"filled" << (i == marked ? ",dashed" : "") << "\", fillcolor=\"gray90\"";
    else if (verdict.count(i))
      out << ", style=\"filled" << (i == marked ? ",dashed" : "") << "\", fillcolor=\""
          << (verdict.at(i) ? "palegreen" : "lightcoral") << "\"";
    else if (i == marked)
      out << ", style=dashed";
    if (i == marked) out << ", penwidth=3";
    out << "];\n";
    for (std::size_t p : n.parents)
      out << "  n" << p << " -> n" << i << ";\n";
  }
  out << "}\n";
  return out.str();
}

} // namespace tapegrad::app
