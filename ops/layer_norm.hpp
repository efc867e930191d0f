#pragma once
#include "normalise.hpp"

namespace tapegrad {

/// layer_norm(a, eps): each ROW centred and scaled to unit variance (no gain or bias: multiply and add them
/// with broadcasting).                                    a: m x n, result: m x n
///   forward  mu_i = (1/n) sum_j a[i][j],  var_i = (1/n) sum_j (a[i][j] - mu_i)^2   (divided by n)
///            result[i][j] = (a[i][j] - mu_i) / sqrt(var_i + eps)
///   VJP      da[i][j] += (grad[i][j] - mean_j grad[i][j] - result[i][j] mean_j(grad[i][j] result[i][j]))
///                        / sqrt(var_i + eps)
/// eps (default the exact decimal 1e-5) keeps a constant row finite; var_i + eps <= 0 gives NaN or +-inf (the formula).
struct LayerNormOp {
  static constexpr OpInfo info{.name = "layer_norm",
                               .call = "layer_norm(a, eps)",
                               .node = "LayerNorm",
                               .file = "layer_norm.hpp",
                               .params = eps_param,
                               .formula = "result[i][j] = (a[i][j] - mu_i) / sqrt(var_i + eps), mu_i and var_i the "
                                          "row's mean and variance (divided by n)",
                               .shapes = "a: m x n -> m x n",
                               .dual = "sqrt"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> LayerNormOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return detail::record_normalise<LayerNormOp>(in, p, std::move(label), true);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, LayerNormOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> layer_norm(const Var<T>& a, std::string label = {}) {
  return LayerNormOp::apply<T>(operands(a), default_eps<T>(), std::move(label));
}
template <Real T> Var<T> layer_norm(const Var<T>& a, const T& eps, std::string label = {}) {
  return LayerNormOp::apply<T>(operands(a), Params<T>().number("eps", eps), std::move(label));
}

} // namespace tapegrad
