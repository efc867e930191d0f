// Three classic gradient bugs, the way the chapter walks through them: each one switched on, its wrong
// gradient printed beside the right one, and the check that exposes it. Exits 1 unless each is exposed.
//   1. X feeds Q, K and V; a VJP that ASSIGNS instead of adding keeps one branch of dX.
//   2. A softmax backward that keeps only the numerator path, dS = A * dA: rows of dS stop summing to 0.
//   3. S = Q K instead of Q K^T: invisible on the diagonal example 1's forward, visible on an asymmetric one.
#include <tapegrad/autodiff/print.hpp>
#include <tapegrad/graph/verification/attention_check.hpp>
#include <tapegrad/graph/verification/chapter.hpp>
#include <tapegrad/graph/verification/faults.hpp>

#include <iostream>

using namespace tapegrad;
using T = double;

namespace {

const std::vector<std::string> names{"X", "Wq", "Wk", "Wv", "G"};

std::vector<Matrix<T>> inputs(const AttentionInputs<T>& in) { return {in.X, in.Wq, in.Wk, in.Wv, in.G}; }

} // namespace

int main() {
  const AttentionInputs<T> ex1 = chapter::example1<T>();
  bool all_exposed = true;

  std::cout << "1. overwrite on fan-out (example 1)\n";
  const EngineGradient<T> right = engine_gradient<T>(FullAttentionGraph{}, inputs(ex1), names);
  const EngineGradient<T> overwritten =
      engine_gradient<T>(FullAttentionGraph{}, inputs(ex1), names, TapeOptions{.inject_overwrite_fault = true});
  std::cout << "   dX with the branches added (right):\n"
            << format_matrix(right.grads[0], 6, "     ")
            << "   dX with each VJP assigning (wrong: one branch survives):\n"
            << format_matrix(overwritten.grads[0], 6, "     ");
  const T e1 = max_rel_error<T>(overwritten.grads[0], right.grads[0]);
  std::cout << "   exposed: relative difference " << e1 << "\n\n";
  all_exposed = all_exposed && e1 > 1e-3;

  std::cout << "2. softmax backward keeping only the numerator path (example 1)\n";
  Tape<T> good, bad;
  record_graph(good, FullAttentionGraph{}, inputs(ex1), names);
  const Var<T> Jb = record_graph(bad, FaultyAttention{Fault::softmax_numerator_only}, inputs(ex1), names);
  good.backward(good.var(good.size() - 1));
  bad.backward(Jb);
  const auto dS = [](Tape<T>& t) {
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t.node(i).label == "S") return Matrix<T>(t.grad(t.var(i)));
    return Matrix<T>();
  };
  std::cout << "   dS = A (dA - rowsum(A dA)) (right; each row sums to 0):\n"
            << format_matrix(dS(good), 6, "     ") << "   dS = A dA (wrong):\n"
            << format_matrix(dS(bad), 6, "     ");
  const T row_sum = dS(bad).rowwise().sum().cwiseAbs().maxCoeff();
  std::cout << "   exposed: a row of the wrong dS sums to " << row_sum << ", not 0\n\n";
  all_exposed = all_exposed && row_sum > 1e-3;

  std::cout << "3. the forward transpose lost: S = Q K\n";
  const AttentionInputs<T> asym = random_attention<T>(7, 3, 4, 3, 2);
  for (const auto& [name, in] : {std::pair{"example 1 (diagonal)", ex1}, std::pair{"asymmetric (seed 7)", asym}}) {
    Tape<T> t1, t2;
    const Var<T> J_right = record_graph(t1, FullAttentionGraph{}, inputs(in), names);
    const Var<T> J_wrong = record_graph(t2, FaultyAttention{Fault::forward_transpose_lost}, inputs(in), names);
    std::cout << "   " << name << ": J with Q K^T = " << J_right.value()(0, 0)
              << ", with Q K = " << J_wrong.value()(0, 0)
              << (J_right.value() == J_wrong.value() ? "  (the same: invisible here)\n" : "  (different: exposed)\n");
    if (in.X.rows() == 3) all_exposed = all_exposed && J_right.value() != J_wrong.value();
  }
  std::cout << "\nall three exposed: " << (all_exposed ? "yes" : "NO") << "\n";
  return all_exposed ? 0 : 1;
}
