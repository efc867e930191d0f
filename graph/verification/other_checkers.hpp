#pragma once
// Would the usual checks have caught it? PyTorch's gradcheck (slow and fast mode) and JAX's check_grads, by their
// documented criteria, applied by tapegrad itself in double at the same point to the gradient under test (no
// PyTorch or JAX needed). Their random vectors are drawn from the same distributions as theirs from a seeded
// std::mt19937_64 (the same kind of draw, not the same numbers), by fixed formulas (53-bit uniforms, Box-Muller),
// so every standard library gives the same verdicts.
//   gradcheck (torch/autograd/gradcheck.py, PyTorch 1.13.1; _slow_gradcheck): every input entry x_e, central
//     difference with the entry moved by eps = 1e-6, n = (f(x + eps e) - f(x - eps e)) / (2 eps); fails where
//     |a - n| > atol + rtol |n|, atol = 1e-5, rtol = 1e-3 (allclose, a NaN fails). In both modes it also runs
//     backward with a zero grad_output and fails unless every input's gradient is exactly 0
//     (_test_backward_mul_by_grad_output); done here on the graph's own tape. Its reentrancy check (the
//     Jacobian twice, equal within nondet_tol = 0) is not repeated: every fault here is deterministic.
//   gradcheck fast mode (_fast_gradcheck): per input, one random u (uniform [0, 1) entries, scaled to norm 1) and,
//     for the 1x1 output, v = 1; compares a = <grad, u> with n = (f(x + eps u) - f(x - eps u)) / (2 eps), the
//     absolute tolerance scaled by v^T (all ones) u = sum(u) (_adjusted_atol): fails where
//     |a - n| > atol sum(u) + rtol |n|.
//   check_grads (jax/_src/public_test_util.py) with modes=("rev",) (its default forward mode calls jax.jvp, which
//     a custom_vjp function refuses), that is check_vjp: one random tangent t over all inputs,
//     then one random cotangent c for the output (standard normal), ip = <t, c grad> against
//     <(f(x + eps t) - f(x - eps t)) / (2 eps), c>, eps = 1e-4; fails where |ip - ip'| > atol + rtol |ip'|,
//     atol = rtol = 1e-5 (float64's default gradient tolerance with x64 enabled; each multiplied by the size of
//     the compared value, 1 for an inner product), with numpy's assert_allclose rules: NaN equals NaN and an
//     infinity itself; the difference quotient's f(x + eps t) - f(x - eps t) is 0 where both are the same infinity
//     (safe_sub).

#include "../../autodiff/check/recording.hpp"

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace tapegrad {

/// The criteria, each tool's defaults.
struct OtherCheckerCriteria {
  double gradcheck_eps = 1e-6, gradcheck_atol = 1e-5, gradcheck_rtol = 1e-3;
  double check_grads_eps = 1e-4, check_grads_atol = 1e-5, check_grads_rtol = 1e-5;
};

/// What each would conclude; `catches` is "the check fails", so a fault it misses is false.
struct OtherCheckerVerdicts {
  bool gradcheck_catches = false, gradcheck_fast_catches = false, check_grads_catches = false;
  std::string gradcheck_worst; ///< the entry furthest outside (or nearest to) gradcheck's tolerance, in words
};

namespace detail {
inline bool outside(double a, double n, double atol, double rtol) {
  return !(std::abs(a - n) <= atol + rtol * std::abs(n)); // NaN on either side is outside
}
/// numpy.testing.assert_allclose's test as JAX calls it: NaN equal to NaN, an infinity to itself.
inline bool outside_allclose(double a, double b, double atol, double rtol) {
  if ((std::isnan(a) && std::isnan(b)) || a == b) return false;
  return outside(a, b, atol, rtol);
}
/// A uniform draw in [0, 1) from the top 53 bits, and a standard normal one by Box-Muller: fixed formulas.
inline double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1p-53; }
inline double standard_normal(std::mt19937_64& rng) {
  const double u = 1 - uniform01(rng), v = uniform01(rng); // u in (0, 1]
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * 3.14159265358979323846 * v);
}
inline std::string sci(double x) {
  std::ostringstream o;
  o.precision(3);
  o << x;
  return o.str();
}
} // namespace detail

