// Worked example 1 of the attention chapter, on a tape.
//
// Two positions, width 2: X = I, Wq = a I with a = sqrt(2) ln 3, Wk = I, Wv = diag(2, 4), and the probe
// J = sum(O * G) with G = [[1, 0], [0, 2]]. The scores come out as ln 3 on the diagonal, so each query puts
// 3/4 of its weight on itself, and J = 15/2. Exits 1 if the tape disagrees with the chapter.
#include <tapegrad/autodiff/print.hpp>
#include <tapegrad/tapegrad.hpp>

#include <iostream>

using namespace tapegrad;
using T = double;

int main() {
  Tape<T> tape;
  const AttentionInputs<T> in = chapter::example1<T>();
  const Var<T> X = tape.input(in.X, "X"), Wq = tape.input(in.Wq, "Wq"), Wk = tape.input(in.Wk, "Wk"),
               Wv = tape.input(in.Wv, "Wv"), G = tape.input(in.G, "G");

  // Forward, as the chapter writes it.
  const AttentionNodes<T> n = attention(X, Wq, Wk, Wv); // Q = X Wq, K = X Wk, V = X Wv, S = Q K^T / sqrt 2
  const Var<T> J = probe(n.O, G);                       // J = sum(O * G)
  std::cout << "S = Q K^T / sqrt(2)  (ln 3 = " << to_string(std::log(3.0)) << " on the diagonal)\n"
            << format_matrix(n.S.value(), 0, "  ") << "A = softmax_rows(S)  (3/4 and 1/4)\n"
            << format_matrix(n.A.value(), 0, "  ") << "O = A V\n"
            << format_matrix(n.O.value(), 0, "  ") << "J = " << to_string(J.value()(0, 0)) << "  (15/2)\n\n";

  // Backward: one sweep gives every gradient; X feeds Q, K and V, and its three branches add.
  tape.backward(J);
  for (const Var<T>& v : {n.A, n.S, n.Q, n.K, n.V, Wq, Wk, Wv, X})
    std::cout << "d" << v.name() << "\n" << format_matrix(v.grad(), 0, "  ");

  const T tol = 128 * epsilon<T>();
  const bool ok = std::abs(J.value()(0, 0) - 7.5) <= tol && std::abs(n.A.value()(0, 0) - 0.75) <= tol &&
                  std::abs(n.S.grad()(0, 0) - 0.375) <= tol; // dS = [[3/8, -3/8], [-3/2, 3/2]]
  std::cout << "\nagrees with the chapter (J = 15/2, A00 = 3/4, dS00 = 3/8, tolerance " << tol
            << "): " << (ok ? "yes" : "NO") << "\n";
  return ok ? 0 : 1;
}
