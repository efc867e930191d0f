#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// sum(a): every entry added, to a 1 x 1 value.           a: m x n, result: 1 x 1
///   forward  result = sum_{i,j} a[i][j]
///   VJP      da[i][j] += grad[0][0]
template <Real T> Var<T> sum(const Var<T>& a, std::string label = {}) {
  Matrix<T> result = a.tape().buffer(1, 1);
  result(0, 0) = a.value().sum();
  return a.tape().record(
      "Sum", {a}, std::move(result),
      [](Backprop<T>& bp) {
        const Matrix<T>& a = bp.input(0);
        bp.accumulate(0, Matrix<T>::Constant(a.rows(), a.cols(), bp.grad()(0, 0)));
      },
      [](const std::vector<Var<T>>& in) { return sum(in[0]); }, std::move(label));
}

} // namespace tapegrad
