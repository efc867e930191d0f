#pragma once
#include "broadcast.hpp"

namespace tapegrad {

/// sub(a, b), also a - b: elementwise difference, broadcasting (ops/broadcast.hpp).
///                                                        result: max(ra, rb) x max(ca, cb)
///   forward  result[i][j] = a[i'][j'] - b[i''][j'']      (i' = 0 where a has one row, else i; likewise j', i'', j'')
///   VJP      da += grad;  db -= grad                    (each summed over the axes its operand was repeated along)
struct SubOp {
  static constexpr OpInfo info{.name = "sub",
                               .call = "sub(a, b)",
                               .node = "Sub",
                               .file = "sub.hpp",
                               .arity = 2,
                               .formula = "result[i][j] = a[i][j] - b[i][j], broadcasting",
                               .shapes = broadcast_shape_rule};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return broadcast_shape("sub", in[0], in[1]);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> SubOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return record_broadcast<SubOp>(
      in, p, std::move(label), [](const auto& a, const auto& b) { return a - b; },
      [](Backprop<T>& bp) {
        accumulate_broadcast(bp, 0, bp.grad());
        accumulate_broadcast(bp, 1, -bp.grad());
      });
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SubOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> sub(const Var<T>& a, const Var<T>& b, std::string label = {}) {
  return SubOp::apply<T>(operands(a, b), {}, std::move(label));
}
template <Real T> Var<T> operator-(const Var<T>& a, const Var<T>& b) { return sub(a, b); }

} // namespace tapegrad
