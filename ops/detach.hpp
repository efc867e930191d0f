#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// The value of x with every derivative part dropped: x itself for a plain number, the value alone (derivatives
/// 0, at every order) for a dual number.
template <class U> U primal_value(const U& x) {
  if constexpr (is_dual<U>)
    return U(primal_value(x.val));
  else
    return x;
}

/// detach(a): a's value, gradient 0 (torch's .detach(): a constant from here on, as in a log-sum-exp shift).
///   forward  result = a  (in forward mode, the value with derivative 0)
///   VJP      none: nothing flows back into a through this node
struct DetachOp {
  static constexpr OpInfo info{.name = "detach",
                               .call = "detach(a)",
                               .node = "Detach",
                               .file = "detach.hpp",
                               .formula = "result = a, d result / d a = 0",
                               .shapes = elementwise_shapes,
                               .detaches = true};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> DetachOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  Matrix<T> result = tape.buffer(in[0].shape());
  result = in[0].value().unaryExpr([](const T& x) { return primal_value(x); });
  // A VJP that adds nothing: the node is reached, and its operand receives no contribution through it.
  return tape.template record<DetachOp>(
      in, in[0].shape(), std::move(result), [](Backprop<T>&) {}, std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, DetachOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> detach(const Var<T>& a, std::string label = {}) {
  return DetachOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
