#pragma once
#include "../autodiff/operands.hpp"
#include "../autodiff/vector_math.hpp"
#include "layout.hpp"

#include <type_traits>

namespace tapegrad {

/// Which code computes a row of softmax_rows_value for double: softmax_row when it takes the row (an AVX-512 CPU,
/// no NaN, a finite max), or the general path for every row (its exps still exp_in_place's widest kernel). The
/// second is there to measure and test the first against.
enum class SoftmaxPath { fused, general };

/// softmax_rows(s): each ROW normalised (one query at a time).    s: m x n, result: m x n
///   forward  result[i][j] = exp(s[i][j] - mx_i) / sum_k exp(s[i][k] - mx_i),   mx_i = max_k s[i][k]
///            (subtracting the row max changes nothing mathematically and keeps exp from overflowing)
///   VJP      ds[i][j] += result[i][j] (grad[i][j] - sum_k result[i][k] grad[i][k])
///            (the Jacobian A_j (delta_jk - A_k); each row of ds sums to 0)
/// Edge cases: -inf entries get weight exactly 0; a row that is entirely -inf (every key masked) gives a
/// row of zeros and zero gradient, no NaN; a row holding a NaN gives NaN. The op refuses a row holding +inf
/// (DomainError naming the row: inf - inf, graph format v3); this kernel alone shares such a row's weight equally
/// among its +inf entries. The VJP uses only the saved result, not s.
/// The forward value alone (also used by graph/verification/faults.hpp to build deliberately wrong variants).
/// For double, each row goes through softmax_row when `path` is fused and it takes the row; the general path
/// below takes the others.
template <Real T>
void softmax_rows_value(Matrix<T>& result, const Matrix<T>& x, SoftmaxPath path = SoftmaxPath::fused) {
  assert(result.rows() == x.rows() && result.cols() == x.cols());
  (void)path; // double's only
  const Eigen::Index n = x.cols();
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    if constexpr (std::is_same_v<T, double>) // the common row in one call (autodiff/vector_math.hpp), if it can
      if (path == SoftmaxPath::fused && n > 0 && softmax_row(&x(i, 0), &result(i, 0), static_cast<std::size_t>(n)))
        continue;
    bool has_nan = false;
    T mx = -infinity<T>();
    if constexpr (std::is_floating_point_v<T>) { // one vectorised pass: the max, NaN when the row holds one
      if (n > 0) mx = x.row(i).template maxCoeff<Eigen::PropagateNaN>();
      has_nan = is_nan(mx);
    } else {
      for (Eigen::Index j = 0; j < n; ++j) {
        has_nan = has_nan || is_nan(x(i, j));
        if (x(i, j) > mx) mx = x(i, j);
      }
    }
    if (has_nan) {
      result.row(i).setConstant(std::numeric_limits<T>::quiet_NaN());
    } else if (mx == -infinity<T>()) {
      result.row(i).setZero();
    } else if (mx == infinity<T>()) {
      for (Eigen::Index j = 0; j < n; ++j)
        result(i, j) = x(i, j) == mx ? T(1) : T(0);
      result.row(i) /= result.row(i).sum();
    } else {
      // exp(x - mx) over the row in one call (vectorised for double, autodiff/vector_math.hpp); -inf - mx is
      // -inf and its exp exactly 0.
      result.row(i).array() = x.row(i).array() - mx;
      exp_in_place(&result(i, 0), static_cast<std::size_t>(n));
      const T total = result.row(i).sum();
      result.row(i) /= total;
    }
  }
}
template <Real T> Matrix<T> softmax_rows_value(const Matrix<T>& x) {
  Matrix<T> result(x.rows(), x.cols());
  softmax_rows_value(result, x);
  return result;
}

