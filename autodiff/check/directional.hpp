#pragma once
// Directional finite differences: one random projection <grad, v> per direction (weaker, and labelled so).

#include "input_differences.hpp"
#include "options.hpp"
#include "recording.hpp"
#include "tolerances.hpp"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace tapegrad {

/// Directional finite differences: d/dt J(x + t v) at t = 0 in R against <grad, v>. Weaker than the
/// per-coordinate check: an error orthogonal to every v drawn goes unseen.
template <Real T, Real R, class F>
CheckReport directional_check(const F& f, const std::vector<Matrix<T>>& inputs, const std::vector<std::string>& names,
                              const EngineGradient<T>& engine, const CheckOptions& opt, const R& threshold) {
  using std::abs;
  CheckReport report;
  std::mt19937_64 rng(opt.seed);
  std::vector<Matrix<R>> x;
  for (const Matrix<T>& m : inputs)
    x.push_back(convert<R>(m));
  for (int d = 0; d < opt.directions; ++d) {
    std::vector<Matrix<T>> v = random_like(inputs, rng);
    for (std::size_t k = 0; k < v.size(); ++k)
      if (!opt.wrt.empty() && std::find(opt.wrt.begin(), opt.wrt.end(), k) == opt.wrt.end()) v[k].setZero();
    std::vector<Matrix<R>> vr;
    for (const Matrix<T>& m : v)
      vr.push_back(convert<R>(m));
    const auto along = [&](const std::vector<Matrix<R>>& t) -> R {
      std::vector<Matrix<R>> moved = x;
      for (std::size_t k = 0; k < moved.size(); ++k)
        moved[k] += t[0](0, 0) * vr[k];
      Tape<R> tape;
      return outside_domain_is_nan<R>([&] { return record_graph(tape, f, moved, names).value()(0, 0); });
    };
    const Matrix<R> numeric =
        central_difference<R>(along, std::vector<Matrix<R>>{Matrix<R>::Zero(1, 1)}, 0, Stencil::sixth_order);
    Matrix<T> analytic(1, 1);
    analytic(0, 0) = inner(engine.grads, v);
    CheckResult r = compare<R, T>(
        CheckKind::directional, {}, "direction " + std::to_string(d + 1) + " of " + std::to_string(opt.directions),
        analytic, numeric, threshold, "h6 = " + to_string(default_step<R>(Stencil::sixth_order), 3));
    r.note = "weaker: one random projection <grad, v>, not every coordinate; seed " + std::to_string(opt.seed);
    report.checks.push_back(std::move(r));
  }
  return report;
}

} // namespace tapegrad
