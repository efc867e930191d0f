#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// tanh(a), elementwise.                                  a, result: m x n
///   forward  result[i][j] = tanh(a[i][j])
///   VJP      da[i][j] += grad[i][j] (1 - result[i][j]^2), computed as 4 e / (1 + e)^2 with e = exp(-2 |x|), which
///            keeps its digits where tanh rounds to +-1 (autodiff/dual.hpp: tanh_derivative)
struct TanhOp {
  static constexpr OpInfo info{.name = "tanh",
                               .call = "tanh(a)",
                               .node = "Tanh",
                               .file = "tanh.hpp",
                               .formula = "result[i][j] = tanh(a[i][j])",
                               .shapes = "a: m x n -> m x n",
                               .dual = "tanh"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> TanhOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return record_unary<TanhOp>(
      in, p, std::move(label),
      [](const T& x) {
        using std::tanh;
        return tanh(x);
      },
      [](const T& x, const T&) { return tanh_derivative(x); });
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, TanhOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> tanh(const Var<T>& a, std::string label = {}) {
  return TanhOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
