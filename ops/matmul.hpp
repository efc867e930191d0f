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

/// Whether a product's operand is used as it is or transposed.
enum class Transposed { no, yes };

/// c = op(a) op(b) with the fastest kernel measured for T: Eigen for float and double (which hands the
/// product to OpenBLAS when the build uses BLAS), plain loops otherwise. c must be shaped already and must
/// not alias a or b.
template <Real T> void product(Matrix<T>& c, const Matrix<T>& a, Transposed ta, const Matrix<T>& b, Transposed tb) {
  assert(c.rows() == (ta == Transposed::no ? a.rows() : a.cols()));
  assert(c.cols() == (tb == Transposed::no ? b.cols() : b.rows()));
  if constexpr (std::is_floating_point_v<T>) { // Eigen (OpenBLAS behind it when the build uses BLAS)
    if (ta == Transposed::no && tb == Transposed::no)
      c.noalias() = a * b;
    else if (ta == Transposed::no)
      c.noalias() = a * b.transpose();
    else if (tb == Transposed::no)
      c.noalias() = a.transpose() * b;
    else
      c.noalias() = a.transpose() * b.transpose();
  } else {
    if (ta == Transposed::no && tb == Transposed::no)
      matmul_loops(c, a, b);
    else { // the loops read rows of a and of b: transposed operands are copied first (O(n^2) beside O(n^3))
      Matrix<T> at, bt;
      if (ta == Transposed::yes) at = a.transpose();
      if (tb == Transposed::yes) bt = b.transpose();
      matmul_loops(c, ta == Transposed::yes ? at : a, tb == Transposed::yes ? bt : b);
    }
  }
}
template <Real T> void product(Matrix<T>& c, const Matrix<T>& a, const Matrix<T>& b) {
  product(c, a, Transposed::no, b, Transposed::no);
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
struct MatMulOp {
  static constexpr OpInfo info{.name = "matmul",
                               .call = "matmul(a, b)",
                               .node = "MatMul",
                               .file = "matmul.hpp",
                               .arity = 2,
                               .formula = "result[i][j] = sum_k a[i][k] b[k][j]",
                               .shapes = "a: m x n, b: n x p -> m x p"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    if (in[0].cols() != in[1].rows())
      shape_mismatch("matmul", in[0], in[1], "columns of the left must equal rows of the right");
    return {in[0].rows(), in[1].cols()};
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> MatMulOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Shape s = shape(in, p);
  tape.check_entries(s.rows, s.cols, [&] { return "matmul(" + in[0].name() + ", " + in[1].name() + "): the result"; });
  Matrix<T> result = tape.buffer(s.rows, s.cols);
  product(result, in[0].value(), in[1].value());
  return tape.template record<MatMulOp>(
      in, std::move(result),
      [](Backprop<T>& bp) {
        if constexpr (std::is_floating_point_v<T>) { // Eigen evaluates into the adjoint (+= is gemm's beta = 1)
          bp.accumulate(0, bp.grad() * bp.input(1).transpose());
          bp.accumulate(1, bp.input(0).transpose() * bp.grad());
        } else { // written straight into the adjoint when it is the first contribution: no product temporary
          bp.accumulate_with(
              0, [&](Matrix<T>& da) { product(da, bp.grad(), Transposed::no, bp.input(1), Transposed::yes); });
          bp.accumulate_with(
              1, [&](Matrix<T>& db) { product(db, bp.input(0), Transposed::yes, bp.grad(), Transposed::no); });
        }
      },
      std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, MatMulOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> matmul(const Var<T>& a, const Var<T>& b, std::string label = {}) {
  return MatMulOp::apply<T>(operands(a, b), {}, std::move(label));
}

} // namespace tapegrad
