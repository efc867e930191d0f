#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// log_softmax(a): each ROW's log-probabilities.          a: m x n, result: m x n
///   forward  result[i][j] = a[i][j] - mx_i - log(sum_k exp(a[i][k] - mx_i)),   mx_i = max_k a[i][k]
///            (the row max subtracted: finite for entries as far apart as +-1e4)
///   VJP      da[i][j] += grad[i][j] - p[i][j] sum_k grad[i][k],   p = exp(result), k over finite entries
/// A -inf entry (after a mask) gives -inf, with gradient 0, and takes no part in the sums. A row that is
/// entirely -inf is a DomainError naming the node and the row. A row holding +inf or NaN gives what the
/// formula gives there (NaN), as graph-format-v2 defines no error for it.
struct LogSoftmaxOp {
  static constexpr OpInfo info{.name = "log_softmax",
                               .call = "log_softmax(a)",
                               .node = "LogSoftmax",
                               .file = "log_softmax.hpp",
                               .formula = "result[i][j] = a[i][j] - max_k a[i][k] - log(sum_k exp(a[i][k] - max_k "
                                          "a[i][k]))",
                               .shapes = "a: m x n -> m x n",
                               .dual = "exp, log",
                               .masks = true};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> LogSoftmaxOp::apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Matrix<T>& x = in[0].value();
  Matrix<T> result = tape.buffer(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    if (masked_row(x, i))
      throw DomainError("log_softmax(" + in[0].name() + ")" + (label.empty() ? "" : " for '" + label + "'") + ": row " +
                        std::to_string(i) + " of " + in[0].name() +
                        " is entirely -inf (every entry masked): its log-probabilities are undefined");
    const RowLogSumExp<T> lse = row_log_sum_exp(x, i);
    for (Eigen::Index j = 0; j < x.cols(); ++j) // (x - mx) first: exact where x is near mx, however large mx
      result(i, j) = x(i, j) == -infinity<T>() ? -infinity<T>() : (x(i, j) - lse.max) - lse.log_total;
  }
  return tape.template record<LogSoftmaxOp>(
      in, std::move(result),
      [](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& out) {
          const Matrix<T>& g = bp.grad();
          const Matrix<T>& y = bp.result();
          using std::exp;
          for (Eigen::Index i = 0; i < y.rows(); ++i) {
            T total(0);
            for (Eigen::Index k = 0; k < y.cols(); ++k)
              if (y(i, k) != -infinity<T>()) total += g(i, k);
            for (Eigen::Index j = 0; j < y.cols(); ++j)
              out(i, j) = y(i, j) == -infinity<T>() ? T(0) : g(i, j) - exp(y(i, j)) * total;
          }
        });
      },
      std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, LogSoftmaxOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> log_softmax(const Var<T>& a, std::string label = {}) {
  return LogSoftmaxOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
