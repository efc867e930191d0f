#pragma once
#include "../autodiff/operands.hpp"
#include "../autodiff/vector_math.hpp"

namespace tapegrad {

/// exp(a), elementwise.                                   a, result: m x n
///   forward  result[i][j] = exp(a[i][j])
///   VJP      da[i][j] += grad[i][j] result[i][j]      (d/dx exp(x) = exp(x): the saved result)
struct ExpOp {
  static constexpr OpInfo info{.name = "exp",
                               .call = "exp(a)",
                               .node = "Exp",
                               .file = "exp.hpp",
                               .formula = "result[i][j] = exp(a[i][j])",
                               .shapes = elementwise_shapes,
                               .dual = "exp"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label);
};

template <Real T> Var<T> ExpOp::apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  Matrix<T> result = tape.buffer(in[0].rows(), in[0].cols());
  result = in[0].value();
  exp_in_place(result.data(), static_cast<std::size_t>(result.size())); // vectorised for double
  return tape.template record<ExpOp>(
      in, in[0].shape(), std::move(result),
      [](Backprop<T>& bp) { bp.accumulate(0, bp.grad().cwiseProduct(bp.result())); }, std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, ExpOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> exp(const Var<T>& a, std::string label = {}) {
  return ExpOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
