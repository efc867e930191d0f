#pragma once
// Tolerances fixed before a run from the precisions and the stencil, the noise floors, and compare(): one
// checked matrix against a reference, as a CheckResult.

#include "../finite_difference.hpp"
#include "report.hpp"

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>
#include <vector>

namespace tapegrad {

/// Exact conversion T -> R (R has at least T's precision).
template <Real R, Real T> Matrix<R> convert(const Matrix<T>& m) {
  return m.unaryExpr([](const T& x) { return exact_convert<R>(x); });
}

/// Errors from rounding in T's own arithmetic, relative to the largest gradient entry: 2^s eps with s = 10 bits
/// of slack (1024 eps), but never more than half of T's significand bits, so at least half of them must be
/// right: float16 (11 bits) 2^5 eps = 3.1e-2, bfloat16 (8 bits) 2^4 eps = 1.25e-1; float and wider 1024 eps.
template <Real T> T engine_tolerance() {
  const int slack = std::min(10, digits<T>() / 2);
  return T(1 << slack) * epsilon<T>();
}

/// How far the sixth-order reference in R may be from the true derivative: 1000 eps_R^(6/7).
template <Real R> R reference_tolerance() { return R(1000) * expected_stencil_error<R>(Stencil::sixth_order); }

/// Threshold of engine T against a finite-difference reference in R: both error budgets added. When T and
/// R are both MPFR, call it with T's precision in effect for the engine part (see check_gradient).
template <Real T, Real R> R fd_threshold(const T& engine_tol = engine_tolerance<T>()) {
  return exact_convert<R>(engine_tol) + reference_tolerance<R>();
}

/// max(1, |J|): the scale an absolute error is measured against.
template <Real R> R scale_of(const R& J) {
  using std::abs;
  return abs(J) > R(1) ? R(abs(J)) : R(1);
}

/// The absolute noise of a finite-difference reference in R for a graph whose output is about |J|: what the
/// stencil cannot resolve, 1000 eps_R^(p/(p+1)) max(1, |J|). A gradient that is zero in truth comes out of
/// the stencil as noise of about this size, so relative to itself it is meaningless (rel ~ 1).
template <Real R> R reference_noise(Stencil s, const R& J) {
  return R(1000) * expected_stencil_error<R>(s) * scale_of(J);
}

/// The absolute floor when an engine's gradient meets the sixth-order reference: the stencil's noise plus
/// the engine's own rounding at the scale of J, engine_tol max(1, |J|). Used for the whole-graph check
/// and for each node's VJP alike.
template <Real R> R engine_noise_floor(const R& J, const R& engine_tol) {
  return reference_noise<R>(Stencil::sixth_order, J) + engine_tol * scale_of(J);
}

/// The comparison of a checked matrix with a reference, errors measured in R relative to the reference's
/// largest entry (absolute when the reference is all zero). `floor`: an absolute error at or below it
/// passes too (the noise of a finite-difference reference, see reference_noise); 0 for none. `not_judged`:
/// coordinates left out, their error and their size alike (a kink's, where differences straddle it).
template <Real R, Real T>
CheckResult compare(CheckKind kind, std::string other, std::string input, const Matrix<T>& checked,
                    const Matrix<R>& reference, const R& threshold, std::string step, const R& floor = R(0),
                    const std::vector<std::pair<Eigen::Index, Eigen::Index>>& not_judged = {}) {
  using std::abs;
  assert(checked.rows() == reference.rows() && checked.cols() == reference.cols());
  std::vector<bool> judged(static_cast<std::size_t>(reference.size()), true); // row-major
  for (const auto& [i, j] : not_judged)
    judged[static_cast<std::size_t>(i * reference.cols() + j)] = false;
  CheckResult r;
  r.kind = kind;
  r.name = kind_name(kind, other);
  r.other = std::move(other);
  r.input = std::move(input);
  r.engine_precision = precision_name<T>();
  r.reference_precision = precision_name<R>();
  r.step = std::move(step);
  r.threshold = to_string(threshold, 3);
  r.threshold_value = to_double(threshold);
  r.shape = Shape{reference.rows(), reference.cols()};
  R worst(-1), scale(0);
  std::size_t count = 0;
  for (Eigen::Index i = 0; i < reference.rows(); ++i)
    for (Eigen::Index j = 0; j < reference.cols(); ++j) {
      if (!judged[static_cast<std::size_t>(i * reference.cols() + j)]) continue; // neither error nor size counts
      ++count;
      const R e = abs(exact_convert<R>(checked(i, j)) - reference(i, j));
      if (!is_nan(worst) && !(e <= worst)) { // NaN counts as the worst, and the first one stays
        worst = e;
        r.worst_row = i;
        r.worst_col = j;
      }
      if (abs(reference(i, j)) > scale) scale = abs(reference(i, j));
    }
  if (count == 0) worst = R(0); // every coordinate left out: nothing judged, nothing wrong (see the note)
  const R rel = scale > R(0) ? R(worst / scale) : worst;
  r.max_abs_error = to_string(worst, 3);
  r.max_rel_error = to_string(rel, 3);
  r.abs_error = to_double(worst);
  r.rel_error = to_double(rel);
  r.numeric = to_string(reference(r.worst_row, r.worst_col));
  r.analytic = to_string(checked(r.worst_row, r.worst_col));
  r.ratio = threshold > R(0) ? to_double(R(rel / threshold)) : to_double(rel);
  r.passed = rel <= threshold; // false for NaN
  if (is_nan(reference(r.worst_row, r.worst_col)))
    r.note = "the reference is NaN there: a finite-difference point fell outside an op's domain (log of an entry <= "
             "0?) or the graph is not "
             "finite there; check a point farther from the domain's edge";
  if (count == 0)
    r.note = "nothing judged: every coordinate was left out (within a kink's reach), so no error and no worst entry";
  if (!r.passed && worst <= floor) {
    r.passed = true;
    r.note = "every gradient entry is at the reference's noise level: abs " + r.max_abs_error + " <= noise floor " +
             to_string(floor, 3);
  }
  return r;
}

} // namespace tapegrad
