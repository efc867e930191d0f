#pragma once
#include "elementwise.hpp"

namespace tapegrad {

/// gelu(a), elementwise: the exact erf form (approximate "none", the default), or PyTorch's tanh approximation.
///   forward  "none": result = x/2 (1 + erf(x / sqrt 2)) = x Phi(x), x = a[i][j]; computed as x erfc(-x / sqrt 2) / 2,
///            which keeps its digits for negative x (0 at -inf)
///            "tanh": result = x/2 (1 + tanh(u)), u = c (x + k x^3), c = sqrt(2/pi) made in T, k = 0.044715 exactly
///   VJP      "none": da += grad (Phi(x) + x phi(x)),  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
///            "tanh": da += grad ((1 + tanh u)/2 + x/2 (1 - tanh^2 u) c (1 + 3 k x^2)), with 1 + tanh u = 2 sigmoid(2u)
///            and 1 - tanh^2 u = 4 e / (1 + e)^2, e = exp(-2 |u|), so neither loses its digits where tanh u is near -1
///            or 1
struct GeluOp {
  static constexpr std::string_view approximations[] = {"none", "tanh"};
  static constexpr ParamSpec params[] = {{.name = "approximate",
                                          .type = ParamType::choice,
                                          .default_value = "none",
                                          .doc = "\"none\": the erf form; \"tanh\": the tanh approximation",
                                          .choices = approximations}};
  static constexpr OpInfo info{.name = "gelu",
                               .call = "gelu(a, approximate)",
                               .node = "Gelu",
                               .file = "gelu.hpp",
                               .params = params,
                               .formula = "result[i][j] = x/2 (1 + erf(x / sqrt 2)), x = a[i][j]; tanh: x/2 (1 + "
                                          "tanh(sqrt(2/pi) (x + 0.044715 x^3)))",
                               .shapes = elementwise_shapes,
                               .dual = "erfc, exp, tanh"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> GeluOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  using std::sqrt;
  if (p.has("approximate") && p.choice("approximate") == "tanh") {
    const T c = sqrt(T(2) / pi<T>()), k = from_decimal<T>("0.044715");
    return record_unary<GeluOp>(
        in, p, std::move(label),
        [c, k](const T& x) {
          if (x == -infinity<T>()) return T(0);
          const T u = c * (x + k * x * x * x);
          return T(x * sigmoid_of(T(T(2) * u))); // x/2 (1 + tanh u) = x sigmoid(2u)
        },
        [c, k](const T& x, const T&) {
          using std::abs;
          using std::exp;
          if (x == -infinity<T>()) return T(0);
          if (x == infinity<T>()) return T(1);
          const T u = c * (x + k * x * x * x);
          const T e = exp(T(-2) * abs(u));
          const T sech2 = T(4) * e / ((T(1) + e) * (T(1) + e));
          return T(sigmoid_of(T(T(2) * u)) + x / T(2) * sech2 * c * (T(1) + T(3) * k * x * x));
        });
  }
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
  return GeluOp::apply<T>(operands(a), Params<T>().set("approximate", Choice{"none"}), std::move(label));
}
/// torch's gelu(a, approximate="tanh").
template <Real T> Var<T> gelu_tanh(const Var<T>& a, std::string label = {}) {
  return GeluOp::apply<T>(operands(a), Params<T>().set("approximate", Choice{"tanh"}), std::move(label));
}

} // namespace tapegrad
