// The 16-bit engines, float16 (IEEE binary16) and bfloat16: decimals rounded once, epsilon from the type's own
// digits, thresholds that ask half of the significand to be right, attention checked three ways against a
// 50-digit reference, a wrong VJP caught, and anomaly mode naming the node where float16 overflows.
#include "graphs.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace tapegrad;
using namespace tapegrad::test;

namespace {

template <Real T> float as_float(const T& x) { return static_cast<float>(x); }

} // namespace

TEST_CASE("16-bit decimals are rounded once, to nearest even, with subnormals and overflow as IEEE rounds them") {
  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  CHECK(as_float(from_decimal<float16>("1")) == 1.0f);
  CHECK(as_float(from_decimal<float16>("-0.1")) == -as_float(from_decimal<float16>("0.1")));
  // 2049 is halfway between float16's neighbours 2048 and 2050: the tie goes to even, 2048. A hair above it is
  // 2050, which rounding through float loses: float rounds 2049.0000000001 to 2049, then float16 to 2048.
  CHECK(as_float(from_decimal<float16>("2049")) == 2048.0f);
  CHECK(as_float(from_decimal<float16>("2049.0000000001")) == 2050.0f);
  CHECK(as_float(float16(std::strtof("2049.0000000001", nullptr))) == 2048.0f);
  // The largest value, 65504 = (2 - 2^-10) 2^15; from 65520 (halfway to 2^16) on, infinity.
  CHECK(as_float(from_decimal<float16>("65519.99")) == 65504.0f);
  CHECK(as_float(from_decimal<float16>("65520")) == std::numeric_limits<float>::infinity());
  CHECK(as_float(from_decimal<float16>("-1e6")) == -std::numeric_limits<float>::infinity());
  // Subnormals: the smallest is 2^-24; 2^-25 is the tie between it and 0 (to even: 0); a little more is 2^-24.
  const float tiny = std::ldexp(1.0f, -24);
  CHECK(as_float(from_decimal<float16>("5.9604644775390625e-8")) == tiny);
  CHECK(as_float(from_decimal<float16>("2.98023223876953125e-8")) == 0.0f);
  CHECK(as_float(from_decimal<float16>("2.98023223876953126e-8")) == tiny);
  // Between subnormals, rounded on their grid at once: 2.5 * 2^-24 is a tie (to even: 2 * 2^-24), a hair above it
  // is 3 * 2^-24. Rounded to 11 bits first and then to the subnormal, the hair is lost: 2 * 2^-24.
  CHECK(as_float(from_decimal<float16>("1.490116119384765625e-7")) == 2 * tiny);
  CHECK(as_float(from_decimal<float16>("1.4901161193847657e-7")) == 3 * tiny);
  // bfloat16: 1 + 2^-8 is the tie between 1 and 1 + 2^-7 (to even: 1); a little more is 1 + 2^-7. Its range is
  // float's: 1e38 is finite.
  CHECK(as_float(from_decimal<bfloat16>("1.00390625")) == 1.0f);
  CHECK(as_float(from_decimal<bfloat16>("1.0039062500001")) == 1.0f + std::ldexp(1.0f, -7));
  CHECK(std::isfinite(as_float(from_decimal<bfloat16>("1e38"))));
  // bfloat16's largest value is (2 - 2^-7) 2^127; from (2 - 2^-8) 2^127 = 3.396177529...e38 on, infinity.
  const float bf_max = std::ldexp(2.0f - std::ldexp(1.0f, -7), 127);
  CHECK(as_float(from_decimal<bfloat16>("3.3961e38")) == bf_max);
  CHECK(as_float(from_decimal<bfloat16>("3.3962e38")) == std::numeric_limits<float>::infinity());
  // Its smallest subnormal, 2^-133; 2^-134 is the tie between it and 0 (to even: 0).
  const float bf_tiny = std::ldexp(1.0f, -133);
  CHECK(as_float(from_decimal<bfloat16>("9.1835496157991211560057541970487943579583246622819337617871227053e-41")) ==
        bf_tiny);
  CHECK(as_float(from_decimal<bfloat16>("4.591774807899560578002877098524397178979162331140966880893561352650067419745"
                                        "028018951416015625e-41")) == 0.0f); // 2^-134 exactly
  CHECK(as_float(from_decimal<bfloat16>("4.6e-41")) == bf_tiny);
  CHECK(as_float(from_decimal<float16>("inf")) == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(as_float(from_decimal<bfloat16>("nan"))));
  // MPFR's exponent range, narrowed while rounding, is restored.
  CHECK(mpfr_get_emin() == emin);
  CHECK(mpfr_get_emax() == emax);
}

