#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// hadamard(a, b): elementwise product, shapes equal.     a, b, result: m x n
///   forward  result[i][j] = a[i][j] b[i][j]
///   VJP      da[i][j] += grad[i][j] b[i][j];   db[i][j] += grad[i][j] a[i][j]
template <Real T> Var<T> hadamard(const Var<T>& a, const Var<T>& b, std::string label = {}) {
  Tape<T>& tape = same_shape("hadamard", a, b);
  Matrix<T> result = tape.buffer(a.rows(), a.cols());
  result.noalias() = a.value().cwiseProduct(b.value());
  return tape.record(
      "Hadamard", {a, b}, std::move(result),
      [](Backprop<T>& bp) {
        bp.accumulate(0, bp.grad().cwiseProduct(bp.input(1)));
        bp.accumulate(1, bp.grad().cwiseProduct(bp.input(0)));
      },
      [](const std::vector<Var<T>>& in) { return hadamard(in[0], in[1]); }, std::move(label));
}

} // namespace tapegrad
