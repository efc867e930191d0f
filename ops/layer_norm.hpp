#pragma once
#include "normalise.hpp"

namespace tapegrad {

/// layer_norm(a, weight, bias): each group of the last k dims (k = normalized_shape's length, default 1: a row)
/// centred and scaled to unit variance, then times weight and plus bias (torch.nn.functional.layer_norm).
///   forward  mu = mean of the group's K entries,  var = (1/K) sum (x - mu)^2   (divided by K)
///            result[i][k] = (x[i][k] - mu_i) / sqrt(var_i + eps) w[k] + b[k]    (i a group, k its entry)
///   VJP      h = grad w;  da[i][k] += (h[i][k] - mean_k h[i][k] - y[i][k] mean_k(h[i][k] y[i][k])) / sqrt(var_i + eps)
///            dw[k] += sum_i grad[i][k] y[i][k],  db[k] += sum_i grad[i][k]        (y the normalised x)
/// eps (default the exact decimal 1e-5) keeps a constant group finite; var + eps <= 0 gives NaN or +-inf (the formula).
struct LayerNormOp {
  static constexpr OpInfo info{.name = "layer_norm",
                               .call = "layer_norm(a, weight, bias, options)",
                               .node = "LayerNorm",
                               .file = "layer_norm.hpp",
                               .optional_operands = 2,
                               .params = normalise_params,
                               .formula = "result[i][k] = (a[i][k] - mu_i) / sqrt(var_i + eps) w[k] + b[k], mu_i and "
                                          "var_i the mean and variance (divided by K) of group i",
                               .shapes = "a: any rank >= 1, weight and bias: normalized_shape (a's last sizes) -> "
                                         "a's shape",
                               .dual = "sqrt"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    return detail::normalise_shape("layer_norm", in, p);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> LayerNormOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return detail::record_normalise<LayerNormOp>(in, p, std::move(label), true);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, LayerNormOp, T)
#include "../autodiff/instances.hpp"

/// layer_norm(a): over the last dim, eps the decimal 1e-5.
template <Real T> Var<T> layer_norm(const Var<T>& a, std::string label = {}) {
  return LayerNormOp::apply<T>(operands(a), default_eps<T>(), std::move(label));
}
template <Real T> Var<T> layer_norm(const Var<T>& a, const T& eps, std::string label = {}) {
  return LayerNormOp::apply<T>(operands(a), Params<T>().number("eps", eps), std::move(label));
}
/// layer_norm(a, {.normalized_shape = {T, D}}): over the last dims given.
template <Real T> Var<T> layer_norm(const Var<T>& a, const NormOptions<T>& options, std::string label = {}) {
  return LayerNormOp::apply<T>(operands(a), norm_params(options), std::move(label));
}
/// layer_norm(a, weight, bias) as nn.LayerNorm: over the weight's shape unless the options say otherwise.
template <Real T> Var<T> layer_norm(const Var<T>& a, const Var<T>& weight, const Var<T>& bias,
                                    const NormOptions<T>& options = {}, std::string label = {}) {
  return LayerNormOp::apply<T>(operands(a, weight, bias), norm_params(options, &weight.shape()), std::move(label));
}
template <Real T>
Var<T> layer_norm(const Var<T>& a, const Var<T>& weight, const NormOptions<T>& options = {}, std::string label = {}) {
  return LayerNormOp::apply<T>(operands(a, weight), norm_params(options, &weight.shape()), std::move(label));
}

} // namespace tapegrad
