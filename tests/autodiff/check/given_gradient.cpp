// check_given_gradient(): a gradient from elsewhere against the reference tape's, in R, with the threshold of
// the precision it claims; and correct_digits(), how a report counts the digits that are right.
#include "graphs.hpp"

#include <cmath>
#include <limits>

using namespace tapegrad;
using namespace tapegrad::test;

TEST_CASE("check_given_gradient: one ulp of double passes a double claim; a claim of 50 digits does not") {
  MpfrDigits digits(50);
  Matrix<mpfr_real> reference(2, 2);
  reference << mpfr_real(1) / 3, mpfr_real(-2) / 7, sqrt(mpfr_real(2)), log(mpfr_real(3));
  // The reference rounded to double, entry by entry: each within half an ulp of double.
  const Matrix<mpfr_real> as_double = reference.unaryExpr([](const mpfr_real& x) { return mpfr_real(double(x)); });
  const mpfr_real double_claim = given_threshold(mpfr_real(engine_tolerance<double>()));
  const mpfr_real fifty_claim = given_threshold(engine_tolerance<mpfr_real>());
  MESSAGE("thresholds: double " << to_string(double_claim, 3) << ", 50 digits " << to_string(fifty_claim, 3));
  const CheckResult d = check_given_gradient("W", as_double, reference, double_claim, "double");
  MESSAGE("double's rounding: rel " << d.max_rel_error << ", " << correct_digits(d) << " digits");
  CHECK(d.passed);
  CHECK(d.kind == CheckKind::given_vs_reference);
  CHECK(d.engine_precision == "given, claimed double");
  CHECK(correct_digits(d) > 15);
  CHECK(correct_digits(d) < 18);
  CHECK_FALSE(check_given_gradient("W", as_double, reference, fifty_claim, "50").passed);
  // The reference itself is exact: infinitely many digits.
  const CheckResult same = check_given_gradient("W", reference, reference, fifty_claim, "50");
  CHECK(same.passed);
  CHECK(std::isinf(correct_digits(same)));
}

TEST_CASE("check_given_gradient: the worst coordinate is named with both values; a shape that differs throws") {
  MpfrDigits digits(50);
  Matrix<mpfr_real> reference(1, 3), given(1, 3);
  reference << mpfr_real(4), mpfr_real(-1) / 2, mpfr_real(1) / 8;
  given = reference;
  given(0, 1) *= mpfr_real(1) + mpfr_real(1) / mpfr_real(1000000000); // 1e-9 relative to itself
  const CheckResult r = check_given_gradient(
      "b", given, reference, given_threshold(mpfr_real(engine_tolerance<double>())), "double", "torch float64");
  CHECK_FALSE(r.passed);
  CHECK(r.worst_col == 1);
  CHECK(r.other == "torch float64");
  // relative to the largest entry (4): 1e-9 * 1/2 / 4
  const double expected = 1.0 / 1000000000 / 8;
  CHECK(std::abs(r.rel_error / expected - 1) < 1e-6);
  CHECK(r.numeric.rfind("-0.5", 0) == 0);
  CHECK(r.analytic.rfind("-0.5000000005", 0) == 0);
  Matrix<mpfr_real> wide(2, 3);
  wide.setZero();
  CHECK_THROWS_WITH_AS(check_given_gradient("b", wide, reference, mpfr_real(1), "double"),
                       "the given gradient of 'b' is 2x3 but 'b' is 1x3", ShapeError);
  CheckResult nan;
  nan.rel_error = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isnan(correct_digits(nan)));
}
