#pragma once
#include "sum.hpp"

namespace tapegrad {

/// mean(a), mean(a, axis), mean(a, dims, keepdim): sum (ops/sum.hpp) divided by the number of entries each result
/// entry adds up, N (made in T, not rounded through double).
///   forward  result = sum(a, ...) / N
///   VJP      da[i] += grad[i with the reduced dims at 0] / N
struct MeanOp {
  static constexpr OpInfo info{.name = "mean",
                               .call = "mean(a, axis)",
                               .node = "Mean",
                               .file = "mean.hpp",
                               .params = reduction_params,
                               .formula = "result = the mean of a's entries over dim (all when absent)",
                               .shapes = "as sum's"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    return reduced_shape("mean", in[0], p);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> MeanOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return record_reduce_sum<MeanOp>(in, p, std::move(label), true);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, MeanOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> mean(const Var<T>& a, std::string label = {}) {
  return MeanOp::apply<T>(operands(a), {}, std::move(label));
}
template <Real T> Var<T> mean(const Var<T>& a, long axis, std::string label = {}) {
  return MeanOp::apply<T>(operands(a), Params<T>().set("axis", axis), std::move(label));
}
/// mean(a, {dims}, keepdim): torch.mean(a, dims, keepdim).
template <Real T> Var<T> mean(const Var<T>& a, std::vector<long> dims, bool keepdim = false, std::string label = {}) {
  return MeanOp::apply<T>(operands(a), Params<T>().set("dim", std::move(dims)).set("keepdim", keepdim),
                          std::move(label));
}
/// The same with the dims in braces: mean(a, {1}) reduces dim 1 (an initializer list is chosen over the axis overload).
template <Real T>
Var<T> mean(const Var<T>& a, std::initializer_list<long> dims, bool keepdim = false, std::string label = {}) {
  return mean(a, std::vector<long>(dims), keepdim, std::move(label));
}

} // namespace tapegrad
