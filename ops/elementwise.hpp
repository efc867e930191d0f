#pragma once
// Unary elementwise ops, shared: result[i][j] = f(a[i][j]) and, in the VJP, da[i][j] += grad[i][j] f'(a[i][j]),
// the derivative given the operand's entry and the result's (sqrt' = 1 / (2 y) reads the result). Each op in its
// own header supplies f, f' and its descriptor (ops/relu.hpp, ops/tanh.hpp, ...).
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// 1 / (1 + exp(-x)) with no overflow for any x: exp(x) / (1 + exp(x)) for x < 0 (0 at -inf).
template <Real T> T sigmoid_of(const T& x) {
  using std::exp;
  if (x >= T(0)) return T(1) / (T(1) + exp(-x));
  const T e = exp(x);
  return e / (T(1) + e);
}

/// Records unary elementwise op `Op` on in[0]: checks the operand's domain (OpInfo::domains), then
/// result = f(x) entry by entry, and a VJP that adds grad * df(x, y) into the operand's adjoint.
template <class Op, Real T, class F, class DF>
Var<T> record_unary(std::span<const Var<T>> in, const Params<T>& p, std::string label, F f, DF df) {
  Tape<T>& tape = common_tape(Op::info, in);
  require_domain(Op::info, in, 0, label);
  const Matrix<T>& x = in[0].value();
  Matrix<T> result = tape.buffer(x.rows(), x.cols());
  for (Eigen::Index e = 0; e < x.size(); ++e)
    result.data()[e] = f(x.data()[e]);
  return tape.template record<Op>(
      in, std::move(result),
      [df](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& out) {
          const Matrix<T>& g = bp.grad();
          const Matrix<T>& a = bp.input(0);
          const Matrix<T>& y = bp.result();
          for (Eigen::Index e = 0; e < g.size(); ++e)
            out.data()[e] = g.data()[e] * df(a.data()[e], y.data()[e]);
        });
      },
      std::move(label), p);
}

} // namespace tapegrad
