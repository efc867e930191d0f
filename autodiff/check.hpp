#pragma once
// Gradient verification: the tape's gradient of a scalar graph against
//   - finite differences in a reference precision R >= T, over every coordinate (a sixth-order stencil, and
//     a Richardson estimate from two second-order steps that must agree with it),
//   - or, for large inputs, along seeded random directions (weaker: labelled so),
//   - forward mode: the same graph code run on dual numbers (no step at all),
//   - per node: each recorded op's VJP alone against finite differences of that op alone.
// Every threshold is fixed before the run from T, R and the stencil, and printed with its result.
//
// A graph is any callable f(Tape<U>&, const std::vector<Var<U>>&) -> Var<U> returning a 1x1 value, generic
// in U: the checker records it on Tape<T> for the engine, on Tape<R> for the reference, and on
// Tape<Dual<T>> for forward mode. Nothing here knows an op by name, but for one: a graph whose output is a
// matrix is checked entry by entry through the slice ops (check/jacobian.hpp). A gradient computed elsewhere is
// checked against the reference tape's (check/given_gradient.hpp); second derivatives three ways by
// check/hessian.hpp.
//
// Each concern is a header of autodiff/check/; this one includes them all.

#include "check/check_gradient.hpp"
#include "check/directional.hpp"
#include "check/dual_check.hpp"
#include "check/given_gradient.hpp"
#include "check/hessian.hpp"
#include "check/input_differences.hpp"
#include "check/jacobian.hpp"
#include "check/kink_guard.hpp"
#include "check/node_check.hpp"
#include "check/options.hpp"
#include "check/recording.hpp"
#include "check/report.hpp"
#include "check/tolerances.hpp"
