#pragma once
// Unary elementwise ops, shared: result[i][j] = f(a[i][j]) and, in the VJP, da[i][j] += grad[i][j] f'(a[i][j]),
// the derivative given the operand's entry and the result's (sqrt' = 1 / (2 y) reads the result). Each op in its
// own header is its descriptor, f and f' (UnaryOp below; ops/relu.hpp, ops/tanh.hpp, ...).
#include "../autodiff/operands.hpp"
#include "../autodiff/vector_math.hpp"

namespace tapegrad {

/// 1 / (1 + exp(-x)) with no overflow for any x: exp(x) / (1 + exp(x)) for x < 0 (0 at -inf).
template <Real T> T sigmoid_of(const T& x) {
  using std::exp;
  if (x >= T(0)) return T(1) / (T(1) + exp(-x));
  const T e = exp(x);
  return e / (T(1) + e);
}

/// Records unary elementwise op `Op` on in[0], a whole array at a time (for ops whose f or f' uses a vector
/// kernel, autodiff/vector_math.hpp): checks the operand's domain (OpInfo::domains), then
/// `forward(x, result)` fills result (x's shape) with f(x), and the VJP adds grad * f' into the operand's
/// adjoint, with `derivative(x, y, d)` filling d with f'(x) given the operand x and the result y.
template <class Op, Real T, class Forward, class Derivative>
Var<T> record_unary_arrays(std::span<const Var<T>> in, const Params<T>& p, std::string label, Forward forward,
                           Derivative derivative) {
  Tape<T>& tape = common_tape(Op::info, in);
  require_domain(Op::info, in, 0, label);
  const Matrix<T>& x = in[0].value();
  Matrix<T> result = tape.buffer(x.rows(), x.cols());
  forward(x, result);
  return tape.template record<Op>(
      in, in[0].shape(), std::move(result),
      [derivative](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& out) {
          derivative(bp.input(0), bp.result(), out);
          out.array() *= bp.grad().array();
        });
      },
      std::move(label), p);
}

/// The same, entry by entry: result = f(x), and the VJP's f' = df(x, y) from the operand's entry and the result's
/// (sqrt' = 1 / (2 y) reads the result).
template <class Op, Real T, class F, class DF>
Var<T> record_unary(std::span<const Var<T>> in, const Params<T>& p, std::string label, F f, DF df) {
  return record_unary_arrays<Op>(
      in, p, std::move(label),
      [f](const Matrix<T>& x, Matrix<T>& result) {
        for (Eigen::Index e = 0; e < x.size(); ++e)
          result.data()[e] = f(x.data()[e]);
      },
      [df](const Matrix<T>& x, const Matrix<T>& y, Matrix<T>& d) {
        for (Eigen::Index e = 0; e < x.size(); ++e)
          d.data()[e] = df(x.data()[e], y.data()[e]);
      });
}

/// A unary elementwise op in one place: its struct derives from UnaryOp<itself> and holds its descriptor `info`
/// and either `value(x)` and `derivative(x, y)` entry by entry (f' from the operand's entry x and the result's
/// y), or `forward(x, result)` and `derivative(x, y, d)` on whole arrays where a vector kernel does them
/// (autodiff/vector_math.hpp). UnaryOp gives the shape rule (the operand's shape) and the recording; the op's
/// header instantiates it with TAPEGRAD_OP_INSTANCE(prefix, UnaryOp<TheOp>, T).
template <class Op> struct UnaryOp {
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <class Op> template <Real T>
Var<T> UnaryOp<Op>::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  if constexpr (requires(const Matrix<T>& x, Matrix<T>& result) { Op::forward(x, result); })
    return record_unary_arrays<Op>(
        in, p, std::move(label), [](const Matrix<T>& x, Matrix<T>& result) { Op::forward(x, result); },
        [](const Matrix<T>& x, const Matrix<T>& y, Matrix<T>& d) { Op::derivative(x, y, d); });
  else
    return record_unary<Op>(
        in, p, std::move(label), [](const T& x) { return T(Op::value(x)); },
        [](const T& x, const T& y) { return T(Op::derivative(x, y)); });
}

} // namespace tapegrad
