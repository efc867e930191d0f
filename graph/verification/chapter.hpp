#pragma once
// The chapter's worked inputs (../shared/REFERENCE.md), built in T: inexact numbers are made from their
// definitions (ln 3, sqrt 2) in T, never from a double literal.

#include "../models/attention.hpp"

namespace tapegrad::chapter {

template <Real T> Matrix<T> matrix(std::initializer_list<std::initializer_list<T>> rows) {
  Matrix<T> m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.begin()->size()));
  Eigen::Index i = 0;
  for (const auto& row : rows) {
    Eigen::Index j = 0;
    for (const T& x : row)
      m(i, j++) = x;
    ++i;
  }
  return m;
}

/// Worked example 1: T = D = d = r = 2, X = I, Wq = a I with a = sqrt(2) ln 3, Wk = I, Wv = diag(2, 4),
/// G = [[1, 0], [0, 2]]. Then S = ln 3 I, A = [[3/4, 1/4], [1/4, 3/4]], J = 15/2.
template <Real T> AttentionInputs<T> example1() {
  using std::log;
  using std::sqrt;
  const T a = sqrt(T(2)) * log(T(3));
  const T o(0), i(1);
  return {matrix<T>({{i, o}, {o, i}}), matrix<T>({{a, o}, {o, a}}), matrix<T>({{i, o}, {o, i}}),
          matrix<T>({{T(2), o}, {o, T(4)}}), matrix<T>({{i, o}, {o, T(2)}})};
}

/// Worked example 2, identical keys: example 1 with Wk = [[1, 1], [1, 1]], so both key rows are [1, 1],
/// every score row is constant, A = 1/2 everywhere, and dQ = 0 exactly while dK is not zero.
template <Real T> AttentionInputs<T> example2() {
  AttentionInputs<T> in = example1<T>();
  in.Wk.setOnes();
  return in;
}

/// The transpose trap's asymmetric pair: Q K^T = [[1, 4], [0, 1]] but Q K = [[5, 2], [2, 1]].
template <Real T> Matrix<T> trap_Q() { return matrix<T>({{T(1), T(2)}, {T(0), T(1)}}); }
template <Real T> Matrix<T> trap_K() { return matrix<T>({{T(1), T(0)}, {T(2), T(1)}}); }

} // namespace tapegrad::chapter
