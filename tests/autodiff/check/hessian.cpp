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

namespace {

/// J = sum(X .* X .* C + X X + Y .* X), X and Y 2 x 2: H's blocks, flattened row-major, are known exactly.
struct Flattening {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return sum(add(add(hadamard(hadamard(in[0], in[0]), in[2]), matmul(in[0], in[0])), hadamard(in[1], in[0])));
  }
};

/// x^3 whose forward rule on dual numbers is off by 1% in the tangent (a slip in a Dual function, say), while
/// its plain forward and its VJP (3 x^2 g, generic) are right: forward over reverse never reads the forward's
/// tangent here (J = sum(y), so the adjoint is constant), forward over forward does. Only the reference's own
/// comparison (differences against nested duals, both in R) can see it, whatever the engine's budget.
struct CubeDualSlipOp {
  static constexpr OpInfo info{.name = "cube_dual_slip", .node = "CubeDualSlip", .formula = "x^3"};
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
    Matrix<T> y = in[0].value().unaryExpr([](const T& x) {
      T c = x * x * x;
      if constexpr (is_dual<T>) {
        using E = decltype(c.eps);
        c.eps = c.eps * E(101) / E(100);
      }
      return c;
    });
    return common_tape(info, in).template record<CubeDualSlipOp>(
        in, std::move(y),
        [](Backprop<T>& bp) {
          bp.accumulate(0, bp.grad().cwiseProduct(bp.input(0).unaryExpr([](const T& x) { return T(3) * x * x; })));
        },
        std::move(label));
  }
};
struct CubeDualSlip {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return sum(CubeDualSlipOp::apply<U>(operands(in[0]), {}, "cube"));
  }
};

/// sum(exp(10 x)): each derivative ten times the last, so the stencil's error is far above its nominal size.
struct SteepExp {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return sum(exp(scale(in[0], U(10))));
  }
};

} // namespace

TEST_CASE("hessian: inputs flattened in order, each row-major, forward over reverse and forward over forward alike") {
  // Inputs {X, Y, C}: X's entries are 0..3, Y's 4..7, C's 8..11, each (i, j) at 2 i + j. With C constant in the
  // formula below (C enters linearly, times X .* X): H[X(a,b), X(c,d)] = 2 C(a,b) [ab = cd] + [b = c] + [d = a],
  // H[X(a,b), Y(c,d)] = [ab = cd], H[X(a,b), C(c,d)] = 2 X(a,b) [ab = cd]; Y and C with each other: 0.
  Matrix<double> X(2, 2), Y(2, 2), C(2, 2);
  X << 0.5, -1, 2, 0.25;
  Y << 3, -2, 0.75, 1.5;
  C << 1, 2, 3, 4;
  const std::vector<Matrix<double>> in{X, Y, C};
  const std::vector<std::string> names{"X", "Y", "C"};
  Matrix<double> expected = Matrix<double>::Zero(12, 12);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c)
        for (int d = 0; d < 2; ++d) {
          const int k = 2 * a + b, l = 2 * c + d;
          expected(k, l) = (k == l ? 2 * C(a, b) : 0.0) + (b == c ? 1.0 : 0.0) + (d == a ? 1.0 : 0.0);
          if (k == l) {
            expected(k, 4 + l) = expected(4 + l, k) = 1;
            expected(k, 8 + l) = expected(8 + l, k) = 2 * X(a, b);
          }
        }
  const Matrix<double> H = hessian<double>(Flattening{}, in, names),
                       FF = hessian_forward<double>(Flattening{}, in, names);
  const std::vector<Shape> shapes(3, Shape{2, 2});
  for (Eigen::Index k = 0; k < 12; ++k)
    for (Eigen::Index l = 0; l < 12; ++l) {
      INFO(flat_entry_name(names, shapes, k) << ", " << flat_entry_name(names, shapes, l));
      CHECK(H(k, l) == expected(k, l));
      CHECK(FF(k, l) == expected(k, l));
    }
  CHECK(flat_entry_name(names, shapes, 6) == "Y(1, 0)");
  // Tensors by their own index: entry 7 of a 2x3x4 is (0, 1, 3); the rank-0 input after it is s().
  CHECK(flat_entry_name({"X", "s"}, {Shape{2, 3, 4}, Shape{}}, 7) == "X(0, 1, 3)");
  CHECK(flat_entry_name({"X", "s"}, {Shape{2, 3, 4}, Shape{}}, 24) == "s()");
}

