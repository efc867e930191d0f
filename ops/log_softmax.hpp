#pragma once
#include "../autodiff/operands.hpp"
#include "layout.hpp"

namespace tapegrad {

/// log_softmax(a, dim): log-probabilities along dim (default the last: each ROW of a matrix).  result: a's shape
///   forward  result[i][j] = a[i][j] - mx_i - log(sum_k exp(a[i][k] - mx_i)),   mx_i = max_k a[i][k]   (j along dim)
///            (the max subtracted: finite for entries as far apart as +-1e4)
///   VJP      da[i][j] += grad[i][j] - p[i][j] sum_k grad[i][k],   p = exp(result), k over finite entries
/// A -inf entry (after a mask) gives -inf, with gradient 0, and takes no part in the sums. A slice that is
/// entirely -inf is a DomainError naming the node and the slice, as is a slice holding +inf (inf - inf, graph
/// format v3). A slice holding NaN gives what the formula gives there (NaN).
struct LogSoftmaxOp {
  static constexpr ParamSpec params[] = {
      {"dim", ParamType::integer, "-1", "the dim normalised along (negative counts from the end)"}};
  static constexpr OpInfo info{.name = "log_softmax",
                               .call = "log_softmax(a, dim)",
                               .node = "LogSoftmax",
                               .file = "log_softmax.hpp",
                               .params = params,
                               .formula = "result[i][j] = a[i][j] - max_k a[i][k] - log(sum_k exp(a[i][k] - max_k "
                                          "a[i][k])), along dim (j)",
                               .shapes = "a: any rank >= 1 -> a's shape",
                               .dual = "exp, log",
                               .masks = true};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    op_dim("log_softmax", in[0], p);
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> LogSoftmaxOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const std::size_t d = op_dim("log_softmax", in[0], p);
  Matrix<T> result = tape.buffer(in[0].shape());
  rows_along(
      in[0].shape(), d, result,
      [&](Matrix<T>& out, const Matrix<T>& x) {
        refuse_plus_inf(x, "log_softmax", in[0].name(), label,
                        [&](Eigen::Index i) { return slice_string(in[0].shape(), d, i); });
        for (Eigen::Index i = 0; i < x.rows(); ++i) {
          if (masked_row(x, i))
            throw DomainError("log_softmax(" + in[0].name() + ")" + (label.empty() ? "" : " for '" + label + "'") +
                              ": " + slice_string(in[0].shape(), d, i) + " of " + in[0].name() +
                              " is entirely -inf (every entry masked): its log-probabilities are undefined");
          const RowLogSumExp<T> lse = row_log_sum_exp(x, i);
          for (Eigen::Index j = 0; j < x.cols(); ++j) // (x - mx) first: exact where x is near mx, however large mx
            out(i, j) = x(i, j) == -infinity<T>() ? -infinity<T>() : (x(i, j) - lse.max) - lse.log_total;
        }
      },
      in[0].value());
  return tape.template record<LogSoftmaxOp>(
      in, in[0].shape(), std::move(result),
      [d](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& da) {
          rows_along(
              bp.result_shape(), d, da,
              [](Matrix<T>& out, const Matrix<T>& y, const Matrix<T>& g) {
                using std::exp;
                for (Eigen::Index i = 0; i < y.rows(); ++i) {
                  T total(0);
                  for (Eigen::Index k = 0; k < y.cols(); ++k)
                    if (y(i, k) != -infinity<T>()) total += g(i, k);
                  for (Eigen::Index j = 0; j < y.cols(); ++j)
                    out(i, j) = y(i, j) == -infinity<T>() ? T(0) : g(i, j) - exp(y(i, j)) * total;
                }
              },
              bp.result(), bp.grad());
        });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, LogSoftmaxOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> log_softmax(const Var<T>& a, std::string label = {}) {
  return LogSoftmaxOp::apply<T>(operands(a), Params<T>().set("dim", -1L), std::move(label));
}
/// torch.log_softmax(a, dim).
template <Real T> Var<T> log_softmax(const Var<T>& a, long dim, std::string label = {}) {
  return LogSoftmaxOp::apply<T>(operands(a), Params<T>().set("dim", dim), std::move(label));
}

} // namespace tapegrad
