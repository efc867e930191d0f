#pragma once
// A gradient computed elsewhere (another framework, a hand-written backward, a low-precision kernel) against
// the reference: the tape's gradient of the same graph in R, which the caller has confirmed against finite
// differences (check_gradient with R as the engine and more digits as the reference).

#include "../error.hpp"
#include "tolerances.hpp"

#include <string>
#include <utility>

namespace tapegrad {

/// The threshold for a gradient that claims a precision whose rounding budget is `claimed_tol` (engine_tolerance
/// of that precision: 1024 eps relative to the largest entry), measured against a reference tape in R: the
/// claim's budget plus the reference's own, both fixed before anything is compared.
template <Real R> R given_threshold(const R& claimed_tol) { return claimed_tol + engine_tolerance<R>(); }

/// The given gradient of `input` against the reference tape's, coordinate by coordinate, errors relative to the
/// reference's largest entry; `claimed` names the claimed precision ("double") and `source` the gradient
/// ("given", "torch float32"). A shape that differs is a ShapeError naming both.
template <Real R> CheckResult check_given_gradient(const std::string& input, const Matrix<R>& given,
                                                   const Matrix<R>& reference, const R& threshold,
                                                   const std::string& claimed, std::string source = "given") {
  if (given.rows() != reference.rows() || given.cols() != reference.cols())
    throw ShapeError("the " + source + " gradient of '" + input + "' is " + shape_string(given.rows(), given.cols()) +
                     " but '" + input + "' is " + shape_string(reference.rows(), reference.cols()));
  CheckResult r =
      compare<R, R>(CheckKind::given_vs_reference, std::move(source), input, given, reference, threshold, "none");
  r.engine_precision = r.other + ", claimed " + claimed;
  return r;
}

} // namespace tapegrad
