#pragma once
#include "../autodiff/operands.hpp"

#include <cassert>
#include <type_traits>

namespace tapegrad {

/// a b in plain loops, i-k-j order over row-major storage (each a[i][k] once, rows of b streamed). For
/// multiprecision types this beats Eigen's GEMM, whose blocking and packing pay only for native types
/// (bench/matmul.cpp measures both).
template <Real T> void matmul_loops(Matrix<T>& c, const Matrix<T>& a, const Matrix<T>& b) {
  assert(a.cols() == b.rows() && c.rows() == a.rows() && c.cols() == b.cols());
  c.setZero();
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index k = 0; k < a.cols(); ++k) {
      const T& aik = a(i, k);
      for (Eigen::Index j = 0; j < b.cols(); ++j)
        if constexpr (std::is_same_v<T, mpfr_real>) // one fused multiply-add, no temporary number per term
          mpfr_fma(c(i, j).backend().data(), aik.backend().data(), b(k, j).backend().data(), c(i, j).backend().data(),
                   MPFR_RNDN);
        else
          c(i, j) += aik * b(k, j);
    }
}
template <Real T> Matrix<T> matmul_loops(const Matrix<T>& a, const Matrix<T>& b) {
  Matrix<T> c(a.rows(), b.cols());
  matmul_loops(c, a, b);
  return c;
}

/// c = a b with the fastest kernel measured for T: Eigen for native floating point, loops otherwise. c must
/// be shaped already and must not alias a or b.
template <Real T> void product(Matrix<T>& c, const Matrix<T>& a, const Matrix<T>& b) {
  if constexpr (std::is_floating_point_v<T>)
    c.noalias() = a * b;
  else
    matmul_loops(c, a, b);
}
template <Real T> Matrix<T> product(const Matrix<T>& a, const Matrix<T>& b) {
  Matrix<T> c(a.rows(), b.cols());
  product(c, a, b);
  return c;
}

/// matmul(a, b): matrix product.                          a: m x n, b: n x p, result: m x p
///   forward  result[i][j] = sum_k a[i][k] b[k][j]
///   VJP      da[i][k] += sum_j grad[i][j] b[k][j]     da += grad b^T
///            db[k][j] += sum_i a[i][k] grad[i][j]     db += a^T grad
template <Real T> Var<T> matmul(const Var<T>& a, const Var<T>& b, std::string label = {}) {
  Tape<T>& tape = common_tape("matmul", a, b);
  if (a.cols() != b.rows()) shape_mismatch("matmul", a, b, "columns of the left must equal rows of the right");
  tape.check_entries(a.rows(), b.cols(), [&] { return "matmul(" + a.name() + ", " + b.name() + "): the result"; });
  Matrix<T> result = tape.buffer(a.rows(), b.cols());
  product(result, a.value(), b.value());
  return tape.record(
      "MatMul", {a, b}, std::move(result),
      [](Backprop<T>& bp) {
        if constexpr (std::is_floating_point_v<T>) {
          bp.accumulate(0, bp.grad() * bp.input(1).transpose());
          bp.accumulate(1, bp.input(0).transpose() * bp.grad());
        } else {
          bp.accumulate(0, product<T>(bp.grad(), bp.input(1).transpose()));
          bp.accumulate(1, product<T>(bp.input(0).transpose(), bp.grad()));
        }
      },
      [](const std::vector<Var<T>>& in) { return matmul(in[0], in[1]); }, std::move(label));
}

} // namespace tapegrad
