#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// hadamard(a, b): elementwise product, shapes equal.                    a, b, result: m x n
///   forward  result[i][j] = a[i][j] b[i][j]
///   VJP      da[i][j] += grad[i][j] b[i][j];   db[i][j] += grad[i][j] a[i][j]
struct HadamardOp {
  static constexpr OpInfo info{.name = "mul",
                               .call = "hadamard(a, b)",
                               .node = "Hadamard",
                               .file = "hadamard.hpp",
                               .arity = 2,
                               .formula = "result[i][j] = a[i][j] b[i][j]",
                               .shapes = "a, b: m x n -> m x n"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    if (in[0].rows() != in[1].rows() || in[0].cols() != in[1].cols())
      shape_mismatch("hadamard", in[0], in[1], "shapes must be equal (tapegrad does not broadcast)");
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> HadamardOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Shape s = shape(in, p);
  Matrix<T> result = tape.buffer(s.rows, s.cols);
  result.noalias() = in[0].value().cwiseProduct(in[1].value());
  return tape.template record<HadamardOp>(
      in, std::move(result),
      [](Backprop<T>& bp) {
        bp.accumulate(0, bp.grad().cwiseProduct(bp.input(1)));
        bp.accumulate(1, bp.grad().cwiseProduct(bp.input(0)));
      },
      std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, HadamardOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> hadamard(const Var<T>& a, const Var<T>& b, std::string label = {}) {
  return HadamardOp::apply<T>(operands(a, b), {}, std::move(label));
}

} // namespace tapegrad
