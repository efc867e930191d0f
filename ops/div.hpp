#pragma once
#include "broadcast.hpp"

namespace tapegrad {

/// div(a, b), also a / b: elementwise quotient, broadcasting (ops/broadcast.hpp).
///                                                        result: max(ra, rb) x max(ca, cb)
///   forward  result[i][j] = a[i'][j'] / b[i''][j'']      (i' = 0 where a has one row, else i; likewise j', i'', j'')
///   VJP      da += grad / b;   db += -grad result / b   (elementwise, b repeated to the result's shape; each
///                                                        summed over the axes its operand was repeated along)
/// Domain: a zero entry of b (or NaN) is a DomainError naming the node, b and the entry, not a silent infinity.
struct DivOp {
  static constexpr Domain domains[] = {Domain::any, Domain::nonzero};
  static constexpr OpInfo info{.name = "div",
                               .call = "div(a, b)",
                               .node = "Div",
                               .file = "div.hpp",
                               .arity = 2,
                               .formula = "result[i][j] = a[i][j] / b[i][j], broadcasting, b != 0",
                               .shapes = broadcast_shape_rule,
                               .domains = domains};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return broadcast_shape("div", in[0], in[1]);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> DivOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return record_broadcast<DivOp>(
      in, p, std::move(label), [](const auto& a, const auto& b) { return a.cwiseQuotient(b); },
      [](Backprop<T>& bp) {
        const Matrix<T>& g = bp.grad();
        with_expanded(bp.input(1), bp.input_shape(1), bp.result_shape(), [&](const auto& b) {
          accumulate_broadcast(bp, 0, g.cwiseQuotient(b));
          accumulate_broadcast(bp, 1, (-g).binaryExpr(bp.result(), ZeroSafeProduct{}).cwiseQuotient(b));
        });
      });
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, DivOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> div(const Var<T>& a, const Var<T>& b, std::string label = {}) {
  return DivOp::apply<T>(operands(a, b), {}, std::move(label));
}
template <Real T> Var<T> operator/(const Var<T>& a, const Var<T>& b) { return div(a, b); }

} // namespace tapegrad
