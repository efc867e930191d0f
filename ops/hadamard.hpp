#pragma once
#include "broadcast.hpp"

namespace tapegrad {

/// hadamard(a, b) ("mul" in graph files): elementwise product, broadcasting (ops/broadcast.hpp).
///                                                        result: max(ra, rb) x max(ca, cb)
///   forward  result[i][j] = a[i'][j'] b[i''][j'']        (i' = 0 where a has one row, else i; likewise j', i'', j'')
///   VJP      da += grad (*) b;   db += grad (*) a       ((*) elementwise, operands repeated to the result's shape;
///                                                        each summed over the axes its operand was repeated along)
struct HadamardOp {
  static constexpr OpInfo info{.name = "mul",
                               .call = "hadamard(a, b)",
                               .node = "Hadamard",
                               .file = "hadamard.hpp",
                               .arity = 2,
                               .formula = "result[i][j] = a[i][j] b[i][j], broadcasting",
                               .shapes = broadcast_shape_rule};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return broadcast_shape("hadamard", in[0], in[1]);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> HadamardOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return record_broadcast<HadamardOp>(
      in, p, std::move(label), [](const auto& a, const auto& b) { return a.cwiseProduct(b); },
      [](Backprop<T>& bp) {
        const Matrix<T>& g = bp.grad();
        with_expanded(bp.input(1), bp.input_shape(1), bp.result_shape(),
                      [&](const auto& b) { accumulate_broadcast(bp, 0, g.binaryExpr(b, ZeroSafeProduct{})); });
        with_expanded(bp.input(0), bp.input_shape(0), bp.result_shape(),
                      [&](const auto& a) { accumulate_broadcast(bp, 1, g.binaryExpr(a, ZeroSafeProduct{})); });
      });
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, HadamardOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> hadamard(const Var<T>& a, const Var<T>& b, std::string label = {}) {
  return HadamardOp::apply<T>(operands(a, b), {}, std::move(label));
}
/// a * b on two Vars is not defined: it reads as the matrix product to some and as the elementwise one to
/// others, and mistaking one for the other is a classic bug that broadcasting can make run without a shape
/// error. Say which: matmul(a, b) or hadamard(a, b). (c * a with c a T scales: ops/scale.hpp.)
template <Real T> Var<T> operator*(const Var<T>& a, const Var<T>& b) = delete;

} // namespace tapegrad