TEST_CASE("hessian_differences: a point outside an op's domain gives NaN there, a coordinate at -inf is a constant") {
  MpfrDigits digits(50);
  const std::vector<std::string> names{"x"};
  // log at x0 = 1e-40: the stencil's steps (about 1e-7) reach below 0, a DomainError; x1 = 2 is far from it.
  Matrix<mpfr_real> x(1, 2);
  x << mpfr_real(1) / pow(mpfr_real(10), 40), mpfr_real(2);
  const auto logs = [](auto&, const auto& in) { return sum(log(in[0])); };
  const Matrix<mpfr_real> D = hessian_differences<mpfr_real>(logs, {x}, names);
  CHECK(is_nan(D(0, 0)));
  CHECK(is_nan(D(1, 0)));
  const mpfr_real tolerance = reference_tolerance<mpfr_real>();
  MESSAGE("log at 2: d2 = " << to_string(D(1, 1), 20) << " against -1/4, tolerance " << to_string(tolerance, 3));
  CHECK(abs(D(1, 1) + mpfr_real(1) / 4) <= tolerance);
  CHECK(D(0, 1) == 0);

  // exp at -inf: a masked entry, not a variable; its column is 0 and nothing is NaN.
  Matrix<double> m(1, 2);
  m << -std::numeric_limits<double>::infinity(), 0.5;
  const auto exps = [](auto&, const auto& in) { return sum(exp(in[0])); };
  const Matrix<double> E = hessian_differences<double>(exps, {m}, names);
  CHECK(E(0, 0) == 0);
  CHECK(E(1, 0) == 0);
  CHECK(E(0, 1) == 0);
  CHECK(std::abs(E(1, 1) - std::exp(0.5)) <= reference_tolerance<double>() * std::exp(0.5));
}

TEST_CASE(
    "check_hessian: a steep graph, sum(exp(10 x)), passes: the reference's two agree within the engine's budget") {
  Matrix<double> x(1, 3);
  x << 0.5, -1.25, 2;
  const std::vector<std::string> names{"x"};
  const CheckReport d = check_hessian<double, mpfr_real>(SteepExp{}, {x}, names, 50);
  const CheckReport h = check_hessian<float50, mpfr_real>(SteepExp{}, {convert<float50>(x)}, names, 100);
  for (const CheckReport* r : {&d, &h}) {
    REQUIRE(r->checks.size() == 3);
    for (const CheckResult& c : r->checks) {
      MESSAGE(c.engine_precision << ": " << c.name << " rel " << c.max_rel_error << " <= " << c.threshold << " ("
                                 << c.note << ")");
      CHECK(c.passed);
    }
  }
}

TEST_CASE("check_hessian: a 1% slip in a dual-number rule is caught by the reference's own check, even in float16") {
  // The engine's forward over reverse does not read the slipped tangent, so it is right; forward over forward
  // is 1% off; the engine's checks against it pass within float16's 3.1e-2 and fail in double. The reference's
  // two (differences of the gradient, nested duals) disagree by 1% in every engine: its budget is the engine's
  // but at most a double engine's (2.3e-13 at 50 digits), so float16's coarse budget cannot hide the slip.
  Matrix<double> x(1, 3);
  x << 0.5, -1.25, 2;
  const std::vector<std::string> names{"x"};
  const CheckReport d = check_hessian<double, mpfr_real>(CubeDualSlip{}, {x}, names, 50);
  const CheckReport h = check_hessian<float16, mpfr_real>(
      CubeDualSlip{}, {x.unaryExpr([](double v) { return float16(static_cast<float>(v)); })}, names, 50);
  for (const CheckReport* r : {&d, &h}) {
    REQUIRE(r->checks.size() == 3);
    for (const CheckResult& c : r->checks)
      MESSAGE(c.engine_precision << ": " << c.name << " rel " << c.max_rel_error
                                 << std::string(c.passed ? " <= " : " > ") << c.threshold);
    CHECK(r->checks[1].passed);       // against differences of the gradient: the engine's Hessian is right
    CHECK_FALSE(r->checks[2].passed); // the reference's two disagree
  }
  CHECK_FALSE(d.checks[0].passed); // double's budget sees forward over forward's 1%
  CHECK(h.checks[0].passed);       // float16's does not: only the reference's own check is left to
}
