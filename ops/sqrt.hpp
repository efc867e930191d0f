#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// sqrt(a), elementwise.                                  a, result: m x n
///   forward  result[i][j] = sqrt(a[i][j])
///   VJP      da[i][j] += grad[i][j] / (2 result[i][j])
/// Domain: every entry > 0 (sqrt(0) too is refused: its derivative is infinite). An entry <= 0 (or NaN) is a
/// DomainError naming the node, the operand and the entry.
struct SqrtOp : UnaryOp<SqrtOp> {
  static constexpr OpInfo info{.name = "sqrt",
                               .call = "sqrt(a)",
                               .node = "Sqrt",
                               .file = "sqrt.hpp",
                               .formula = "result[i][j] = sqrt(a[i][j]), entries > 0",
                               .shapes = elementwise_shapes,
                               .dual = "sqrt",
                               .domains = positive_operand};
  template <Real T> static T value(const T& x) {
    using std::sqrt;
    return sqrt(x);
  }
  template <Real T> static T derivative(const T&, const T& y) { return T(1) / (T(2) * y); }
};
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, UnaryOp<SqrtOp>, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> sqrt(const Var<T>& a, std::string label = {}) {
  return SqrtOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
