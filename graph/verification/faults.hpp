#pragma once
// The classic gradient bugs, on demand. Each fault is a deliberately wrong op (or a wrongly built graph)
// kept here, apart from ops/, so normal runs never pay for them; FaultyAttention records single-head
// attention with one fault switched on. `tapegrad bugs` shows every check catching each one.

#include "../../ops/ops.hpp"
#include "../models/attention.hpp"

#include <string>
#include <vector>

namespace tapegrad {

enum class Fault {
  none = 0,
  overwrite_fanout = 1,        ///< a VJP assigns into a shared parent instead of adding (TapeOptions)
  softmax_numerator_only = 2,  ///< dS = A * dA: the softmax Jacobian's denominator path dropped
  forward_transpose_lost = 3,  ///< S = Q K instead of Q K^T
  backward_transpose_lost = 4, ///< dK = dS Q instead of dS^T Q
  column_softmax = 5,          ///< softmax normalised over columns instead of rows
  scale_dropped_backward = 6,  ///< 1/sqrt(d) applied forward but not in the backward
  stale_gradients = 7,         ///< backward twice without zero_grad
  saturated_wrong_vjp = 10,    ///< a softmax VJP off by a factor 2, checked where softmax is saturated
};

namespace detail {

/// A deliberately wrong op's descriptor: named like the right op, with its own node type.
constexpr OpInfo fault_op(std::string_view node, std::string_view formula, bool row_normaliser = false,
                          std::size_t arity = 1, std::span<const ParamSpec> params = {}) {
  return OpInfo{.name = "fault",
                .node = node,
                .file = "../graph/verification/faults.hpp",
                .arity = arity,
                .params = params,
                .formula = formula,
                .row_normaliser = row_normaliser};
}

} // namespace detail

/// Softmax whose VJP keeps only the numerator path: ds = A * g (rows of ds no longer sum to 0).
struct SoftmaxNumeratorOnlyOp {
  static constexpr OpInfo info = detail::fault_op("SoftmaxRowsNumeratorOnly", "softmax rows; VJP ds = A * g", true);
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
    return common_tape(info, in).template record<SoftmaxNumeratorOnlyOp>(
        in, softmax_rows_value(in[0].value()),
        [](Backprop<T>& bp) { bp.accumulate(0, bp.result().cwiseProduct(bp.grad())); }, std::move(label));
  }
};
template <Real T> Var<T> softmax_numerator_only(const Var<T>& s, std::string label = {}) {
  return SoftmaxNumeratorOnlyOp::apply<T>(operands(s), {}, std::move(label));
}

/// Softmax whose VJP is twice the right one: its error, like the Jacobian, vanishes on one-hot rows.
struct SoftmaxVjpDoubledOp {
  static constexpr OpInfo info = detail::fault_op("SoftmaxRowsVjpDoubled", "softmax rows; VJP doubled", true);
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
    return common_tape(info, in).template record<SoftmaxVjpDoubledOp>(
        in, softmax_rows_value(in[0].value()),
        [](Backprop<T>& bp) { bp.accumulate(0, T(2) * softmax_rows_vjp(bp.result(), bp.grad())); }, std::move(label));
  }
};
template <Real T> Var<T> softmax_vjp_doubled(const Var<T>& s, std::string label = {}) {
  return SoftmaxVjpDoubledOp::apply<T>(operands(s), {}, std::move(label));
}

/// Softmax over COLUMNS (each key normalised over queries): a wrong forward with a VJP right for it.
struct SoftmaxColumnsOp {
  static constexpr OpInfo info = detail::fault_op("SoftmaxColumns", "softmax over columns");
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
    Matrix<T> at = in[0].value().transpose();
    Matrix<T> result = softmax_rows_value(at).transpose();
    return common_tape(info, in).template record<SoftmaxColumnsOp>(
        in, std::move(result),
        [](Backprop<T>& bp) { // the row-wise VJP on the transposes
          const Matrix<T> at = bp.result().transpose(), gt = bp.grad().transpose();
          bp.accumulate(0, Matrix<T>(softmax_rows_vjp(at, gt).transpose()));
        },
        std::move(label));
  }
};
template <Real T> Var<T> softmax_columns(const Var<T>& s, std::string label = {}) {
  return SoftmaxColumnsOp::apply<T>(operands(s), {}, std::move(label));
}

