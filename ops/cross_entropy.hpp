#pragma once
#include "softmax_rows.hpp"

#include <vector>

namespace tapegrad {

/// cross_entropy(logits, targets): mean negative log-likelihood of integer targets, one per row.
///                                         logits: m x V, targets: m integers in [0, V), result: 1 x 1
///   forward  result = (1/m) sum_i ( lse_i - logits[i][t_i] ),
///            lse_i = mx_i + log sum_k exp(logits[i][k] - mx_i),   mx_i = max_k logits[i][k]
///            (log-sum-exp with the row max taken out: logits of +-1e4 give a finite loss)
///   VJP      dlogits[i][j] += grad (softmax_rows(logits)[i][j] - [j == t_i]) / m
///            (each row of dlogits sums to 0)
struct CrossEntropyOp {
  static constexpr ParamSpec params[] = {
      {"targets", ParamType::indices, {}, "the class index of each row, 0 <= t_i < V"}};
  static constexpr OpInfo info{.name = "cross_entropy",
                               .call = "cross_entropy(logits, targets)",
                               .node = "CrossEntropy",
                               .file = "cross_entropy.hpp",
                               .params = params,
                               .formula = "result = (1/m) sum_i (logsumexp_k logits[i][k] - logits[i][t_i])",
                               .shapes = "logits: m x V, targets: m indices -> 1 x 1",
                               .dual = "exp, log"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const A& logits = in[0];
    const std::vector<long>& targets = p.indices("targets");
    if (static_cast<Eigen::Index>(targets.size()) != logits.rows())
      throw ShapeError("cross_entropy(" + logits.name() + "): " + logits.name() + " is " +
                       shape_string(logits.rows(), logits.cols()) + " but there are " + std::to_string(targets.size()) +
                       " targets; it needs one per row");
    for (std::size_t i = 0; i < targets.size(); ++i)
      if (targets[i] < 0 || targets[i] >= logits.cols())
        throw ShapeError("cross_entropy(" + logits.name() + "): target " + std::to_string(i) + " is " +
                         std::to_string(targets[i]) + " but " + logits.name() + " is " +
                         shape_string(logits.rows(), logits.cols()) + "; targets are column indices 0.." +
                         std::to_string(logits.cols() - 1));
    return {1, 1};
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> CrossEntropyOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  shape(in, p);
  const std::vector<long>& targets = p.indices("targets");
  const Matrix<T>& x = in[0].value();
  T total(0);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    // graph-format-v2: a row that is entirely -inf, or whose target entry is -inf, has no defined loss
    if (x(i, targets[static_cast<std::size_t>(i)]) == -infinity<T>())
      throw DomainError("cross_entropy(" + in[0].name() + ")" + (label.empty() ? "" : " for '" + label + "'") +
                        ": row " + std::to_string(i) + " of " + in[0].name() + " has -inf at its target " +
                        std::to_string(targets[static_cast<std::size_t>(i)]) +
                        (masked_row(x, i) ? " (the row is entirely -inf)" : "") +
                        ": its loss is infinite (the target is masked)");
    const RowLogSumExp<T> lse = row_log_sum_exp(x, i);
    total += lse.max + lse.log_total - x(i, targets[static_cast<std::size_t>(i)]);
  }
  Matrix<T> result = tape.buffer(1, 1);
  result(0, 0) = total / T(static_cast<long>(x.rows()));
  return tape.template record<CrossEntropyOp>(
      in, std::move(result),
      [targets](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& d) {
          softmax_rows_value(d, bp.input(0));
          for (Eigen::Index i = 0; i < d.rows(); ++i)
            d(i, targets[static_cast<std::size_t>(i)]) -= T(1);
          d *= bp.grad()(0, 0) / T(static_cast<long>(d.rows()));
        });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, CrossEntropyOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> cross_entropy(const Var<T>& logits, const std::vector<long>& targets, std::string label = {}) {
  return CrossEntropyOp::apply<T>(operands(logits), Params<T>().set("targets", targets), std::move(label));
}

} // namespace tapegrad