/// The three verdicts on `gradient` (one matrix per input, as the code under test produced it) for the graph
/// `f` at `inputs`, with respect to the inputs `wrt`.
/// `options` are the tape options of the code under test (a fault of the tape's own), used for the zero-grad_output
/// test.
template <class F>
OtherCheckerVerdicts other_checkers(const F& f, std::vector<Matrix<double>> x, const std::vector<std::string>& names,
                                    const std::vector<std::size_t>& wrt, const std::vector<Matrix<double>>& gradient,
                                    std::uint64_t seed, const OtherCheckerCriteria& c = {},
                                    const TapeOptions& options = {}) {
  const auto J = [&](const std::vector<Matrix<double>>& at) {
    Tape<double> tape;
    return record_graph(tape, f, at, names).value()(0, 0);
  };
  OtherCheckerVerdicts v;
  // gradcheck, both modes: a zero grad_output must give exactly zero gradients.
  bool zero_seed_fails = false;
  {
    Tape<double> tape(options);
    const Var<double> out = record_graph(tape, f, x, names);
    tape.backward(out, Matrix<double>::Zero(1, 1));
    for (std::size_t k : wrt)
      zero_seed_fails = zero_seed_fails || !(tape.grad(tape.var(k)).array() == 0.0).all();
  }
  v.gradcheck_catches = v.gradcheck_fast_catches = zero_seed_fails;
  if (zero_seed_fails) v.gradcheck_worst = "backward with a zero grad_output gives a gradient that is not 0";
  // gradcheck, slow mode: entry by entry.
  double worst_ratio = -1;
  for (std::size_t k : wrt)
    for (Eigen::Index e = 0; e < x[k].size(); ++e) {
      const double x0 = x[k].data()[e];
      x[k].data()[e] = x0 + c.gradcheck_eps;
      const double up = J(x);
      x[k].data()[e] = x0 - c.gradcheck_eps;
      const double down = J(x);
      x[k].data()[e] = x0;
      const double n = (up - down) / (2 * c.gradcheck_eps), a = gradient[k].data()[e];
      const double allowed = c.gradcheck_atol + c.gradcheck_rtol * std::abs(n);
      const double ratio = std::isnan(a - n) ? INFINITY : std::abs(a - n) / allowed;
      if (detail::outside(a, n, c.gradcheck_atol, c.gradcheck_rtol)) v.gradcheck_catches = true;
      if (ratio > worst_ratio && !zero_seed_fails) {
        worst_ratio = ratio;
        const Eigen::Index i = e / x[k].cols(), j = e % x[k].cols(); // Matrix is row-major
        v.gradcheck_worst = names[k] + "(" + std::to_string(i) + ", " + std::to_string(j) + "): |a - n| " +
                            detail::sci(std::abs(a - n)) + (ratio > 1 ? " > " : " <= ") +
                            detail::sci(c.gradcheck_atol) + " + " + detail::sci(c.gradcheck_rtol) +
                            " |n| = " + detail::sci(allowed) + " (a " + detail::sci(a) + ", n " + detail::sci(n) + ")";
      }
    }
  std::mt19937_64 rng(seed);
  // gradcheck, fast mode: one projection per input.
  for (std::size_t k : wrt) {
    Matrix<double> u = x[k].unaryExpr([&](double) { return detail::uniform01(rng); });
    u /= u.norm();
    std::vector<Matrix<double>> up = x, down = x;
    up[k] += c.gradcheck_eps * u;
    down[k] -= c.gradcheck_eps * u;
    const double n = (J(up) - J(down)) / (2 * c.gradcheck_eps), a = gradient[k].cwiseProduct(u).sum();
    if (detail::outside(a, n, c.gradcheck_atol * u.sum(), c.gradcheck_rtol)) v.gradcheck_fast_catches = true;
  }
  // check_grads, reverse mode: one tangent over every input, one cotangent.
  std::vector<Matrix<double>> up = x, down = x;
  double ip = 0;
  for (std::size_t k : wrt) {
    const Matrix<double> t = x[k].unaryExpr([&](double) { return detail::standard_normal(rng); });
    up[k] += c.check_grads_eps * t;
    down[k] -= c.check_grads_eps * t;
    ip += gradient[k].cwiseProduct(t).sum();
  }
  const double cotangent = detail::standard_normal(rng);
  const double f_up = J(up), f_down = J(down);
  const double difference = std::isinf(f_up) && f_up == f_down ? 0.0 : f_up - f_down; // safe_sub
  const double expected = cotangent * difference / (2 * c.check_grads_eps);
  v.check_grads_catches = detail::outside_allclose(cotangent * ip, expected, c.check_grads_atol, c.check_grads_rtol);
  return v;
}

} // namespace tapegrad
