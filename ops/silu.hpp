#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// silu(a), elementwise: x sigmoid(x) (torch.nn.functional.silu).
///   forward  result[i][j] = x s,  s = sigmoid(x), x = a[i][j] (0 at -inf)
///   VJP      da[i][j] += grad[i][j] s (1 + x (1 - s)), with 1 - s = sigmoid(-x) (no digits lost where s is near 1);
///            0 at -inf
struct SiluOp : UnaryOp<SiluOp> {
  static constexpr OpInfo info{.name = "silu",
                               .call = "silu(a)",
                               .node = "Silu",
                               .file = "silu.hpp",
                               .formula = "result[i][j] = x sigmoid(x), x = a[i][j]",
                               .shapes = elementwise_shapes,
                               .dual = "exp"};
  template <Real T> static T value(const T& x) { return x == -infinity<T>() ? T(0) : T(x * sigmoid_of(x)); }
  template <Real T> static T derivative(const T& x, const T&) {
    return x == -infinity<T>() ? T(0) : T(sigmoid_of(x) * (T(1) + x * sigmoid_of(T(-x))));
  }
};
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, UnaryOp<SiluOp>, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> silu(const Var<T>& a, std::string label = {}) {
  return SiluOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
