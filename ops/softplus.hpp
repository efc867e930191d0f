#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// softplus(a), elementwise.                              a, result: m x n
///   forward  result[i][j] = log(1 + exp(x)), x = a[i][j], exact for every x (no threshold): computed as
///            x + log1p(exp(-x)) for x >= 0 and log1p(exp(x)) for x < 0, so no exp overflows (0 at -inf)
///   VJP      da[i][j] += grad[i][j] sigmoid(a[i][j])
struct SoftplusOp {
  static constexpr OpInfo info{.name = "softplus",
                               .call = "softplus(a)",
                               .node = "Softplus",
                               .file = "softplus.hpp",
                               .formula = "result[i][j] = log(1 + exp(a[i][j]))",
                               .shapes = elementwise_shapes,
                               .dual = "exp, log1p"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> SoftplusOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return record_unary<SoftplusOp>(
      in, p, std::move(label),
      [](const T& x) {
        using std::exp;
        using std::log1p;
        return x >= T(0) ? x + log1p(exp(-x)) : log1p(exp(x));
      },
      [](const T& x, const T&) { return sigmoid_of(x); });
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SoftplusOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> softplus(const Var<T>& a, std::string label = {}) {
  return SoftplusOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
