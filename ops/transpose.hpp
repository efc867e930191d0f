#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// transpose(a).                                          a: m x n, result: n x m
///   forward  result[j][i] = a[i][j]
///   VJP      da[i][j] += grad[j][i]                   da += grad^T
template <Real T> Var<T> transpose(const Var<T>& a, std::string label = {}) {
  Matrix<T> result = a.tape().buffer(a.cols(), a.rows());
  result.noalias() = a.value().transpose();
  return a.tape().record(
      "Transpose", {a}, std::move(result), [](Backprop<T>& bp) { bp.accumulate(0, bp.grad().transpose()); },
      [](const std::vector<Var<T>>& in) { return transpose(in[0]); }, std::move(label));
}

} // namespace tapegrad
