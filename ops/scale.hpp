#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// scale(a, c): multiplication by a constant c of type T (make inexact constants in T: 1 / sqrt(T(d))).
///                                                        a: m x n, result: m x n
///   forward  result[i][j] = c a[i][j]
///   VJP      da[i][j] += c grad[i][j]
template <Real T> Var<T> scale(const Var<T>& a, const T& c, std::string label = {}) {
  Matrix<T> result = a.tape().buffer(a.rows(), a.cols());
  result.noalias() = c * a.value();
  return a.tape().record(
      "Scale", {a}, std::move(result), [c](Backprop<T>& bp) { bp.accumulate(0, c * bp.grad()); },
      [c](const std::vector<Var<T>>& in) { return scale(in[0], c); }, std::move(label));
}

} // namespace tapegrad
