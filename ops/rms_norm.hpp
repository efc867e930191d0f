#pragma once
#include "normalise.hpp"

namespace tapegrad {

/// rms_norm(a, weight): each group of the last k dims (k = normalized_shape's length, default 1: a row) divided by
/// its root mean square (not centred), then times weight.
///   forward  r_i = sqrt((1/K) sum_k x[i][k]^2 + eps),   result[i][k] = x[i][k] / r_i w[k]   (i a group)
///   VJP      h = grad w;  da[i][k] += (h[i][k] - y[i][k] mean_k(h[i][k] y[i][k])) / r_i,  y = x / r
///            dw[k] += sum_i grad[i][k] y[i][k]
/// eps (default the exact decimal 1e-5) keeps a zero group finite; mean square + eps <= 0 gives NaN or +-inf (the
/// formula).
struct RmsNormOp {
  static constexpr OpInfo info{.name = "rms_norm",
                               .call = "rms_norm(a, weight, options)",
                               .node = "RmsNorm",
                               .file = "rms_norm.hpp",
                               .optional_operands = 1,
                               .params = normalise_params,
                               .formula = "result[i][k] = a[i][k] / sqrt((1/K) sum_l a[i][l]^2 + eps) w[k], over "
                                          "group i",
                               .shapes = "a: any rank >= 1, weight: normalized_shape (a's last sizes) -> a's shape",
                               .dual = "sqrt"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    return detail::normalise_shape("rms_norm", in, p);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> RmsNormOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return detail::record_normalise<RmsNormOp>(in, p, std::move(label), false);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, RmsNormOp, T)
#include "../autodiff/instances.hpp"

/// rms_norm(a): over the last dim, eps the decimal 1e-5.
template <Real T> Var<T> rms_norm(const Var<T>& a, std::string label = {}) {
  return RmsNormOp::apply<T>(operands(a), default_eps<T>(), std::move(label));
}
template <Real T> Var<T> rms_norm(const Var<T>& a, const T& eps, std::string label = {}) {
  return RmsNormOp::apply<T>(operands(a), Params<T>().number("eps", eps), std::move(label));
}
template <Real T> Var<T> rms_norm(const Var<T>& a, const NormOptions<T>& options, std::string label = {}) {
  return RmsNormOp::apply<T>(operands(a), norm_params(options), std::move(label));
}
/// rms_norm(a, weight): over the weight's shape unless the options say otherwise.
template <Real T>
Var<T> rms_norm(const Var<T>& a, const Var<T>& weight, const NormOptions<T>& options = {}, std::string label = {}) {
  return RmsNormOp::apply<T>(operands(a, weight), norm_params(options, &weight.shape()), std::move(label));
}

} // namespace tapegrad