TEST_CASE("epsilon is 2^(1 - digits): float16 2^-10 (Eigen 3.4's numeric_limits says 2^-13), bfloat16 2^-7") {
  CHECK(as_float(epsilon<float16>()) == std::ldexp(1.0f, -10));
  CHECK(as_float(epsilon<bfloat16>()) == std::ldexp(1.0f, -7));
  CHECK(as_float(epsilon<Dual<float16>>().val) == std::ldexp(1.0f, -10));
  for (int type = 0; type < 2; ++type) {
    const float one = 1.0f, eps = type == 0 ? as_float(epsilon<float16>()) : as_float(epsilon<bfloat16>());
    const auto round = [&](float x) { return type == 0 ? as_float(float16(x)) : as_float(bfloat16(x)); };
    CHECK(round(one + eps) == one + eps); // the next value after 1
    CHECK(round(one + eps / 2) == one);   // halfway: to even
  }
  // The engine's budget: half of the significand must be right (2^5 eps, 2^4 eps); from float on, 1024 eps.
  CHECK(as_float(engine_tolerance<float16>()) == std::ldexp(1.0f, 5 - 10));
  CHECK(as_float(engine_tolerance<bfloat16>()) == std::ldexp(1.0f, 4 - 7));
  CHECK(engine_tolerance<float>() == std::ldexp(1.0f, 10 - 23));
  CHECK(engine_tolerance<double>() == std::ldexp(1.0, 10 - 52));
}

TEST_CASE("attention in float16 and bfloat16 passes against 50 digits, three ways, thresholds from epsilon") {
  CheckOptions opt;
  opt.reference_digits = 50;
  const std::uint64_t seed = 20261202;
  MESSAGE("seed " << seed);
  const auto run = [&](auto type) {
    using T = typename decltype(type)::type;
    CheckReport report;
    report.append(check_attention<T, mpfr_real>("example 1", chapter::example1<T>(), opt));
    report.append(check_attention<T, mpfr_real>("random 4,3,3,2", random_attention<T>(seed, 4, 3, 3, 2), opt));
    for (const CheckResult& c : report.checks)
      if (c.kind == CheckKind::tape_vs_finite_differences || !c.passed)
        MESSAGE(precision_name<T>() << " " << c.graph << ": " << c.name << " " << c.input << " rel " << c.max_rel_error
                                    << std::string(c.passed ? " <= " : " > ") << c.threshold);
    CHECK(report.passed());
    CHECK(report.checks.size() > 20);
  };
  run(std::type_identity<float16>{});
  run(std::type_identity<bfloat16>{});
}

TEST_CASE("a VJP off by half is caught in both 16-bit types, and the per-node check names its node") {
  Matrix<double> x(2, 2), w(2, 2), d(2, 2);
  x << 0.5, -1, 2, 0.25;
  w << 1, 0.5, -0.5, 2;
  d << 0.75, -0.25, 1, 0.5;
  CheckOptions opt;
  opt.reference_digits = 50;
  const auto run = [&](auto type) {
    using T = typename decltype(type)::type;
    const std::vector<Matrix<T>> in{x.unaryExpr([](double v) { return T(static_cast<float>(v)); }),
                                    w.unaryExpr([](double v) { return T(static_cast<float>(v)); }),
                                    d.unaryExpr([](double v) { return T(static_cast<float>(v)); })};
    const CheckReport r = check_gradient<T, mpfr_real>(BrokenGraph{}, in, {"X", "W", "D"}, opt);
    CHECK_FALSE(r.passed());
    bool named = false;
    for (const CheckResult& c : r.checks)
      if (c.kind == CheckKind::node_vjp && !c.passed) {
        MESSAGE(precision_name<T>() << ": " << c.name << " " << c.input << " rel " << c.max_rel_error << " > "
                                    << c.threshold);
        named = named || c.input.find("broken") != std::string::npos;
      }
    CHECK(named);
  };
  run(std::type_identity<float16>{});
  run(std::type_identity<bfloat16>{});
}

TEST_CASE("anomaly mode names the node where float16 overflows: exp(12) is beyond 65504, not beyond bfloat16's range") {
  Tape<float16> tape(TapeOptions{.detect_anomaly = true});
  const Var<float16> x = tape.input(Matrix<float16>::Constant(1, 2, float16(12.0f)), "x");
  CHECK_THROWS_WITH_AS(exp(x, "E"), doctest::Contains("'E'"), AnomalyError);
  Tape<bfloat16> wide(TapeOptions{.detect_anomaly = true});
  const Var<bfloat16> y = wide.input(Matrix<bfloat16>::Constant(1, 2, bfloat16(12.0f)), "y");
  CHECK(std::isfinite(as_float(exp(y, "E").value()(0, 0))));
}
