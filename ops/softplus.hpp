#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// softplus(a), elementwise.                              a, result: m x n
///   forward  result[i][j] = log(1 + exp(x)), x = a[i][j], exact for every x (no threshold): computed as
///            x + log1p(exp(-x)) for x >= 0 and log1p(exp(x)) for x < 0, so no exp overflows (0 at -inf)
///   VJP      da[i][j] += grad[i][j] sigmoid(a[i][j])
struct SoftplusOp : UnaryOp<SoftplusOp> {
  static constexpr OpInfo info{.name = "softplus",
                               .call = "softplus(a)",
                               .node = "Softplus",
                               .file = "softplus.hpp",
                               .formula = "result[i][j] = log(1 + exp(a[i][j]))",
                               .shapes = elementwise_shapes,
                               .dual = "exp, log1p"};
  template <Real T> static T value(const T& x) {
    using std::exp;
    using std::log1p;
    return x >= T(0) ? T(x + log1p(exp(-x))) : T(log1p(exp(x)));
  }
  template <Real T> static T derivative(const T& x, const T&) { return sigmoid_of(x); }
};
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, UnaryOp<SoftplusOp>, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> softplus(const Var<T>& a, std::string label = {}) {
  return SoftplusOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
