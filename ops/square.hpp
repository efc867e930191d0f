#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// square(a), elementwise.                                a, result: m x n
///   forward  result[i][j] = a[i][j]^2
///   VJP      da[i][j] += grad[i][j] 2 a[i][j]
struct SquareOp : UnaryOp<SquareOp> {
  static constexpr OpInfo info{.name = "square",
                               .call = "square(a)",
                               .node = "Square",
                               .file = "square.hpp",
                               .formula = "result[i][j] = a[i][j]^2",
                               .shapes = elementwise_shapes};
  template <Real T> static T value(const T& x) { return x * x; }
  template <Real T> static T derivative(const T& x, const T&) { return T(2) * x; }
};
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, UnaryOp<SquareOp>, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> square(const Var<T>& a, std::string label = {}) {
  return SquareOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
