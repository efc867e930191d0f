#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// relu(a), elementwise.                                  a, result: m x n
///   forward  result[i][j] = max(a[i][j], 0)            (0 at -inf, after a mask)
///   VJP      da[i][j] += grad[i][j] where a[i][j] > 0   (relu'(x) = 0 for x <= 0, at the kink x = 0 too)
/// A kink at 0: the kink guard flags points whose finite differences would straddle it.
struct ReluOp : UnaryOp<ReluOp> {
  static constexpr OpInfo info{.name = "relu",
                               .call = "relu(a)",
                               .node = "Relu",
                               .file = "relu.hpp",
                               .formula = "result[i][j] = max(a[i][j], 0)",
                               .shapes = elementwise_shapes,
                               .kink = true};
  template <Real T> static T value(const T& x) { return x > T(0) ? x : T(0); }
  template <Real T> static T derivative(const T& x, const T&) { return x > T(0) ? T(1) : T(0); }
};
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, UnaryOp<ReluOp>, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> relu(const Var<T>& a, std::string label = {}) {
  return ReluOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
