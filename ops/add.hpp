#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// add(a, b): elementwise sum, shapes equal.                       a, b, result: m x n
///   forward  result[i][j] = a[i][j] + b[i][j]
///   VJP      da += grad;  db += grad
struct AddOp {
  static constexpr OpInfo info{.name = "add",
                               .call = "add(a, b)",
                               .node = "Add",
                               .file = "add.hpp",
                               .arity = 2,
                               .formula = "result[i][j] = a[i][j] + b[i][j]",
                               .shapes = "a, b: m x n -> m x n"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    if (in[0].rows() != in[1].rows() || in[0].cols() != in[1].cols())
      shape_mismatch("add", in[0], in[1], "shapes must be equal (tapegrad does not broadcast)");
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> AddOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Shape s = shape(in, p);
  Matrix<T> result = tape.buffer(s.rows, s.cols);
  result.noalias() = in[0].value() + in[1].value();
  return tape.template record<AddOp>(
      in, std::move(result),
      [](Backprop<T>& bp) {
        bp.accumulate(0, bp.grad());
        bp.accumulate(1, bp.grad());
      },
      std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, AddOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> add(const Var<T>& a, const Var<T>& b, std::string label = {}) {
  return AddOp::apply<T>(operands(a, b), {}, std::move(label));
}

} // namespace tapegrad
