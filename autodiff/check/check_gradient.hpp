#pragma once
// The driver: the whole check of one graph (engine against finite differences in R, the reference's
// self-consistency, dual numbers, every node's VJP, other gradients three ways).

#include "../progress.hpp"
#include "checked_graph.hpp"
#include "directional.hpp"
#include "dual_check.hpp"
#include "input_differences.hpp"
#include "node_check.hpp"
#include "options.hpp"

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tapegrad {

/// The threshold of engine T against the reference R as check_gradient fixes it: T's part taken at T's
/// precision, the reference's at opt.reference_digits (when R is MPFR).
template <Real T, Real R> R check_threshold(const CheckOptions& opt) {
  const T engine_tol = engine_tolerance<T>();
  std::optional<MpfrDigits> digits;
  if constexpr (runtime_precision<R>)
    if (opt.reference_digits > 0) digits.emplace(opt.reference_digits);
  return fd_threshold<T, R>(engine_tol);
}

/// Another gradient of the same graph to check beside the tape's (a hand-written backward, say), one
/// matrix per input in the inputs' order; an empty matrix means "not provided for this input".
template <Real T> struct OtherGradient {
  std::string name;
  std::vector<Matrix<T>> grads;
};

/// check_gradient's work, on the graph held as a CheckedGraph: one instantiation per (T, R) whatever the graph.
template <Real T, Real R> CheckReport check_graph(const CheckedGraph<T, R>& f, const std::vector<Matrix<T>>& inputs,
                                                  const std::vector<std::string>& names, const CheckOptions& opt,
                                                  const std::vector<OtherGradient<T>>& others) {
  CheckReport report;
  const EngineGradient<T> engine = engine_gradient(f, inputs, names, opt.tape_options);
  Tape<T> tape(opt.tape_options); // for the per-node check
  record_graph(tape, f, inputs, names);
  const auto chosen = [&](std::size_t k) {
    return opt.wrt.empty() || std::find(opt.wrt.begin(), opt.wrt.end(), k) != opt.wrt.end();
  };
  const auto name_of = [&](std::size_t k) { return k < names.size() ? names[k] : "in" + std::to_string(k); };
  shard_unit(opt, report, [&] {
    report.append(dual_check(f, inputs, names, engine, opt.directions, opt.seed));
    for (const OtherGradient<T>& other : others)
      for (std::size_t k = 0; k < inputs.size() && k < other.grads.size(); ++k)
        if (chosen(k) && other.grads[k].size() > 0)
          report.checks.push_back(compare<T, T>(CheckKind::tape_vs_other, other.name, name_of(k), engine.grads[k],
                                                other.grads[k], engine_tolerance<T>(), "none"));
  });

  // Everything about T is settled before R's precision takes effect: when both are MPFR, epsilon<T>() and
  // T's name would otherwise follow R's digits.
  const T engine_tol = engine_tolerance<T>();
  const std::string engine_name = precision_name<T>();
  const std::size_t first_reference_check = report.checks.size();
  std::optional<MpfrDigits> digits;
  if constexpr (runtime_precision<R>)
    if (opt.reference_digits > 0) digits.emplace(opt.reference_digits);
  const R threshold = fd_threshold<T, R>(engine_tol);
  // Absolute floors for inputs whose whole gradient is zero in truth (then the reference is stencil noise):
  // the stencil's noise, plus the engine's rounding at the scale of J for the tape's comparison.
  const R J = exact_convert<R>(engine.value);
  const R sixth_noise = engine_noise_floor(J, exact_convert<R>(engine_tol));
  const R richardson_noise = reference_noise<R>(Stencil::richardson, J);
  std::vector<Matrix<R>> x;
  for (const Matrix<T>& m : inputs)
    x.push_back(convert<R>(m));
  shard_unit(opt, report, [&] {
    Tape<R> reference;
    record_graph(reference, f, x, names);
    report.append(
        node_check(tape, reference, opt.seed, threshold, opt.threads, exact_convert<R>(engine_tol), opt.strict));
  });
  if (opt.directional) require_no_detach(tape, "directional check");
  if (opt.directional)
    shard_unit(opt, report, [&] { report.append(directional_check<T, R>(f, inputs, names, engine, opt, threshold)); });
  std::size_t coordinates = 0;
  for (std::size_t k = 0; k < inputs.size() && !opt.directional; ++k)
    if (chosen(k)) coordinates += static_cast<std::size_t>(inputs[k].size());
  Progress progress("finite differences", 2 * coordinates, opt.progress);
  for (std::size_t k = 0; k < inputs.size() && !opt.directional; ++k) {
    if (!chosen(k)) continue;
    shard_unit(opt, report, [&] {
      const Reference<R> ref = fd_reference(f, x, names, k, opt.threads, &progress);
      report.checks.push_back(compare<R, R>(CheckKind::reference_consistency, {}, name_of(k), ref.richardson, ref.sixth,
                                            threshold, ref.step, richardson_noise));
      report.checks.push_back(compare<R, T>(CheckKind::tape_vs_finite_differences, {}, name_of(k), engine.grads[k],
                                            ref.sixth, threshold, ref.step, sixth_noise));
      for (const OtherGradient<T>& other : others)
        if (k < other.grads.size() && other.grads[k].size() > 0)
          report.checks.push_back(compare<R, T>(CheckKind::other_vs_finite_differences, other.name, name_of(k),
                                                other.grads[k], ref.sixth, threshold, ref.step));
    });
  }
  for (std::size_t i = first_reference_check; i < report.checks.size(); ++i)
    report.checks[i].engine_precision = engine_name; // all part of this engine's run
  return report;
}

/// The whole check of one graph: engine T against finite differences in R (every coordinate, or
/// directional), the reference's self-consistency, dual numbers, and every node's VJP. Each gradient in
/// `others` is compared with the same reference and with the tape: a three-way agreement.
template <Real T, Real R, class F>
CheckReport check_gradient(F f, const std::vector<Matrix<T>>& inputs, const std::vector<std::string>& names,
                           const CheckOptions& opt = {}, const std::vector<OtherGradient<T>>& others = {}) {
  if constexpr (std::same_as<F, CheckedGraph<T, R>>)
    return check_graph<T, R>(f, inputs, names, opt, others);
  else
    return check_graph<T, R>(CheckedGraph<T, R>(std::move(f)), inputs, names, opt, others);
}

/// The driver for engine T against the MPFR reference, the pair the program and the tests check with, compiled
/// once per type in our own builds (autodiff/instances.hpp).
#define TAPEGRAD_INSTANCE(prefix, T)                                                                                   \
  prefix template CheckReport check_graph<T, mpfr_real>(                                                               \
      const CheckedGraph<T, mpfr_real>&, const std::vector<Matrix<T>>&, const std::vector<std::string>&,               \
      const CheckOptions&, const std::vector<OtherGradient<T>>&);
#include "../instances.hpp"

} // namespace tapegrad
