#pragma once
// Forward mode: the same graph code on dual numbers against the tape's gradient, along seeded directions.

#include "../dual.hpp"
#include "recording.hpp"
#include "tolerances.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tapegrad {

/// Forward mode: the graph on Dual<T> with every input seeded along a random v gives J'(x) v, which must
/// equal <grad, v> from the tape, to engine_tolerance relative to sum |grad| |v| (or absolutely within the
/// engine's rounding at the scale of J, for a derivative that is zero in truth). No step size at all.
template <Real T, class F> CheckReport dual_check(const F& f, const std::vector<Matrix<T>>& inputs,
                                                  const std::vector<std::string>& names,
                                                  const EngineGradient<T>& engine, int directions, std::uint64_t seed) {
  using std::abs;
  using D = Dual<T>;
  CheckReport report;
  std::mt19937_64 rng(seed);
  for (int d = 0; d < directions; ++d) {
    const std::vector<Matrix<T>> v = random_like(inputs, rng);
    std::vector<Matrix<D>> seeded;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      Matrix<D> m(inputs[k].rows(), inputs[k].cols());
      for (Eigen::Index i = 0; i < m.size(); ++i)
        m.data()[i] = D(inputs[k].data()[i], v[k].data()[i]);
      seeded.push_back(std::move(m));
    }
    Tape<D> tape;
    const D J = record_graph(tape, f, seeded, names).value()(0, 0);
    const T forward = J.eps;
    const T reverse = inner(engine.grads, v);
    std::vector<Matrix<T>> abs_grads;
    for (const Matrix<T>& g : engine.grads)
      abs_grads.push_back(g.cwiseAbs());
    std::vector<Matrix<T>> abs_v;
    for (const Matrix<T>& m : v)
      abs_v.push_back(m.cwiseAbs());
    const T scale = inner(abs_grads, abs_v);
    const T err = abs(forward - reverse);
    const T tol = engine_tolerance<T>();
    const T rel = scale > T(0) ? T(err / scale) : err;
    // A derivative that is zero in truth comes out of the tape as rounding residue of the terms that cancel
    // (d/dx sum(y^2) for y = rms_norm(x) with eps = 0, whose mean square is 1): when forward, reverse and their
    // difference all lie within the engine's rounding at the scale of J, engine_tol max(1, |J|) sum |v|, the
    // directional derivative is zero to what the engine can resolve, and the check passes, saying so.
    T sum_abs_v(0);
    for (const Matrix<T>& m : abs_v)
      sum_abs_v += m.sum();
    const T floor = tol * scale_of(J.val) * sum_abs_v;
    CheckResult r;
    r.kind = CheckKind::dual_numbers;
    r.name = kind_name(r.kind);
    r.input = "direction " + std::to_string(d + 1) + " of " + std::to_string(directions) + " (all inputs)";
    r.engine_precision = r.reference_precision = precision_name<T>();
    r.max_abs_error = to_string(err, 3);
    r.max_rel_error = to_string(rel, 3);
    r.abs_error = to_double(err);
    r.rel_error = to_double(rel);
    r.numeric = to_string(forward);
    r.analytic = to_string(reverse);
    r.step = "none";
    r.threshold = to_string(tol, 3);
    r.threshold_value = to_double(tol);
    r.ratio = to_double(T(rel / tol));
    const bool zero = err <= floor && abs(forward) <= floor && abs(reverse) <= floor;
    r.passed = rel <= tol || zero;
    r.note = rel <= tol || !zero
                 ? "relative to sum |grad| |v|; seed " + std::to_string(seed)
                 : "zero in truth to the engine's rounding: forward, reverse and their difference "
                   "within " +
                       to_string(floor, 3) + " (engine_tol max(1, |J|) sum |v|); seed " + std::to_string(seed);
    report.checks.push_back(std::move(r));
  }
  return report;
}

} // namespace tapegrad
