// apply_in_place: libmvec's vector exp, log, tanh and erfc for double (when built with them and the CPU has
// AVX2) against MPFR's correctly rounded functions, special values, and independence from position and length.
#include "../support.hpp"

#include <tapegrad/autodiff/vector_math.hpp>

#include <boost/multiprecision/mpfr.hpp>

#include <cmath>
#include <functional>
#include <limits>

using namespace tapegrad;
using Exact = boost::multiprecision::mpfr_float_50; // 166 bits: the error in ulps is exact to far below 0.01

namespace {

const double inf = std::numeric_limits<double>::infinity();
const double not_a_number = std::numeric_limits<double>::quiet_NaN();

/// F in 50 digits.
template <VectorFunction F> Exact exact(double x) {
  const Exact e(x);
  if constexpr (F == VectorFunction::exp)
    return exp(e);
  else if constexpr (F == VectorFunction::log)
    return log(e);
  else if constexpr (F == VectorFunction::tanh)
    return tanh(e);
  else
    return erfc(e);
}

/// |y - F(x)| in units of the last place of the correctly rounded F(x) (a normal double in every range below).
template <VectorFunction F> double ulp_error(double x, double y) {
  const Exact e = exact<F>(x);
  const double rounded = std::abs(e.convert_to<double>());
  const double ulp = std::nextafter(rounded, inf) - rounded;
  return (abs(Exact(y) - e) / Exact(ulp)).convert_to<double>();
}

/// The worst error over `n` arguments made by `draw` from a generator seeded with `seed`.
template <VectorFunction F> double worst_ulps(std::uint64_t seed, const std::function<double(std::mt19937_64&)>& draw,
                                              std::size_t n, VectorKernel kernel) {
  std::mt19937_64 rng(seed);
  std::vector<double> x(n);
  for (double& v : x)
    v = draw(rng);
  std::vector<double> y = x;
  apply_in_place<F>(y.data(), y.size(), kernel);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i)
    worst = std::max(worst, ulp_error<F>(x[i], y[i]));
  return worst;
}

std::function<double(std::mt19937_64&)> uniform(double lo, double hi) {
  return [lo, hi](std::mt19937_64& rng) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
}

/// Arguments of every magnitude: exp(u) with u uniform in [lo, hi].
std::function<double(std::mt19937_64&)> log_uniform(double lo, double hi) {
  return [lo, hi](std::mt19937_64& rng) { return std::exp(std::uniform_real_distribution<double>(lo, hi)(rng)); };
}

/// Every special argument must give std::'s result exactly (these results are exact in both: 0, +-1, 2, +-inf,
/// NaN, and the sign of a zero).
template <VectorFunction F> void check_special(const std::vector<double>& x, VectorKernel kernel) {
  std::vector<double> y = x;
  apply_in_place<F>(y.data(), y.size(), kernel);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = detail::scalar_function<F>(x[i]);
    INFO("f(" << x[i] << ") = " << y[i] << ", std:: gives " << want);
    if (std::isnan(want)) {
      CHECK(std::isnan(y[i]));
    } else {
      CHECK(y[i] == want);
      CHECK(std::signbit(y[i]) == std::signbit(want));
    }
  }
}

/// An entry's result must not depend on where it lies in the array or on the array's length (the tails).
template <VectorFunction F> void check_position_independence(double first, double step, VectorKernel kernel) {
  std::vector<double> values;
  for (int k = 0; k < 19; ++k)
    values.push_back(first + step * k);
  std::vector<double> alone(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    double v = values[i];
    apply_in_place<F>(&v, 1, kernel);
    alone[i] = v;
  }
  for (std::size_t n = 1; n <= values.size(); ++n)
    for (std::size_t start = 0; start + n <= values.size(); start += 3) {
      std::vector<double> y(values.begin() + static_cast<long>(start), values.begin() + static_cast<long>(start + n));
      apply_in_place<F>(y.data(), y.size(), kernel);
      for (std::size_t j = 0; j < n; ++j)
        CHECK(y[j] == alone[start + j]);
    }
}

/// Every kernel this CPU runs for F, each once (a kernel the CPU lacks runs the next narrower one: not again).
template <VectorFunction F> std::vector<VectorKernel> kernels() {
  std::vector<VectorKernel> out;
  for (VectorKernel k : {VectorKernel::avx512, VectorKernel::avx2, VectorKernel::scalar})
    if (kernel_used<F>(k) == k) out.push_back(k);
  return out;
}

// libmvec documents at most 4 ulp for each of these functions; the scalar ones are within 1. Fixed before the
// run: 4 ulp for every function and range (the engine's own tolerance is 1024 eps).
const double bound = 4;

} // namespace

/// The worst error of F over two ranges, with every kernel this CPU runs, each printed and checked.
template <VectorFunction F> void check_ulps(const char* name, std::uint64_t seed, const char* range1,
                                            const std::function<double(std::mt19937_64&)>& draw1, const char* range2,
                                            const std::function<double(std::mt19937_64&)>& draw2) {
  for (VectorKernel k : kernels<F>()) {
    const double w1 = worst_ulps<F>(seed, draw1, 1 << 14, k), w2 = worst_ulps<F>(seed + 1, draw2, 1 << 14, k);
    MESSAGE(std::string(name) << ", kernel " << std::string(kernel_name(k)) << ", seeds " << seed << " and " << seed + 1
                              << ", 16384 arguments each, bound " << bound << " ulp: worst " << w1 << " ulp on "
                              << std::string(range1) << ", " << w2 << " ulp on " << std::string(range2));
    CHECK(w1 <= bound);
    CHECK(w2 <= bound);
  }
}

