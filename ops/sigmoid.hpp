#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// sigmoid(a), elementwise.                               a, result: m x n
///   forward  result[i][j] = 1 / (1 + exp(-x)), x = a[i][j]; computed as exp(x) / (1 + exp(x)) for x < 0, so
///            no exp overflows for any finite x (0 at -inf)
///   VJP      da[i][j] += grad[i][j] s (1 - s), s = result[i][j], computed as sigmoid(x) sigmoid(-x) so that
///            1 - s keeps its digits where s rounds to 1
struct SigmoidOp : UnaryOp<SigmoidOp> {
  static constexpr OpInfo info{.name = "sigmoid",
                               .call = "sigmoid(a)",
                               .node = "Sigmoid",
                               .file = "sigmoid.hpp",
                               .formula = "result[i][j] = 1 / (1 + exp(-a[i][j]))",
                               .shapes = elementwise_shapes,
                               .dual = "exp"};
  template <Real T> static T value(const T& x) { return sigmoid_of(x); }
  template <Real T> static T derivative(const T& x, const T&) { // s (1 - s), 1 - s not rounded near 1
    return sigmoid_of(x) * sigmoid_of(T(-x));
  }
};
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, UnaryOp<SigmoidOp>, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> sigmoid(const Var<T>& a, std::string label = {}) {
  return SigmoidOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
