#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// sub(a, b): elementwise difference, shapes equal.                    a, b, result: m x n
///   forward  result[i][j] = a[i][j] - b[i][j]
///   VJP      da += grad;  db -= grad
struct SubOp {
  static constexpr OpInfo info{.name = "sub",
                               .call = "sub(a, b)",
                               .node = "Sub",
                               .file = "sub.hpp",
                               .arity = 2,
                               .formula = "result[i][j] = a[i][j] - b[i][j]",
                               .shapes = "a, b: m x n -> m x n"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    if (in[0].rows() != in[1].rows() || in[0].cols() != in[1].cols())
      shape_mismatch("sub", in[0], in[1], "shapes must be equal (tapegrad does not broadcast)");
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> SubOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Shape s = shape(in, p);
  Matrix<T> result = tape.buffer(s.rows, s.cols);
  result.noalias() = in[0].value() - in[1].value();
  return tape.template record<SubOp>(
      in, std::move(result),
      [](Backprop<T>& bp) {
        bp.accumulate(0, bp.grad());
        bp.accumulate(1, -bp.grad());
      },
      std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SubOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> sub(const Var<T>& a, const Var<T>& b, std::string label = {}) {
  return SubOp::apply<T>(operands(a, b), {}, std::move(label));
}

} // namespace tapegrad
