#pragma once
#include "sum.hpp"

namespace tapegrad {

/// mean(a) and mean(a, axis): sum(a) or sum(a, axis) divided by the number of entries each result entry
/// adds up, N = m n, m or n (made in T, not rounded through double).   a: m x n
///   forward  no axis: result[0][0] = (1/N) sum_{i,j} a[i][j]; axis 0: (1/m) sum_i a[i][j]; axis 1: (1/n) sum_j
///   VJP      da[i][j] += grad[i'][j'] / N
struct MeanOp {
  static constexpr OpInfo info{.name = "mean",
                               .call = "mean(a, axis)",
                               .node = "Mean",
                               .file = "mean.hpp",
                               .params = axis_param,
                               .formula = "result = sum_ij a[i][j] / (m n); axis 0: sum_i a[i][j] / m; axis 1: sum_j "
                                          "a[i][j] / n",
                               .shapes = "a: m x n -> 1 x 1; axis 0: 1 x n; axis 1: m x 1"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    return reduced_shape("mean", in[0], p);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> MeanOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Shape s = shape(in, p);
  const T n = T(static_cast<long>(reduced_count(in[0].value(), p)));
  Matrix<T> result = tape.buffer(s.rows, s.cols);
  reduce_sum(result, in[0].value(), p);
  result /= n;
  return tape.template record<MeanOp>(
      in, std::move(result),
      [n](Backprop<T>& bp) {
        const Matrix<T>& a = bp.input(0);
        with_expanded(bp.grad(), a.rows(), a.cols(), [&](const auto& g) { bp.accumulate(0, g / n); });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, MeanOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> mean(const Var<T>& a, std::string label = {}) {
  return MeanOp::apply<T>(operands(a), {}, std::move(label));
}
template <Real T> Var<T> mean(const Var<T>& a, long axis, std::string label = {}) {
  return MeanOp::apply<T>(operands(a), Params<T>().set("axis", axis), std::move(label));
}

} // namespace tapegrad
