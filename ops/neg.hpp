#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// neg(a), also -a: elementwise negation.                a, result: m x n
///   forward  result[i][j] = -a[i][j]
///   VJP      da[i][j] += -grad[i][j]
struct NegOp {
  static constexpr OpInfo info{.name = "neg",
                               .call = "neg(a)",
                               .node = "Neg",
                               .file = "neg.hpp",
                               .formula = "result[i][j] = -a[i][j]",
                               .shapes = elementwise_shapes};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> NegOp::apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  Matrix<T> result = tape.buffer(in[0].rows(), in[0].cols());
  result.noalias() = -in[0].value();
  return tape.template record<NegOp>(
      in, in[0].shape(), std::move(result), [](Backprop<T>& bp) { bp.accumulate(0, -bp.grad()); }, std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, NegOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> neg(const Var<T>& a, std::string label = {}) {
  return NegOp::apply<T>(operands(a), {}, std::move(label));
}
template <Real T> Var<T> operator-(const Var<T>& a) { return neg(a); }

} // namespace tapegrad
