// `tapegrad` with no arguments: the chapter's worked example 1 recorded on a tape in double and in 50
// digits; prints the tape, A, O, J and the gradient of J at every node.
#include "commands.hpp"

#include <tapegrad/autodiff/print.hpp>
#include <tapegrad/tapegrad.hpp>

#include <spdlog/spdlog.h>

namespace tapegrad::app {
namespace {

template <Real T> void worked_example_1(std::ostream& out) {
  spdlog::debug("recording worked example 1 in {}", scalar_name<T>());
  Tape<T> tape;
  const AttentionProblem<T> p = record_attention(tape, chapter::example1<T>());
  tape.backward(p.J);
  spdlog::debug("backward done: {} nodes", tape.size());

  out << "== worked example 1 in " << scalar_name<T>() << " (" << digits10<T>() << " significant digits) ==\n"
      << "X = I, Wq = sqrt(2) ln(3) I, Wk = I, Wv = diag(2, 4), G = [[1, 0], [0, 2]]; J = sum(O * G)\n\n"
      << "tape (recording order; backward runs it in reverse):\n"
      << format_tape(tape) << "\n";
  out << "A = softmax_rows(Q K^T / sqrt(d)), expected [[3/4, 1/4], [1/4, 3/4]]:\n"
      << format_matrix(p.nodes.A.value(), 0, "  ");
  out << "O = A V, expected [[3/2, 1], [1/2, 3]]:\n" << format_matrix(p.nodes.O.value(), 0, "  ");
  out << "J, expected 15/2:\n" << format_matrix(p.J.value(), 0, "  ") << "\n";
  out << "gradients dJ/d(node), every node, in reverse order:\n";
  for (std::size_t i = tape.size(); i-- > 0;) {
    const Var<T> v = tape.var(i);
    out << "d" << v.name() << " (" << shape_string(v.rows(), v.cols()) << "):\n" << format_matrix(v.grad(), 0, "  ");
  }
  out << "\n";
}

} // namespace

int run_default(std::ostream& out) {
  worked_example_1<double>(out);
  worked_example_1<float50>(out);
  return 0;
}

} // namespace tapegrad::app
