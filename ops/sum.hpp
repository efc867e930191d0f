#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// sum(a): every entry added, to a 1 x 1 value.           a: m x n, result: 1 x 1
///   forward  result = sum_{i,j} a[i][j]
///   VJP      da[i][j] += grad[0][0]
struct SumOp {
  static constexpr OpInfo info{.name = "sum",
                               .call = "sum(a)",
                               .node = "Sum",
                               .file = "sum.hpp",
                               .formula = "result = sum_ij a[i][j]",
                               .shapes = "a: m x n -> 1 x 1"};
  template <class A, Real T> static Shape shape(std::span<const A>, const Params<T>&) { return {1, 1}; }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label);
};

template <Real T> Var<T> SumOp::apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  Matrix<T> result = tape.buffer(1, 1);
  result(0, 0) = in[0].value().sum();
  return tape.template record<SumOp>(
      in, std::move(result),
      [](Backprop<T>& bp) {
        const Matrix<T>& a = bp.input(0);
        bp.accumulate(0, Matrix<T>::Constant(a.rows(), a.cols(), bp.grad()(0, 0)));
      },
      std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SumOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> sum(const Var<T>& a, std::string label = {}) {
  return SumOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
