#pragma once
#include "normalise.hpp"

namespace tapegrad {

/// rms_norm(a, eps): each ROW divided by its root mean square (not centred).   a: m x n, result: m x n
///   forward  r_i = sqrt((1/n) sum_j a[i][j]^2 + eps),   result[i][j] = a[i][j] / r_i
///   VJP      da[i][j] += (grad[i][j] - result[i][j] mean_j(grad[i][j] result[i][j])) / r_i
/// eps (default the exact decimal 1e-5) keeps a zero row finite; mean square + eps <= 0 gives NaN or +-inf (the formula).
struct RmsNormOp {
  static constexpr OpInfo info{.name = "rms_norm",
                               .call = "rms_norm(a, eps)",
                               .node = "RmsNorm",
                               .file = "rms_norm.hpp",
                               .params = eps_param,
                               .formula = "result[i][j] = a[i][j] / sqrt((1/n) sum_k a[i][k]^2 + eps)",
                               .shapes = "a: m x n -> m x n",
                               .dual = "sqrt"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> RmsNormOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return detail::record_normalise<RmsNormOp>(in, p, std::move(label), false);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, RmsNormOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> rms_norm(const Var<T>& a, std::string label = {}) {
  return RmsNormOp::apply<T>(operands(a), default_eps<T>(), std::move(label));
}
template <Real T> Var<T> rms_norm(const Var<T>& a, const T& eps, std::string label = {}) {
  return RmsNormOp::apply<T>(operands(a), Params<T>().number("eps", eps), std::move(label));
}

} // namespace tapegrad