/// Scores Q K^T whose VJP loses the transpose for K: dK = g Q instead of g^T Q.
struct ScoresBackwardTransposeLostOp {
  static constexpr OpInfo info = detail::fault_op("ScoresNoTransposeVjp", "Q K^T; VJP dK = g Q", false, 2);
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
    Tape<T>& tape = common_tape(info, in);
    if (in[0].cols() != in[1].cols())
      shape_mismatch("scores", in[0], in[1], "Q and K must have the same number of columns");
    Matrix<T> result(in[0].rows(), in[1].rows());
    product(result, in[0].value(), Transposed::no, in[1].value(), Transposed::yes);
    return tape.template record<ScoresBackwardTransposeLostOp>(
        in, std::move(result),
        [](Backprop<T>& bp) {
          bp.accumulate_with(0, [&](Matrix<T>& dq) { product(dq, bp.grad(), bp.input(1)); });
          bp.accumulate_with(1, [&](Matrix<T>& dk) { product(dk, bp.grad(), bp.input(0)); }); // should be grad^T Q
        },
        std::move(label));
  }
};
template <Real T> Var<T> scores_backward_transpose_lost(const Var<T>& q, const Var<T>& k, std::string label = {}) {
  return ScoresBackwardTransposeLostOp::apply<T>(operands(q, k), {}, std::move(label));
}

/// Scale whose VJP forgets the factor: da = g instead of c g.
struct ScaleForgottenBackwardOp {
  static constexpr OpInfo info =
      detail::fault_op("ScaleNoFactorVjp", "factor a; VJP da = g", false, 1, ScaleOp::params);
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return common_tape(info, in).template record<ScaleForgottenBackwardOp>(
        in, Matrix<T>(p.number("factor") * in[0].value()), [](Backprop<T>& bp) { bp.accumulate(0, bp.grad()); },
        std::move(label), p);
  }
};
template <Real T> Var<T> scale_forgotten_backward(const Var<T>& a, const T& c, std::string label = {}) {
  return ScaleForgottenBackwardOp::apply<T>(operands(a), Params<T>().number("factor", c), std::move(label));
}

/// J = probe(attention(X, Wq, Wk, Wv), G) with one fault in it; inputs {X, Wq, Wk, Wv, G}. Faults 1 and 7
/// live in how the tape is used (TapeOptions, backward twice), so the graph itself is the correct one.
struct FaultyAttention {
  Fault fault = Fault::none;
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    using std::sqrt;
    const Var<U> Q = matmul(in[0], in[1], "Q"), K = matmul(in[0], in[2], "K"), V = matmul(in[0], in[3], "V");
    const U c = U(1) / sqrt(U(static_cast<long>(Q.cols())));
    Var<U> S0;
    if (fault == Fault::forward_transpose_lost)
      S0 = matmul(Q, K, "S0");
    else if (fault == Fault::backward_transpose_lost)
      S0 = scores_backward_transpose_lost(Q, K, "S0");
    else
      S0 = matmul(Q, transpose(K, "Kt"), "S0");
    const Var<U> S = fault == Fault::scale_dropped_backward ? scale_forgotten_backward(S0, c, "S") : scale(S0, c, "S");
    Var<U> A;
    if (fault == Fault::softmax_numerator_only)
      A = softmax_numerator_only(S, "A");
    else if (fault == Fault::column_softmax)
      A = softmax_columns(S, "A");
    else if (fault == Fault::saturated_wrong_vjp)
      A = softmax_vjp_doubled(S, "A");
    else
      A = softmax_rows(S, "A");
    return probe(matmul(A, V, "O"), in[4]);
  }
};

} // namespace tapegrad
