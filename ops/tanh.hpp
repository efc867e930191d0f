#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// d = tanh'(x) entry by entry, as tanh_derivative computes it (the exp of the whole array at once).
template <Real T> void tanh_derivative_of(const Matrix<T>& x, Matrix<T>& d) {
  d = x.unaryExpr([](const T& v) {
    using std::abs;
    return T(T(-2) * abs(v));
  });
  exp_in_place(d.data(), static_cast<std::size_t>(d.size()));
  d = d.unaryExpr([](const T& e) { return tanh_derivative_from_exp(e); });
}

/// tanh(a), elementwise.                                  a, result: m x n
///   forward  result[i][j] = tanh(a[i][j])
///   VJP      da[i][j] += grad[i][j] (1 - result[i][j]^2), computed as 4 e / (1 + e)^2 with e = exp(-2 |x|), which
///            keeps its digits where tanh rounds to +-1 (autodiff/dual.hpp: tanh_derivative, the same formula)
struct TanhOp : UnaryOp<TanhOp> {
  static constexpr OpInfo info{.name = "tanh",
                               .call = "tanh(a)",
                               .node = "Tanh",
                               .file = "tanh.hpp",
                               .formula = "result[i][j] = tanh(a[i][j])",
                               .shapes = elementwise_shapes,
                               .dual = "tanh"};
  // Both vectorised for double (autodiff/vector_math.hpp): tanh itself, and the exp of the derivative.
  template <Real T> static void forward(const Matrix<T>& x, Matrix<T>& result) {
    result = x;
    tanh_in_place(result.data(), static_cast<std::size_t>(result.size()));
  }
  template <Real T> static void derivative(const Matrix<T>& x, const Matrix<T>&, Matrix<T>& d) {
    tanh_derivative_of(x, d);
  }
};
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, UnaryOp<TanhOp>, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> tanh(const Var<T>& a, std::string label = {}) {
  return TanhOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
