#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// transpose(a).                                          a: m x n, result: n x m
///   forward  result[j][i] = a[i][j]
///   VJP      da[i][j] += grad[j][i]                   da += grad^T
struct TransposeOp {
  static constexpr OpInfo info{.name = "transpose",
                               .call = "transpose(a)",
                               .node = "Transpose",
                               .file = "transpose.hpp",
                               .formula = "result[j][i] = a[i][j]",
                               .shapes = "a: m x n -> n x m"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return {in[0].cols(), in[0].rows()};
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label);
};

template <Real T> Var<T> TransposeOp::apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  Matrix<T> result = tape.buffer(in[0].cols(), in[0].rows());
  result.noalias() = in[0].value().transpose();
  return tape.template record<TransposeOp>(
      in, std::move(result), [](Backprop<T>& bp) { bp.accumulate(0, bp.grad().transpose()); }, std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, TransposeOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> transpose(const Var<T>& a, std::string label = {}) {
  return TransposeOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
