#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// square(a), elementwise.                                a, result: m x n
///   forward  result[i][j] = a[i][j]^2
///   VJP      da[i][j] += grad[i][j] 2 a[i][j]
struct SquareOp {
  static constexpr OpInfo info{.name = "square",
                               .call = "square(a)",
                               .node = "Square",
                               .file = "square.hpp",
                               .formula = "result[i][j] = a[i][j]^2",
                               .shapes = elementwise_shapes};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> SquareOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return record_unary<SquareOp>(
      in, p, std::move(label), [](const T& x) { return x * x; }, [](const T& x, const T&) { return T(2) * x; });
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SquareOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> square(const Var<T>& a, std::string label = {}) {
  return SquareOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
