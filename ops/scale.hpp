#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// scale(a, c): multiplication by a constant c of type T (make inexact constants in T: 1 / sqrt(T(d))).
///                                                        a: m x n, result: m x n
///   forward  result[i][j] = c a[i][j]
///   VJP      da[i][j] += c grad[i][j]
/// In graph files c is "factor", an exact decimal rounded once into the precision.
struct ScaleOp {
  static constexpr ParamSpec params[] = {{"factor", ParamType::number, {}, "the constant c"}};
  static constexpr OpInfo info{.name = "scale",
                               .call = "scale(a, factor)",
                               .node = "Scale",
                               .file = "scale.hpp",
                               .params = params,
                               .formula = "result[i][j] = factor a[i][j]",
                               .shapes = elementwise_shapes};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> ScaleOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const T& c = p.number("factor");
  Matrix<T> result = tape.buffer(in[0].rows(), in[0].cols());
  result.noalias() = c * in[0].value();
  return tape.template record<ScaleOp>(
      in, in[0].shape(), std::move(result), [c](Backprop<T>& bp) { bp.accumulate(0, c * bp.grad()); }, std::move(label),
      p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, ScaleOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> scale(const Var<T>& a, const T& c, std::string label = {}) {
  return ScaleOp::apply<T>(operands(a), Params<T>().number("factor", c), std::move(label));
}
/// c * a and a * c: scale(a, c). The constant must be a T (T(2), log(T(3))): a double literal does not
/// deduce against Var<float50>, so no constant enters a multiprecision graph rounded to double.
template <Real T> Var<T> operator*(const T& c, const Var<T>& a) { return scale(a, c); }
template <Real T> Var<T> operator*(const Var<T>& a, const T& c) { return scale(a, c); }
/// a / c: scale(a, 1 / c), the factor 1 / c rounded once in T. c = 0 is a DomainError.
template <Real T> Var<T> operator/(const Var<T>& a, const T& c) {
  if (c == T(0)) throw DomainError("a / c with a = " + a.name() + ": c is 0");
  return scale(a, T(1) / c);
}

} // namespace tapegrad
