// Every function of Dual<T> against the derivative of the same function taken independently: sixth-order
// central differences in 100 digits (cpp_bin_float<100>), for Dual<cpp_bin_float<50>> and Dual<double>.
#include "../support.hpp"

#include <tapegrad/autodiff/dual.hpp>

#include <functional>

using namespace tapegrad;

namespace {

/// A function of one real variable, written once for every scalar type.
struct Function {
  std::string name;
  std::function<Dual<float50>(const Dual<float50>&)> on_dual50;
  std::function<Dual<double>(const Dual<double>&)> on_dual;
  std::function<float100(const float100&)> on_real;
};

template <class F> Function make(std::string name, F f) {
  return {std::move(name), [f](const Dual<float50>& x) { return f(x); }, [f](const Dual<double>& x) { return f(x); },
          [f](const float100& x) { return f(x); }};
}

/// Every Dual operation: + - * / with a constant and with another dual, unary -, exp, log, sqrt, abs.
std::vector<Function> functions() {
  using std::abs;
  using std::exp;
  using std::log;
  using std::sqrt;
  return {
      make("x + 3", [](const auto& x) { return x + decltype(x + x)(3); }),
      make("x - x^2", [](const auto& x) { return x - x * x; }),
      make("-x", [](const auto& x) { return -x; }),
      make("x * x * x", [](const auto& x) { return x * x * x; }),
      make("1 / x", [](const auto& x) { return decltype(x + x)(1) / x; }),
      make("x / (x + 2)", [](const auto& x) { return x / (x + decltype(x + x)(2)); }),
      make("x += x; x *= x; x -= 1; x /= 3",
           [](const auto& x) {
             auto y = x;
             y += x;
             y *= x;
             y -= decltype(x + x)(1);
             y /= decltype(x + x)(3);
             return y;
           }),
      make("exp(x)", [](const auto& x) { return exp(x); }),
      make("log(x)", [](const auto& x) { return log(x); }),
      make("sqrt(x)", [](const auto& x) { return sqrt(x); }),
      make("abs(x)", [](const auto& x) { return abs(x); }),
  };
}

float100 derivative_by_differences(const Function& f, const float100& x) {
  const std::vector<Matrix<float100>> at{Matrix<float100>::Constant(1, 1, x)};
  return central_difference<float100>([&](const std::vector<Matrix<float100>>& m) { return f.on_real(m[0](0, 0)); }, at,
                                      0)(0, 0);
}

} // namespace

TEST_CASE("Dual: every function's derivative equals 100-digit central differences, in 50 digits and in double") {
  using std::abs;
  // Points away from every kink and edge of a domain (log and sqrt need x > 0, abs is smooth away from 0).
  const std::vector<float100> points{float100(1) / float100(3), float100(7) / float100(4), float100(-5) / float100(8)};
  const float50 tol50 = test::exact_tolerance<float50>() * float50(16);
  const double tol = test::exact_tolerance<double>() * 16;
  MESSAGE("tolerance, relative to max(1, |derivative|): 50 digits " << to_string(tol50, 3) << ", double "
                                                                    << to_string(tol, 3));
  for (const Function& f : functions())
    for (const float100& x : points) {
      if (x < float100(0) && (f.name == "log(x)" || f.name == "sqrt(x)")) continue; // outside the domain
      const float100 ref = derivative_by_differences(f, x);
      const float100 scale = abs(ref) > float100(1) ? float100(abs(ref)) : float100(1);
      const Dual<float50> d50 = f.on_dual50(Dual<float50>(static_cast<float50>(x), float50(1)));
      const Dual<double> d = f.on_dual(Dual<double>(static_cast<double>(x), 1.0));
      const float100 e50 = abs(static_cast<float100>(d50.eps) - ref) / scale;
      const float100 e = abs(static_cast<float100>(d.eps) - ref) / scale;
      INFO(f.name << " at " << to_string(x, 6) << ": reference " << to_string(ref, 30));
      CHECK(e50 <= static_cast<float100>(tol50));
      CHECK(e <= static_cast<float100>(tol));
      // The value part is the function itself.
      CHECK(abs(static_cast<float100>(d50.val) - f.on_real(static_cast<float100>(static_cast<float50>(x)))) <=
            static_cast<float100>(tol50) * float100(16));
    }
}

TEST_CASE("Dual abs at 0: value 0, derivative 0 (the subgradient graph files use), from either side's seed") {
  for (const double seed : {1.0, -1.0, 0.5}) {
    const Dual<double> y = abs(Dual<double>(0.0, seed));
    CHECK(y.val == 0.0);
    CHECK(y.eps == 0.0);
  }
  CHECK(abs(Dual<double>(-2.0, 1.0)).eps == -1.0);
  CHECK(abs(Dual<double>(2.0, 1.0)).eps == 1.0);
}

TEST_CASE("Dual comparisons look at the value only; is_finite and is_nan at both parts") {
  const Dual<double> a(1.0, 5.0), b(1.0, -3.0), c(2.0, 0.0);
  CHECK(a == b);
  CHECK_FALSE(a != b);
  CHECK(a < c);
  CHECK(c > a);
  CHECK(a <= b);
  CHECK(a >= b);
  CHECK(is_finite(a));
  CHECK_FALSE(is_finite(Dual<double>(1.0, infinity<double>())));
  CHECK(is_nan(Dual<double>(1.0, std::numeric_limits<double>::quiet_NaN())));
}
