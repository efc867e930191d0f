#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// gelu(a), elementwise, the exact erf form (not the tanh approximation).   a, result: m x n
///   forward  result[i][j] = x/2 (1 + erf(x / sqrt 2)) = x Phi(x), x = a[i][j]; computed as
///            x erfc(-x / sqrt 2) / 2, which keeps its digits for negative x (0 at -inf)
///   VJP      da[i][j] += grad[i][j] (Phi(x) + x phi(x)),  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
struct GeluOp {
  static constexpr OpInfo info{.name = "gelu",
                               .call = "gelu(a)",
                               .node = "Gelu",
                               .file = "gelu.hpp",
                               .formula = "result[i][j] = x/2 (1 + erf(x / sqrt 2)), x = a[i][j]",
                               .shapes = "a: m x n -> m x n",
                               .dual = "erfc, exp"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> GeluOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  using std::sqrt;
  const T r2 = sqrt(T(2)), r2pi = sqrt(T(2) * pi<T>());
  // Both vectorised for double (autodiff/vector_math.hpp): the erfc of every entry, and the exp of the derivative.
  return record_unary_arrays<GeluOp>(
      in, p, std::move(label),
      [r2](const Matrix<T>& x, Matrix<T>& result) {
        result = x.unaryExpr([r2](const T& v) { return T(-v / r2); });
        erfc_in_place(result.data(), static_cast<std::size_t>(result.size()));
        for (Eigen::Index e = 0; e < x.size(); ++e) {
          const T& v = x.data()[e];
          T& y = result.data()[e];
          y = v == -infinity<T>() ? T(0) : T(v * y / T(2));
        }
      },
      [r2, r2pi](const Matrix<T>& x, const Matrix<T>&, Matrix<T>& d) {
        Matrix<T> phi = x.unaryExpr([](const T& v) { return T(-v * v / T(2)); });
        exp_in_place(phi.data(), static_cast<std::size_t>(phi.size()));
        d = x.unaryExpr([r2](const T& v) { return T(-v / r2); });
        erfc_in_place(d.data(), static_cast<std::size_t>(d.size()));
        for (Eigen::Index e = 0; e < x.size(); ++e) {
          const T& v = x.data()[e];
          T& g = d.data()[e];
          if (v == -infinity<T>())
            g = T(0);
          else if (v == infinity<T>())
            g = T(1); // Phi(inf) + inf phi(inf), without inf * 0
          else
            g = g / T(2) + v * phi.data()[e] / r2pi;
        }
      });
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, GeluOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> gelu(const Var<T>& a, std::string label = {}) {
  return GeluOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
