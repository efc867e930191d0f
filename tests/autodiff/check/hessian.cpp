// Second order: hessian() (forward over reverse), hessian_forward() (nested dual numbers, no VJP) and
// hessian_differences() agree where the answer is known, check_hessian() passes attention and an MLP in double
// against 50 digits and in 50 digits against 100, and catches a VJP that is right to first order only.
#include "graphs.hpp"

#include <tapegrad/autodiff/check/hessian.hpp>

#include <cmath>

using namespace tapegrad;
using namespace tapegrad::test;

namespace {

/// softplus whose VJP multiplies by sigmoid of the operand's VALUE alone: a shortcut (as a kernel that reads the
/// plain number would) that is exact in any plain precision, so every first-order check passes, but drops the
/// tangent forward over reverse needs: the Hessian misses softplus'' = s (1 - s).
struct SoftplusShortcutOp {
  static constexpr OpInfo info{.name = "softplus_shortcut", .node = "SoftplusShortcut", .formula = "log(1 + exp(a))"};
  template <Real T> static T value_only(const T& x) {
    if constexpr (is_dual<T>)
      return T(x.val);
    else
      return x;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
    using std::exp;
    using std::log1p;
    Matrix<T> y = in[0].value().unaryExpr([](const T& x) { return log1p(exp(x)); });
    return common_tape(info, in).template record<SoftplusShortcutOp>(
        in, std::move(y),
        [](Backprop<T>& bp) {
          bp.accumulate(0, bp.grad().cwiseProduct(bp.input(0).unaryExpr([](const T& x) {
            const T v = value_only(x);
            return T(1) / (T(1) + exp(-v));
          })));
        },
        std::move(label));
  }
};

template <Real T> Var<T> softplus_shortcut(const Var<T>& a) {
  return SoftplusShortcutOp::apply<T>(operands(a), {}, "softplus");
}

/// J = sum(tanh(X W1) W2 .* C): an MLP layer with tanh, inputs {X, W1, W2, C}.
struct TanhMlp {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return sum(hadamard(matmul(tanh(matmul(in[0], in[1])), in[2]), in[3]));
  }
};

} // namespace

TEST_CASE("hessian: sum(exp(x)) has exp(x_k) on its diagonal and 0 elsewhere, every way") {
  Matrix<double> x(1, 3);
  x << 0.5, -1.25, 2;
  const auto f = [](auto&, const auto& in) { return sum(exp(in[0])); };
  const std::vector<Matrix<double>> in{x};
  const std::vector<std::string> names{"x"};
  const Matrix<double> H = hessian<double>(f, in, names), FF = hessian_forward<double>(f, in, names);
  for (Eigen::Index k = 0; k < 3; ++k)
    for (Eigen::Index l = 0; l < 3; ++l) {
      CHECK(H(k, l) == (k == l ? std::exp(x(0, k)) : 0.0));
      CHECK(FF(k, l) == (k == l ? std::exp(x(0, k)) : 0.0));
    }
  MpfrDigits digits(50);
  const std::vector<Matrix<mpfr_real>> xr{convert<mpfr_real>(x)};
  const Matrix<mpfr_real> D = hessian_differences<mpfr_real>(f, xr, names);
  const mpfr_real tolerance = reference_tolerance<mpfr_real>();
  for (Eigen::Index k = 0; k < 3; ++k)
    CHECK(abs(D(k, k) - exp(xr[0](0, k))) <= tolerance * exp(xr[0](0, k)));
}

TEST_CASE("check_hessian: attention (example 1) and a tanh MLP, double against 50 digits and 50 against 100") {
  const AttentionInputs<double> ex = chapter::example1<double>();
  RandomMatrices random(20261202);
  const std::vector<Matrix<double>> mlp{random.make<double>(3, 2), random.make<double>(2, 4), random.make<double>(4, 2),
                                        random.make<double>(3, 2)};
  const std::vector<std::string> mlp_names{"X", "W1", "W2", "C"};
  const std::vector<Matrix<double>> attention{ex.X, ex.Wq, ex.Wk, ex.Wv, ex.G};
  const std::vector<std::string> attention_names{"X", "Wq", "Wk", "Wv", "G"};
  for (int graph = 0; graph < 2; ++graph) {
    const auto& in = graph == 0 ? attention : mlp;
    const auto& names = graph == 0 ? attention_names : mlp_names;
    const CheckReport d = graph == 0 ? check_hessian<double, mpfr_real>(FullAttentionGraph{}, in, names, 50)
                                     : check_hessian<double, mpfr_real>(TanhMlp{}, in, names, 50);
    std::vector<Matrix<float50>> in50;
    for (const Matrix<double>& m : in)
      in50.push_back(convert<float50>(m));
    const CheckReport h = graph == 0 ? check_hessian<float50, mpfr_real>(FullAttentionGraph{}, in50, names, 100)
                                     : check_hessian<float50, mpfr_real>(TanhMlp{}, in50, names, 100);
    for (const CheckReport* r : {&d, &h})
      for (const CheckResult& c : r->checks) {
        MESSAGE((graph == 0 ? "attention " : "tanh MLP ")
                << c.engine_precision << ": " << c.name << " rel " << c.max_rel_error << " <= " << c.threshold << " ("
                << c.note << ")");
        CHECK(c.passed);
      }
  }
}

TEST_CASE("check_hessian: a VJP right to first order but not generic gives a wrong Hessian, and is caught") {
  Matrix<double> x(1, 3), w(3, 2);
  x << 0.5, -1.25, 2;
  w << 0.3, -0.2, 0.1, 0.4, -0.35, 0.05;
  const auto f = [](auto&, const auto& in) { return sum(softplus_shortcut(matmul(in[0], in[1]))); };
  CheckOptions opt;
  opt.reference_digits = 50;
  const std::vector<Matrix<double>> in{x, w};
  const std::vector<std::string> names{"x", "W"};
  const CheckReport first = check_gradient<double, mpfr_real>(f, in, names, opt);
  CHECK(first.passed()); // every first-order check: the shortcut is exact in double and in MPFR
  const CheckReport second = check_hessian<double, mpfr_real>(f, in, names, 50);
  for (const CheckResult& c : second.checks)
    MESSAGE(c.name << ": rel " << c.max_rel_error << std::string(c.passed ? " <= " : " > ") << c.threshold << " ("
                   << c.note << ")");
  REQUIRE(second.checks.size() == 3);
  CHECK_FALSE(second.checks[0].passed); // against forward over forward
  CHECK_FALSE(second.checks[1].passed); // against differences of the gradient
  CHECK(second.checks[2].passed);       // the reference's two agree: they use no dual VJP
}
