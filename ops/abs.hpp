#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// abs(a), elementwise.                                   a, result: m x n
///   forward  result[i][j] = |a[i][j]|
///   VJP      da[i][j] += grad[i][j] sign(a[i][j])      (0 at a[i][j] = 0, the subgradient graph files use)
/// A kink at 0: the kink guard flags points whose finite differences would straddle it.
struct AbsOp : UnaryOp<AbsOp> {
  static constexpr OpInfo info{.name = "abs",
                               .call = "abs(a)",
                               .node = "Abs",
                               .file = "abs.hpp",
                               .formula = "result[i][j] = |a[i][j]|",
                               .shapes = elementwise_shapes,
                               .dual = "abs",
                               .kink = true};
  template <Real T> static T value(const T& x) {
    using std::abs;
    return abs(x);
  }
  template <Real T> static T derivative(const T& x, const T&) { return x > T(0) ? T(1) : x < T(0) ? T(-1) : T(0); }
};
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, UnaryOp<AbsOp>, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> abs(const Var<T>& a, std::string label = {}) {
  return AbsOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
