#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// sub(a, b): elementwise difference, shapes equal.       a, b, result: m x n
///   forward  result[i][j] = a[i][j] - b[i][j]
///   VJP      da += grad;  db -= grad
template <Real T> Var<T> sub(const Var<T>& a, const Var<T>& b, std::string label = {}) {
  Tape<T>& tape = same_shape("sub", a, b);
  Matrix<T> result = tape.buffer(a.rows(), a.cols());
  result.noalias() = a.value() - b.value();
  return tape.record(
      "Sub", {a, b}, std::move(result),
      [](Backprop<T>& bp) {
        bp.accumulate(0, bp.grad());
        bp.accumulate(1, -bp.grad());
      },
      [](const std::vector<Var<T>>& in) { return sub(in[0], in[1]); }, std::move(label));
}

} // namespace tapegrad