/// The VJP alone: ds[i][j] = a[i][j] (g[i][j] - sum_k a[i][k] g[i][k]) from the result a and upstream g.
template <Real T> void softmax_rows_vjp(Matrix<T>& ds, const Matrix<T>& a, const Matrix<T>& g) {
  assert(ds.rows() == a.rows() && ds.cols() == a.cols());
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    if constexpr (std::is_floating_point_v<T>) { // Eigen's vectorised dot and elementwise pass
      const T dot = a.row(i).dot(g.row(i));
      ds.row(i).array() = a.row(i).array() * (g.row(i).array() - dot);
    } else {
      T dot(0);
      for (Eigen::Index k = 0; k < a.cols(); ++k)
        dot += a(i, k) * g(i, k);
      for (Eigen::Index j = 0; j < a.cols(); ++j)
        ds(i, j) = a(i, j) * (g(i, j) - dot);
    }
  }
}
template <Real T> Matrix<T> softmax_rows_vjp(const Matrix<T>& a, const Matrix<T>& g) {
  Matrix<T> ds(a.rows(), a.cols());
  softmax_rows_vjp(ds, a, g);
  return ds;
}

/// What softmax_rows does with a row that is entirely -inf (every key masked).
enum class MaskedRows {
  zero, ///< weights 0, so the attention output of that query is 0 and its gradients 0 (the default)
  error ///< strict: UsageError naming the row
};

/// The op itself, along any dim: softmax_rows is the case dim = -1 of a matrix, each row normalised. Graph files
/// call it "softmax" with optional "dim" (default -1, the last); `strict` (MaskedRows::error) is a C++ option only.
struct SoftmaxRowsOp {
  static constexpr ParamSpec params[] = {
      {"strict", ParamType::integer, "0", "1: a row that is entirely -inf is an error (MaskedRows::error)", false},
      {"dim", ParamType::integer, "-1", "the dim normalised along (negative counts from the end)"}};
  static constexpr OpInfo info{.name = "softmax",
                               .call = "softmax_rows(s, label, masked), softmax(s, dim)",
                               .node = "SoftmaxRows",
                               .file = "softmax_rows.hpp",
                               .params = params,
                               .formula = "result[i][j] = exp(s[i][j] - max_k s[i][k]) / sum_k exp(s[i][k] - max_k "
                                          "s[i][k]), along dim (j)",
                               .shapes = "s: any rank >= 1 -> s's shape",
                               .dual = "exp",
                               .row_normaliser = true};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    op_dim("softmax", in[0], p);
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> SoftmaxRowsOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Var<T>& s = in[0];
  const std::size_t d = op_dim("softmax", s, p);
  const bool strict = p.integer("strict") != 0;
  Matrix<T> result = tape.buffer(s.shape());
  rows_along(
      s.shape(), d, result,
      [&](Matrix<T>& out, const Matrix<T>& x) {
        refuse_plus_inf(x, "softmax", s.name(), label, [&](Eigen::Index i) { return slice_string(s.shape(), d, i); });
        if (strict)
          for (Eigen::Index i = 0; i < x.rows(); ++i)
            if (masked_row(x, i))
              throw UsageError("softmax_rows(" + s.name() + "): " + slice_string(s.shape(), d, i) + " of " + s.name() +
                               " (" + shape_string(s.shape()) +
                               ") is entirely -inf: every key is masked for that query (strict mode, "
                               "MaskedRows::error)");
        softmax_rows_value(out, x);
      },
      s.value());
  return tape.template record<SoftmaxRowsOp>(
      in, s.shape(), std::move(result),
      [d](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& ds) {
          rows_along(
              bp.result_shape(), d, ds,
              [](Matrix<T>& out, const Matrix<T>& a, const Matrix<T>& g) { softmax_rows_vjp(out, a, g); }, bp.result(),
              bp.grad());
        });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SoftmaxRowsOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> softmax_rows(const Var<T>& s, std::string label = {}, MaskedRows masked = MaskedRows::zero) {
  return SoftmaxRowsOp::apply<T>(
      operands(s), Params<T>().set("strict", long{masked == MaskedRows::error}).set("dim", -1L), std::move(label));
}
/// torch.softmax(s, dim).
template <Real T> Var<T> softmax(const Var<T>& s, long dim = -1, std::string label = {}) {
  return SoftmaxRowsOp::apply<T>(operands(s), Params<T>().set("strict", 0L).set("dim", dim), std::move(label));
}

} // namespace tapegrad
