#pragma once
#include "broadcast.hpp"

namespace tapegrad {

/// The "axis" parameter of sum and mean: optional; absent, every entry is reduced.
inline constexpr ParamSpec axis_param[] = {
    {"axis",
     ParamType::integer,
     {},
     "0: each column over the rows (1 x n); 1: each row over the columns (m x 1)",
     true,
     true}};

/// The shape of a reduction of a: 1 x 1 without "axis", 1 x n for axis 0, m x 1 for axis 1; another axis is a
/// ShapeError naming the op, the operand and the axis.
template <class A, Real T> Shape reduced_shape(std::string_view op, const A& a, const Params<T>& p) {
  if (!p.has("axis")) return {1, 1};
  const long axis = p.integer("axis");
  if (axis == 0) return {1, a.cols()};
  if (axis == 1) return {a.rows(), 1};
  throw ShapeError(std::string(op) + "(" + a.name() + ", axis " + std::to_string(axis) +
                   "): axis is 0 (each column summed over the rows) or 1 (each row summed over the columns)");
}

/// How many entries each result entry of the reduction adds up (m n, m or n).
template <Real T> Eigen::Index reduced_count(const Matrix<T>& a, const Params<T>& p) {
  if (!p.has("axis")) return a.size();
  return p.integer("axis") == 0 ? a.rows() : a.cols();
}

/// result = the sums of a as reduced_shape says (Eigen's reductions: for double, in vectorised partial sums).
template <Real T> void reduce_sum(Matrix<T>& result, const Matrix<T>& a, const Params<T>& p) {
  if (!p.has("axis"))
    result(0, 0) = a.sum();
  else if (p.integer("axis") == 0)
    result.noalias() = a.colwise().sum();
  else
    result.noalias() = a.rowwise().sum();
}

/// sum(a) and sum(a, axis): entries added, over everything (1 x 1) or along one axis.   a: m x n
///   forward  no axis: result[0][0] = sum_{i,j} a[i][j]
///            axis 0:  result[0][j] = sum_i a[i][j]        (1 x n)
///            axis 1:  result[i][0] = sum_j a[i][j]        (m x 1)
///   VJP      da[i][j] += grad[i'][j']  (the result entry a[i][j] was added into: grad repeated to m x n)
struct SumOp {
  static constexpr OpInfo info{.name = "sum",
                               .call = "sum(a, axis)",
                               .node = "Sum",
                               .file = "sum.hpp",
                               .params = axis_param,
                               .formula = "result = sum_ij a[i][j]; axis 0: sum_i a[i][j]; axis 1: sum_j a[i][j]",
                               .shapes = "a: m x n -> 1 x 1; axis 0: 1 x n; axis 1: m x 1"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    return reduced_shape("sum", in[0], p);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> SumOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Shape s = shape(in, p);
  Matrix<T> result = tape.buffer(s.rows, s.cols);
  reduce_sum(result, in[0].value(), p);
  return tape.template record<SumOp>(
      in, std::move(result),
      [](Backprop<T>& bp) {
        const Matrix<T>& a = bp.input(0);
        with_expanded(bp.grad(), a.rows(), a.cols(), [&](const auto& g) { bp.accumulate(0, g); });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SumOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> sum(const Var<T>& a, std::string label = {}) {
  return SumOp::apply<T>(operands(a), {}, std::move(label));
}
template <Real T> Var<T> sum(const Var<T>& a, long axis, std::string label = {}) {
  return SumOp::apply<T>(operands(a), Params<T>().set("axis", axis), std::move(label));
}

} // namespace tapegrad
