// compare(): the comparison every check makes, measured in R relative to the reference's largest entry; NaN,
// the noise floor and the coordinates it is told to leave out.
#include "graphs.hpp"

#include <limits>

using namespace tapegrad;
using namespace tapegrad::test;

namespace {

Matrix<double> row(std::initializer_list<double> v) {
  Matrix<double> m(1, static_cast<Eigen::Index>(v.size()));
  Eigen::Index j = 0;
  for (double x : v)
    m(0, j++) = x;
  return m;
}

CheckResult compared(const Matrix<double>& checked, const Matrix<double>& reference,
                     const std::vector<std::pair<Eigen::Index, Eigen::Index>>& not_judged = {}) {
  const double threshold = 1e-12; // fixed here; the cases below lie far on either side of it
  return compare<double, double>(CheckKind::node_vjp, {}, "x", checked, reference, threshold, "none", 0.0, not_judged);
}

} // namespace

TEST_CASE("compare: a NaN anywhere is the worst error and fails, wherever the later entries lie") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // The NaN first: a later finite error must not take its place (it did, before: !(e <= NaN) is true).
  const CheckResult r = compared(row({nan, 1.1, 2}), row({1, 1, 2}));
  MESSAGE("rel " << r.max_rel_error << ", worst at (" << r.worst_row << ", " << r.worst_col << ")");
  CHECK_FALSE(r.passed);
  CHECK(std::isnan(r.rel_error));
  CHECK(r.worst_col == 0);
  const CheckResult last = compared(row({1, 1, nan}), row({1, 1, 2}));
  CHECK_FALSE(last.passed);
  CHECK(last.worst_col == 2);
}

TEST_CASE("compare: a coordinate left out counts neither in the error nor in the scale") {
  // At (0, 0) the checked value is wild (1e9) and the reference straddles a kink (0.5); elsewhere the error is
  // 1e-6 relative. Substituting the checked value into the reference there (the old way) puts 1e9 into the
  // scale and the error reads 1e-15: a pass. Left out, the error reads 1e-6: a failure.
  const Matrix<double> checked = row({1e9, 1 + 1e-6, 2});
  const CheckResult substituted = compared(checked, row({1e9, 1, 2}));
  MESSAGE("substituted: rel " << substituted.max_rel_error << (substituted.passed ? " (passes)" : " (fails)"));
  CHECK(substituted.passed);
  const CheckResult left_out = compared(checked, row({0.5, 1, 2}), {{0, 0}});
  MESSAGE("left out: rel " << left_out.max_rel_error << (left_out.passed ? " (passes)" : " (fails)"));
  CHECK_FALSE(left_out.passed);
  CHECK(left_out.rel_error == doctest::Approx(0.5e-6).epsilon(1e-3)); // 1e-6 over the scale 2
  CHECK(left_out.worst_col == 1);
}

TEST_CASE("compare: with every coordinate left out nothing is judged, and the note says so") {
  const CheckResult r = compared(row({7, 8}), row({0.5, 0.5}), {{0, 0}, {0, 1}});
  CHECK(r.passed);
  CHECK(r.abs_error == 0);
  CHECK(r.note.find("nothing judged") == 0);
}

TEST_CASE("compare: an error at or below the noise floor passes, and the note says why") {
  // The error is 1e-9 (relative and absolute): above the threshold 1e-12, below a floor of 1e-8.
  const auto with_floor = [](double floor) {
    return compare<double, double>(CheckKind::node_vjp, {}, "x", row({1 + 1e-9, 0}), row({1, 0}), 1e-12, "none", floor);
  };
  const CheckResult r = with_floor(1e-8);
  CHECK(r.passed);
  CHECK(r.note.find("noise level") != std::string::npos);
  CHECK_FALSE(with_floor(1e-10).passed);
}
