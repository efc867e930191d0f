#pragma once
// The chapter's worked examples, derived here from their definitions (REFERENCE.md) in T: rationals, ln 3
// and sqrt 2 made in T. The tape's results are compared with these, never with printed decimals.

#include <tapegrad/graph/verification/chapter.hpp>

namespace tapegrad::test {

template <Real T> struct Example1Expected {
  Matrix<T> A, O, dA, dS, dQ, dK, dV, dX;
  T J;
};

template <Real T> Example1Expected<T> example1_expected() {
  using chapter::matrix;
  using std::log;
  using std::sqrt;
  const T ln3 = log(T(3)), r2 = sqrt(T(2));
  const T q = T(1) / T(4), h = T(1) / T(2);
  Example1Expected<T> e;
  e.A = matrix<T>({{T(3) * q, q}, {q, T(3) * q}}); // S = ln3 I, exp(ln 3) = 3
  e.O = matrix<T>({{T(3) * h, T(1)}, {h, T(3)}});  // A diag(2, 4)
  e.J = T(15) / T(2);                              // 3/2 * 1 + 3 * 2
  e.dA = matrix<T>({{T(2), T(0)}, {T(0), T(8)}});  // G V^T
  e.dS = matrix<T>({{T(3) / T(8), -T(3) / T(8)}, {-T(3) / T(2), T(3) / T(2)}});
  e.dQ = e.dS / r2;                                 // dS K / sqrt 2, K = I
  e.dK = ln3 * Matrix<T>(e.dS.transpose());         // dS^T Q / sqrt 2, Q = sqrt2 ln3 I
  e.dV = matrix<T>({{T(3) * q, h}, {q, T(3) * h}}); // A^T G
  // dX = dQ Wq^T + dK Wk^T + dV Wv^T with Wq = sqrt2 ln3 I, Wk = I, Wv = diag(2, 4)
  const Matrix<T> Wv = matrix<T>({{T(2), T(0)}, {T(0), T(4)}});
  e.dX = (r2 * ln3) * e.dQ + e.dK + product(e.dV, Wv); // product(): no Eigen GEMM kernels for T
  return e;
}

/// The bounds the issue states for the worked examples: 1e-13 in double, 1e-45 at 50 digits.
template <Real T> T stated_example_bound() {
  using std::pow;
  return digits10<T>() >= 50 ? T(1) / pow(T(10), 45) : T(1) / pow(T(10), 13);
}

} // namespace tapegrad::test
