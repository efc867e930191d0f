#pragma once
#include "broadcast.hpp"

namespace tapegrad {

/// The parameters of sum and mean: v2's "axis" (a matrix's 0 or 1), or "dim" (one dim or a list) with "keepdim";
/// with neither, every entry is reduced.
inline constexpr ParamSpec reduction_params[] = {
    {"axis",
     ParamType::integer,
     {},
     "matrices only: 0: each column over the rows (1 x n); 1: each row over the columns (m x 1)",
     true,
     true},
    {"dim", ParamType::dims, {}, "the dims reduced (an integer or a list); absent: every entry", true, true},
    {"keepdim",
     ParamType::boolean,
     {},
     "keep each reduced dim as a size 1 (default false; only with dim)",
     true,
     true}};

/// The reduction's result shape with every reduced dim kept as a size 1 (so it broadcasts back to a's shape), or a
/// ShapeError naming the op, the operand and the parameter that does not fit.
template <class A, Real T> Shape kept_shape(std::string_view op, const A& a, const Params<T>& p) {
  const Shape& s = a.shape();
  const std::string what = std::string(op) + "(" + a.name() + ")";
  if (p.has("keepdim") && !p.has("dim")) throw ShapeError(what + ": keepdim is given without dim");
  if (p.has("axis")) {
    if (p.has("dim")) throw ShapeError(what + ": axis and dim together (axis is a matrix's; dim is any rank's)");
    const long axis = p.integer("axis");
    if (axis != 0 && axis != 1)
      throw ShapeError(std::string(op) + "(" + a.name() + ", axis " + std::to_string(axis) +
                       "): axis is 0 (each column summed over the rows) or 1 (each row summed over the columns)");
    if (s.rank() != 2)
      throw ShapeError(what + ": axis is for matrices, " + a.name() + " is " + shape_string(s) + " (rank " +
                       std::to_string(s.rank()) + "); use dim");
    return axis == 0 ? Shape{1, s[1]} : Shape{s[0], 1};
  }
  Shape kept = s;
  if (!p.has("dim")) {
    for (std::size_t k = 0; k < s.rank(); ++k)
      kept[k] = 1;
    return kept;
  }
  const std::vector<long>& dims = p.dims("dim");
  if (dims.empty()) throw ShapeError(what + ": dim is an empty list");
  const auto chosen = dim_set(dims, s.rank(), what);
  for (std::size_t k = 0; k < s.rank(); ++k)
    if (chosen[k]) kept[k] = 1;
  return kept;
}

/// The shape of a reduction of a: kept_shape, without the reduced dims when "dim" is given and keepdim is not.
template <class A, Real T> Shape reduced_shape(std::string_view op, const A& a, const Params<T>& p) {
  const Shape kept = kept_shape(op, a, p);
  if (!p.has("dim") || p.boolean_or("keepdim", false)) return kept;
  const auto chosen = dim_set(p.dims("dim"), a.shape().rank(), op);
  Shape out;
  for (std::size_t k = 0; k < kept.rank(); ++k)
    if (!chosen[k]) out.push_back(kept[k]);
  return out;
}

/// result = a summed down to shape `kept` (which broadcasts to a's shape `as`), in the storage views: Eigen's
/// reductions where the reduced entries are the whole view, its columns or its rows (for double, vectorised
/// partial sums), sum_to otherwise. The result's entries are in `kept`'s order, which dropping size-1 dims keeps.
template <Real T> void reduce_sum(Matrix<T>& result, const Matrix<T>& a, const Shape& as, const Shape& kept) {
  switch (expansion(kept, as)) {
  case Expansion::same:
    result = a.template reshaped<Eigen::RowMajor>(result.rows(), result.cols());
    break;
  case Expansion::constant:
    result(0, 0) = a.sum();
    break;
  case Expansion::row:
    result.noalias() = a.colwise().sum().template reshaped<Eigen::RowMajor>(result.rows(), result.cols());
    break;
  case Expansion::column:
    result.noalias() = a.rowwise().sum().template reshaped<Eigen::RowMajor>(result.rows(), result.cols());
    break;
  case Expansion::general:
    result = sum_to(a, as, kept).template reshaped<Eigen::RowMajor>(result.rows(), result.cols());
    break;
  }
}

/// sum(a), sum(a, axis) and sum(a, dims, keepdim): entries added, over everything or along dims (torch.sum).
///   forward  no dim:  result = sum of every entry, a's rank kept with every size 1 (a matrix gives 1 x 1)
///            dim D:   result[i with the dims in D removed] = sum over those dims of a[i]   (keepdim: kept as 1)
///            axis 0 / 1 (matrices): sum_i a[i][j] (1 x n) / sum_j a[i][j] (m x 1)
///   VJP      da[i] += grad[i with the reduced dims at 0]   (grad repeated back to a's shape)
struct SumOp {
  static constexpr OpInfo info{.name = "sum",
                               .call = "sum(a, axis)",
                               .node = "Sum",
                               .file = "sum.hpp",
                               .params = reduction_params,
                               .formula = "result = the sum of a's entries over dim (all when absent)",
                               .shapes = "a: any rank -> a's without dim (with 1s: keepdim, no dim); axis 0: 1 x "
                                         "n, axis 1: m x 1"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    return reduced_shape("sum", in[0], p);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

/// sum's and mean's recording: the sum of in[0] over the dims kept_shape marks, divided by N, the number of entries
/// each result entry adds up, when `average` (N made in T, not rounded through double). The VJP spreads the
/// upstream gradient back over the operand's shape (divided by N for a mean).
template <class Op, Real T>
Var<T> record_reduce_sum(std::span<const Var<T>> in, const Params<T>& p, std::string label, bool average) {
  Tape<T>& tape = common_tape(Op::info, in);
  const Shape kept = kept_shape(Op::info.name, in[0], p), s = Op::shape(in, p);
  // the count a mean divides by (made only for a mean: T may be MPFR)
  const T n = average ? T(static_cast<long>(in[0].shape().numel() / kept.numel())) : T(1);
  Matrix<T> result = tape.buffer(s);
  reduce_sum(result, in[0].value(), in[0].shape(), kept);
  if (average) result /= n;
  return tape.template record<Op>(
      in, s, std::move(result),
      [n, kept, average](Backprop<T>& bp) {
        const auto back = [&](const Matrix<T>& g) {
          with_expanded(g, kept, bp.input_shape(0), [&](const auto& e) {
            if (average)
              bp.accumulate(0, e / n);
            else
              bp.accumulate(0, e);
          });
        };
        const Matrix<T>& g = bp.grad(); // in the result's view; kept's differs where dims were dropped
        if (g.rows() == kept.rows()) return back(g);
        back(g.template reshaped<Eigen::RowMajor>(kept.rows(), kept.cols()));
      },
      std::move(label), p);
}

template <Real T> Var<T> SumOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return record_reduce_sum<SumOp>(in, p, std::move(label), false);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SumOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> sum(const Var<T>& a, std::string label = {}) {
  return SumOp::apply<T>(operands(a), {}, std::move(label));
}
template <Real T> Var<T> sum(const Var<T>& a, long axis, std::string label = {}) {
  return SumOp::apply<T>(operands(a), Params<T>().set("axis", axis), std::move(label));
}
/// sum(a, {dims}, keepdim): torch.sum(a, dims, keepdim).
template <Real T> Var<T> sum(const Var<T>& a, std::vector<long> dims, bool keepdim = false, std::string label = {}) {
  return SumOp::apply<T>(operands(a), Params<T>().set("dim", std::move(dims)).set("keepdim", keepdim),
                         std::move(label));
}
/// The same with the dims in braces: sum(a, {1}) reduces dim 1 (an initializer list is chosen over the axis overload).
template <Real T>
Var<T> sum(const Var<T>& a, std::initializer_list<long> dims, bool keepdim = false, std::string label = {}) {
  return sum(a, std::vector<long>(dims), keepdim, std::move(label));
}

} // namespace tapegrad