TEST_CASE("apply_in_place<double>: exp within 4 ulp of the correctly rounded exp, every kernel") {
  // the softmax's x - max <= 0, and every normal result
  check_ulps<VectorFunction::exp>("exp", 11, "[-40, 0]", uniform(-40, 0), "[-708, 709]", uniform(-708, 709));
}

TEST_CASE("apply_in_place<double>: log within 4 ulp of the correctly rounded log, every kernel") {
  check_ulps<VectorFunction::log>("log", 13, "[0.5, 2]", uniform(0.5, 2), "exp([-700, 700])", log_uniform(-700, 700));
}

TEST_CASE("apply_in_place<double>: tanh within 4 ulp of the correctly rounded tanh, every kernel") {
  // into the range where tanh rounds to +-1
  check_ulps<VectorFunction::tanh>("tanh", 15, "[-1, 1]", uniform(-1, 1), "[-20, 20]", uniform(-20, 20));
}

TEST_CASE("apply_in_place<double>: erfc within 4 ulp of the correctly rounded erfc, every kernel") {
  // erfc(26) ~ 5.7e-296: normal results
  check_ulps<VectorFunction::erfc>("erfc", 17, "[-1, 1]", uniform(-1, 1), "[-6, 26]", uniform(-6, 26));
}

TEST_CASE("apply_in_place<double>: special values as the std:: function gives them, every kernel") {
  const double tiny = std::numeric_limits<double>::denorm_min(), big = std::numeric_limits<double>::max();
  for (VectorKernel k : kernels<VectorFunction::exp>()) {
    CAPTURE(std::string(kernel_name(k)));
    check_special<VectorFunction::exp>({-inf, inf, not_a_number, 710, -745, -740, 0, -0.0, 1e-300}, k);
    // around the cutoff below which the vector kernels write +0 themselves: subnormal results, results rounding to 0
    const double cut = detail::exp_zero_below;
    check_special<VectorFunction::exp>({-744.5, -745.1, -745.2, std::nextafter(cut, 0.0), cut,
                                        std::nextafter(cut, -inf), -746, -1e300, -inf, -745.05, 0, -0.0},
                                       k);
    check_special<VectorFunction::log>({0, -0.0, -1, -inf, inf, not_a_number, 1, -tiny}, k);
    check_special<VectorFunction::tanh>({-inf, inf, not_a_number, 0, -0.0, 40, -40, big, -big}, k);
    check_special<VectorFunction::erfc>({-inf, inf, not_a_number, 0, -0.0, 28, 40, -30, big, tiny}, k);
  }
}

TEST_CASE("apply_in_place<double>: log of the smallest subnormal within 4 ulp, every kernel") {
  const double tiny = std::numeric_limits<double>::denorm_min();
  for (VectorKernel k : kernels<VectorFunction::log>()) {
    double y = tiny;
    apply_in_place<VectorFunction::log>(&y, 1, k);
    CHECK(ulp_error<VectorFunction::log>(tiny, y) <= bound);
  }
}

TEST_CASE("apply_in_place<double>: an entry's result depends on its value only, not on position or length") {
  for (VectorKernel k : kernels<VectorFunction::exp>()) {
    CAPTURE(std::string(kernel_name(k)));
    check_position_independence<VectorFunction::exp>(-1.0 / 3, -0.37, k);
    check_position_independence<VectorFunction::log>(1.0 / 3, 0.37, k);
    check_position_independence<VectorFunction::tanh>(-2.0 / 3, 0.11, k);
    check_position_independence<VectorFunction::erfc>(-2.0 / 3, 0.29, k);
  }
}

TEST_CASE("apply_in_place: the scalar kernel is the std:: function, entry by entry") {
  std::vector<double> x;
  for (int k = 1; k <= 37; ++k)
    x.push_back(0.21 * k - 1.0 / 7);
  std::vector<double> y = x;
  apply_in_place<VectorFunction::tanh>(y.data(), y.size(), VectorKernel::scalar);
  for (std::size_t i = 0; i < x.size(); ++i)
    CHECK(y[i] == std::tanh(x[i]));
}

TEST_CASE("apply_in_place<float50>: the function of each entry") {
  using std::erfc;
  using std::exp;
  using std::log;
  using std::tanh;
  const std::vector<float50> x{float50(0), log(float50(3)), -log(float50(2)), float50(-7) / float50(8)};
  auto each = [&](auto f, auto in_place) {
    std::vector<float50> y = x;
    in_place(y.data(), y.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      CHECK(y[i] == f(x[i]));
  };
  each([](const float50& v) { return float50(exp(v)); }, exp_in_place<float50>);
  each([](const float50& v) { return float50(tanh(v)); }, tanh_in_place<float50>);
  each([](const float50& v) { return float50(erfc(v)); }, erfc_in_place<float50>);
  std::vector<float50> positive{float50(1), float50(3), float50(1) / float50(7)};
  std::vector<float50> y = positive;
  log_in_place(y.data(), y.size());
  for (std::size_t i = 0; i < positive.size(); ++i)
    CHECK(y[i] == log(positive[i]));
}
