#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// matmul(a, b): matrix product.                          a: m x n, b: n x p, result: m x p
///   forward  result[i][j] = sum_k a[i][k] b[k][j]
///   VJP      da[i][k] += sum_j grad[i][j] b[k][j]     da += grad b^T
///            db[k][j] += sum_i a[i][k] grad[i][j]     db += a^T grad
template <Real T> Var<T> matmul(const Var<T>& a, const Var<T>& b, std::string label = {}) {
  Tape<T>& tape = common_tape("matmul", a, b);
  if (a.cols() != b.rows()) shape_mismatch("matmul", a, b, "columns of the left must equal rows of the right");
  Matrix<T> result = a.value() * b.value();
  return tape.record(
      "MatMul", {a, b}, std::move(result),
      [](Backprop<T>& bp) {
        bp.accumulate(0, bp.grad() * bp.input(1).transpose());
        bp.accumulate(1, bp.input(0).transpose() * bp.grad());
      },
      [](const std::vector<Var<T>>& in) { return matmul(in[0], in[1]); }, std::move(label));
}

} // namespace tapegrad
