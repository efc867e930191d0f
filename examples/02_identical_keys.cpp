// Worked example 2: identical keys. With Wk = [[1, 1], [1, 1]] both key rows are [1, 1], so every query
// scores both keys equally whatever the query is: A = 1/2 everywhere, and moving Q cannot change J. The
// tape must find dQ = 0 exactly, while dK is NOT zero (moving a key does change the scores).
// Computed in 50 digits; exits 1 if dQ is not zero to that precision or dK is.
#include <tapegrad/autodiff/print.hpp>
#include <tapegrad/tapegrad.hpp>

#include <iostream>

using namespace tapegrad;
using T = float50;

int main() {
  Tape<T> tape;
  const AttentionProblem<T> p = record_attention(tape, chapter::example2<T>());
  tape.backward(p.J);
  const AttentionNodes<T>& n = p.nodes;
  std::cout << "K = X Wk  (both rows [1, 1])\n"
            << format_matrix(n.K.value(), 6, "  ") << "A  (1/2 everywhere)\n"
            << format_matrix(n.A.value(), 6, "  ") << "O = A V  ([[1, 2], [1, 2]])\n"
            << format_matrix(n.O.value(), 6, "  ") << "J = " << to_string(p.J.value()(0, 0), 6) << "  (5)\n\n"
            << "dS  ([[1/2, -1/2], [-2, 2]]: each row sums to 0)\n"
            << format_matrix(n.S.grad(), 6, "  ")
            << "dQ = dS K / sqrt(2): K's rows are equal and each dS row sums to 0, so dQ = 0\n"
            << format_matrix(n.Q.grad(), 6, "  ") << "dK = dS^T Q / sqrt(2) = ln 3 dS^T: not zero\n"
            << format_matrix(n.K.grad(), 50, "  ");

  const T tol = T(128) * epsilon<T>();
  const bool ok = n.Q.grad().cwiseAbs().maxCoeff() <= tol && n.K.grad().cwiseAbs().maxCoeff() > T(1) / T(2);
  std::cout << "\n|dQ| <= " << to_string(tol, 3) << " and dK != 0: " << (ok ? "yes" : "NO") << "\n";
  return ok ? 0 : 1;
}
