// The transpose trap. Q K^T and Q K have the same shape when Q and K are square, so only values tell them
// apart; on the chapter's diagonal example 1 they even agree. On the asymmetric pair
// Q = [[1, 2], [0, 1]], K = [[1, 0], [2, 1]] they differ: Q K^T = [[1, 4], [0, 1]], Q K = [[5, 2], [2, 1]].
// Exits 1 unless both facts hold.
#include <tapegrad/autodiff/print.hpp>
#include <tapegrad/tapegrad.hpp>

#include <iostream>

using namespace tapegrad;
using T = double;

int main() {
  Tape<T> tape;
  const Var<T> Q = tape.input(chapter::trap_Q<T>(), "Q"), K = tape.input(chapter::trap_K<T>(), "K");
  const Var<T> right = matmul(Q, transpose(K), "QKt"), wrong = matmul(Q, K, "QK");
  std::cout << "asymmetric pair:\nQ K^T (scores: query i against key j)\n"
            << format_matrix(right.value(), 0, "  ") << "Q K (the transpose lost)\n"
            << format_matrix(wrong.value(), 0, "  ");
  const bool asymmetric_differs = right.value() != wrong.value();

  const AttentionInputs<T> ex = chapter::example1<T>();
  const Var<T> Q1 = matmul(tape.input(ex.X), tape.input(ex.Wq)), K1 = matmul(tape.input(ex.X), tape.input(ex.Wk));
  const bool diagonal_hides = matmul(Q1, transpose(K1)).value() == matmul(Q1, K1).value();
  std::cout << "\non example 1 (diagonal) Q K^T == Q K: " << (diagonal_hides ? "yes, the bug is invisible there" : "no")
            << "\non the asymmetric pair they differ: " << (asymmetric_differs ? "yes" : "NO") << "\n";
  return asymmetric_differs && diagonal_hides ? 0 : 1;
}
