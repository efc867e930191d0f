#pragma once
#include "softmax_rows.hpp"

#include <optional>
#include <vector>

namespace tapegrad {

namespace detail {

/// The rows a two-operand loss (cross_entropy(L, T), nll_loss(P, T)) reads: logits or log-probabilities L of shape
/// (N, C) with int targets T of shape (N), or (C) with T of rank 0 (one row), torch's "reduction" ("mean" or "sum")
/// and "ignore_index" (rows whose target is it count neither in the sum nor in the mean's divisor). Checks the
/// shapes and each target, naming the row; every row ignored under "mean" is an error (torch's 0 / 0).
struct LossRows {
  Eigen::Index rows = 0, classes = 0;
  std::vector<long> target; ///< per row; ignored rows hold -1
  long counted = 0;         ///< rows not ignored
  bool mean = true;

  template <class A, Real T> static LossRows of(std::string_view op, const A& logits, const Params<T>& p) {
    const std::string what = std::string(op) + "(" + logits.name() + ")";
    if (p.has("targets")) throw ShapeError(what + ": \"targets\" together with a target operand");
    const Tensor<long>& t = p.ints("target");
    const Shape& s = logits.shape();
    LossRows r;
    if (!((s.rank() == 2 && t.rank() == 1 && t.shape()[0] == s[0]) || (s.rank() == 1 && t.rank() == 0)))
      throw ShapeError(what + ": " + logits.name() + " is " + shape_string(s) + " and the targets " +
                       shape_string(t.shape()) + "; it takes (N, C) with N targets, or (C) with a rank-0 target");
    r.rows = s.rank() == 2 ? s[0] : 1;
    r.classes = s[s.rank() - 1];
    r.mean = !p.has("reduction") || p.choice("reduction") == "mean";
    const bool ignoring = p.has("ignore_index");
    const long ignore = ignoring ? p.integer("ignore_index") : 0;
    for (Eigen::Index i = 0; i < r.rows; ++i) {
      const long c = t[i];
      if (ignoring && c == ignore) {
        r.target.push_back(-1);
        continue;
      }
      if (c < 0 || c >= r.classes)
        throw ShapeError(what + ": the target of row " + std::to_string(i) + " is " + std::to_string(c) +
                         ", outside [0, " + std::to_string(r.classes) + ")" +
                         (ignoring ? " and not the ignore_index " + std::to_string(ignore) : ""));
      r.target.push_back(c);
      ++r.counted;
    }
    if (r.mean && r.counted == 0)
      throw ShapeError(what + ": every row is ignored, so the mean is 0 / 0 (use \"reduction\": \"sum\")");
    return r;
  }
  /// What each counted row's term is divided by: the rows counted (mean) or 1 (sum).
  long divisor() const { return mean ? counted : 1; }
};

inline constexpr std::string_view reductions[] = {"mean", "sum"};

} // namespace detail

/// cross_entropy(logits, targets): the mean negative log-likelihood of integer targets, one per row.
///   v2 form (a "targets" list):  logits: m x V, result: 1 x 1
///     forward  result = (1/m) sum_i ( lse_i - logits[i][t_i] ),
///              lse_i = mx_i + log sum_k exp(logits[i][k] - mx_i),   mx_i = max_k logits[i][k]
///              (log-sum-exp with the row max taken out: logits of +-1e4 give a finite loss)
///     VJP      dlogits[i][j] += grad (softmax_rows(logits)[i][j] - [j == t_i]) / m   (each row sums to 0)
///   torch form (an int target operand T): logits (N, C) with T (N), or (C) with T rank 0; result rank 0;
///     "reduction" mean (divided by the rows counted) or sum; rows whose target is "ignore_index" count in neither.
/// A row whose target entry is -inf, or holding +inf, is a DomainError naming the row.
struct CrossEntropyOp {
  static constexpr ParamSpec params[] = {
      {"targets", ParamType::indices, {}, "the v2 form: the class index of each row, 0 <= t_i < V", true, true},
      {"target", ParamType::constant, {}, "the torch form: int targets (a graph file's second argument)", false},
      {.name = "reduction",
       .type = ParamType::choice,
       .default_value = {},
       .doc = "the torch form: \"mean\" (default) or \"sum\"",
       .optional = true,
       .choices = detail::reductions},
      {"ignore_index", ParamType::integer, {}, "the torch form: rows with this target are left out", true, true}};
  static constexpr ConstOperand constants[] = {{.position = 1, .param = "target", .boolean = false, .optional = true}};
  static constexpr OpInfo info{.name = "cross_entropy",
                               .call = "cross_entropy(logits, targets)",
                               .node = "CrossEntropy",
                               .file = "cross_entropy.hpp",
                               .params = params,
                               .formula = "result = (1/m) sum_i (logsumexp_k logits[i][k] - logits[i][t_i])",
                               .shapes = "logits: m x V, targets: m indices -> 1 x 1; (N, C) with int T (N) -> []",
                               .dual = "exp, log",
                               .const_operands = constants};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const A& logits = in[0];
    if (p.has("target")) {
      detail::LossRows::of("cross_entropy", logits, p);
      return Shape{};
    }
    if (p.has("reduction") || p.has("ignore_index"))
      throw ShapeError("cross_entropy(" + logits.name() +
                       "): \"reduction\" and \"ignore_index\" belong to the form with a target operand");
    if (!p.has("targets"))
      throw ShapeError("cross_entropy(" + logits.name() + "): needs targets (\"targets\", or a target operand)");
    if (logits.shape().rank() != 2)
      throw ShapeError("cross_entropy(" + logits.name() + "): with \"targets\" it takes a matrix; " + logits.name() +
                       " is " + shape_string(logits.shape()));
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
  const Shape s = shape(in, p);
  detail::LossRows rows;
  if (p.has("target")) {
    rows = detail::LossRows::of("cross_entropy", in[0], p);
  } else {
    rows.rows = in[0].rows();
    rows.classes = in[0].cols();
    rows.target = p.indices("targets");
    rows.counted = rows.rows;
  }
  const Matrix<T>& x = in[0].value(); // one row per loss row in the storage view, both forms
  T total(0);
  for (Eigen::Index i = 0; i < rows.rows; ++i) {
    const long t = rows.target[static_cast<std::size_t>(i)];
    if (t < 0) continue; // ignored
    // a row whose target entry is -inf (or entirely -inf) has no defined loss; +inf has none either
    for (Eigen::Index k = 0; k < x.cols(); ++k)
      if (x(i, k) == infinity<T>())
        throw DomainError("cross_entropy(" + in[0].name() + ")" + (label.empty() ? "" : " for '" + label + "'") +
                          ": row " + std::to_string(i) + " of " + in[0].name() + " holds +inf: its loss is undefined");
    if (x(i, t) == -infinity<T>())
      throw DomainError("cross_entropy(" + in[0].name() + ")" + (label.empty() ? "" : " for '" + label + "'") +
                        ": row " + std::to_string(i) + " of " + in[0].name() + " has -inf at its target " +
                        std::to_string(t) + (masked_row(x, i) ? " (the row is entirely -inf)" : "") +
                        ": its loss is infinite (the target is masked)");
    const RowLogSumExp<T> lse = row_log_sum_exp(x, i);
    total += lse.max + lse.log_total - x(i, t);
  }
  Matrix<T> result = tape.buffer(s);
  result(0, 0) = total / T(rows.divisor());
  return tape.template record<CrossEntropyOp>(
      in, s, std::move(result),
      [rows](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& d) {
          softmax_rows_value(d, bp.input(0));
          for (Eigen::Index i = 0; i < d.rows(); ++i) {
            const long t = rows.target[static_cast<std::size_t>(i)];
            if (t < 0)
              d.row(i).setZero();
            else
              d(i, t) -= T(1);
          }
          d *= bp.grad()(0, 0) / T(rows.divisor());
        });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, CrossEntropyOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> cross_entropy(const Var<T>& logits, const std::vector<long>& targets, std::string label = {}) {
  return CrossEntropyOp::apply<T>(operands(logits), Params<T>().set("targets", targets), std::move(label));
}

/// How a two-operand loss reduces its rows, and which target it ignores.
struct LossOptions {
  bool sum = false;                      ///< "sum" instead of "mean"
  std::optional<long> ignore_index = {}; ///< rows with this target are left out
};

template <Real T> Params<T> loss_params(const Tensor<long>& targets, const LossOptions& o) {
  Params<T> p;
  p.set("target", std::make_shared<const Tensor<long>>(targets));
  p.set("reduction", Choice{o.sum ? "sum" : "mean"});
  if (o.ignore_index) p.set("ignore_index", *o.ignore_index);
  return p;
}

/// torch.nn.functional.cross_entropy(logits, targets, reduction, ignore_index): logits (N, C) with targets (N), or
/// (C) with a rank-0 target; a rank-0 result. (A template, so that a braced list of targets still means the v2 form.)
template <Real T, class Targets>
requires std::same_as<Targets, Tensor<long>> Var<T> cross_entropy(const Var<T>& logits, const Targets& targets,
                                                                  LossOptions o = {}, std::string label = {}) {
  return CrossEntropyOp::apply<T>(operands(logits), loss_params<T>(targets, o), std::move(label));
}

/// nll_loss(logp, targets): torch.nn.functional.nll_loss: the same shapes, keys and rules as cross_entropy's torch
/// form, with -logp[i][t_i] as each row's term.
///   forward  result = sum over counted rows of -logp[i][t_i], divided by their count ("mean") or not ("sum")
///   VJP      dlogp[i][t_i] += -grad / divisor for each counted row; 0 elsewhere
struct NllLossOp {
  static constexpr ParamSpec params[] = {
      {"target", ParamType::constant, {}, "int targets (a graph file's second argument)", false},
      {.name = "reduction",
       .type = ParamType::choice,
       .default_value = {},
       .doc = "\"mean\" (default) or \"sum\"",
       .optional = true,
       .choices = detail::reductions},
      {"ignore_index", ParamType::integer, {}, "rows with this target are left out", true, true}};
  static constexpr ConstOperand constants[] = {{.position = 1, .param = "target", .boolean = false}};
  static constexpr OpInfo info{.name = "nll_loss",
                               .call = "nll_loss(logp, targets, options)",
                               .node = "NllLoss",
                               .file = "cross_entropy.hpp",
                               .params = params,
                               .formula = "result = (1/N) sum_i -logp[i][t_i] (mean) or the sum",
                               .shapes = "logp: (N, C) with int T (N), or (C) with T rank 0 -> []",
                               .const_operands = constants};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    detail::LossRows::of("nll_loss", in[0], p);
    return Shape{};
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> NllLossOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const detail::LossRows rows = detail::LossRows::of("nll_loss", in[0], p);
  const Matrix<T>& x = in[0].value();
  T total(0);
  for (Eigen::Index i = 0; i < rows.rows; ++i)
    if (const long t = rows.target[static_cast<std::size_t>(i)]; t >= 0) total -= x(i, t);
  Matrix<T> result = tape.buffer(Shape{});
  result(0, 0) = total / T(rows.divisor());
  return tape.template record<NllLossOp>(
      in, Shape{}, std::move(result),
      [rows](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& d) {
          d.setZero();
          const T share = -bp.grad()(0, 0) / T(rows.divisor());
          for (Eigen::Index i = 0; i < rows.rows; ++i)
            if (const long t = rows.target[static_cast<std::size_t>(i)]; t >= 0) d(i, t) = share;
        });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, NllLossOp, T)
#include "../autodiff/instances.hpp"

template <Real T>
Var<T> nll_loss(const Var<T>& logp, const Tensor<long>& targets, LossOptions o = {}, std::string label = {}) {
  return NllLossOp::apply<T>(operands(logp), loss_params<T>(targets, o), std::move(label));
}

} // namespace tapegrad
