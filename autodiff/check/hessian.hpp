#pragma once
// Second order: the Hessian of a graph's 1x1 output with respect to every input entry, the inputs flattened in
// order, each row-major. Three independent ways:
//   - forward over reverse (the engine's): the graph recorded on Tape<Dual<T>> with the inputs' tangent a unit
//     vector e_k and swept backwards; the tangent of the gradient is row k of H. N sweeps for N entries. It uses
//     every op's VJP, run on dual numbers: a VJP that is not generic (a shortcut that drops the tangent) gives a
//     wrong second derivative with a right first one;
//   - forward over forward: the graph's forward code on Dual<Dual<T>>, seeded e_k inside and e_l outside; the
//     outer tangent of the inner one is H_kl, exactly up to rounding. No VJP and no step;
//   - finite differences (sixth order) of the reverse gradient.
// check_hessian() compares the engine's in T with the other two in R, thresholds fixed before the run.

#include "../dual.hpp"
#include "../error.hpp"
#include "recording.hpp"
#include "report.hpp"
#include "tolerances.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace tapegrad {

/// Where entry `index` of the flattened inputs (of `shapes`, each row-major) is, by the input's own index:
/// "Wq(0, 1)", "X(1, 2, 3)", "s()".
inline std::string flat_entry_name(const std::vector<std::string>& names, const std::vector<Shape>& shapes,
                                   Eigen::Index index) {
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    if (index < shapes[k].numel())
      return (k < names.size() ? names[k] : "in" + std::to_string(k)) + entry_string(shapes[k], index);
    index -= shapes[k].numel();
  }
  return "?";
}

namespace detail {

template <Real T> Eigen::Index flat_size(const std::vector<Matrix<T>>& inputs) {
  Eigen::Index n = 0;
  for (const Matrix<T>& m : inputs)
    n += m.size();
  return n;
}

} // namespace detail

/// H by forward over reverse in T: N sweeps of Tape<Dual<T>>. `f(Tape<Dual<T>>&, const std::vector<Var<Dual<T>>>&)`.
template <Real T, class F>
Matrix<T> hessian(const F& f, const std::vector<Matrix<T>>& inputs, const std::vector<std::string>& names) {
  const Eigen::Index n = detail::flat_size(inputs);
  Matrix<T> H(n, n);
  std::vector<Matrix<Dual<T>>> x;
  for (const Matrix<T>& m : inputs)
    x.push_back(m.unaryExpr([](const T& v) { return Dual<T>(v); }));
  Eigen::Index k = 0;
  for (std::size_t a = 0; a < x.size(); ++a)
    for (Eigen::Index e = 0; e < x[a].size(); ++e, ++k) {
      x[a].data()[e].eps = T(1);
      Tape<Dual<T>> tape;
      const Var<Dual<T>> out = record_graph(tape, f, x, names);
      tape.backward(out);
      Eigen::Index l = 0;
      for (std::size_t b = 0; b < x.size(); ++b) {
        const Matrix<Dual<T>>& g = tape.var(b).grad();
        for (Eigen::Index i = 0; i < g.rows(); ++i)
          for (Eigen::Index j = 0; j < g.cols(); ++j)
            H(k, l++) = g(i, j).eps;
      }
      x[a].data()[e].eps = T(0);
    }
  return H;
}

/// H by forward over forward in T: the graph's forward code on Dual<Dual<T>>, one recording per pair k <= l
/// (H is symmetric). No VJP, no step.
template <Real T, class F>
Matrix<T> hessian_forward(const F& f, const std::vector<Matrix<T>>& inputs, const std::vector<std::string>& names) {
  using D2 = Dual<Dual<T>>;
  const Eigen::Index n = detail::flat_size(inputs);
  Matrix<T> H(n, n);
  std::vector<Matrix<D2>> x;
  std::vector<std::pair<std::size_t, Eigen::Index>> where; // flattened index -> (input, entry)
  for (std::size_t a = 0; a < inputs.size(); ++a) {
    x.push_back(inputs[a].unaryExpr([](const T& v) { return D2(Dual<T>(v)); }));
    for (Eigen::Index e = 0; e < inputs[a].size(); ++e)
      where.emplace_back(a, e);
  }
  for (Eigen::Index k = 0; k < n; ++k)
    for (Eigen::Index l = k; l < n; ++l) {
      const auto [ak, ek] = where[static_cast<std::size_t>(k)];
      const auto [al, el] = where[static_cast<std::size_t>(l)];
      x[ak].data()[ek].val.eps = T(1);
      x[al].data()[el].eps.val = T(1);
      Tape<D2> tape;
      const D2 out = record_graph(tape, f, x, names).value()(0, 0);
      H(k, l) = H(l, k) = out.eps.eps;
      x[ak].data()[ek].val.eps = T(0);
      x[al].data()[el].eps.val = T(0);
    }
  return H;
}

/// H by sixth-order central differences of the reverse gradient in T, one column per coordinate (6 sweeps each),
/// the step step_at(x, sixth_order). As for the gradient's differences (central_difference): a coordinate that
/// is not finite (a -inf mask entry) is a constant, its column 0; a point of the stencil outside an op's domain
/// (DomainError) gives NaN there, which the comparison reports, instead of ending the check.
template <Real T, class F>
Matrix<T> hessian_differences(const F& f, const std::vector<Matrix<T>>& inputs, const std::vector<std::string>& names) {
  const Eigen::Index n = detail::flat_size(inputs);
  Matrix<T> H = Matrix<T>::Zero(n, n);
  std::vector<Matrix<T>> x = inputs;
  const auto gradient = [&] {
    Tape<T> tape;
    try {
      tape.backward(record_graph(tape, f, x, names));
    } catch (const DomainError&) {
      return std::vector<T>(static_cast<std::size_t>(n), std::numeric_limits<T>::quiet_NaN());
    }
    std::vector<T> g;
    for (std::size_t b = 0; b < x.size(); ++b) {
      const Matrix<T>& gb = tape.var(b).grad();
      for (Eigen::Index i = 0; i < gb.rows(); ++i)
        for (Eigen::Index j = 0; j < gb.cols(); ++j)
          g.push_back(gb(i, j));
    }
    return g;
  };
  Eigen::Index l = 0;
  for (std::size_t a = 0; a < x.size(); ++a)
    for (Eigen::Index e = 0; e < x[a].size(); ++e, ++l) {
      T& coordinate = x[a](e / x[a].cols(), e % x[a].cols());
      const T x0 = coordinate;
      if (!is_finite(x0)) continue; // a constant: its column stays 0
      const T h = step_at(x0, Stencil::sixth_order);
      std::vector<std::vector<T>> at;
      for (int m : {1, -1, 2, -2, 3, -3}) {
        coordinate = x0 + T(m) * h;
        at.push_back(gradient());
      }
      coordinate = x0;
      for (Eigen::Index k = 0; k < n; ++k) {
        const auto K = static_cast<std::size_t>(k);
        H(k, l) = (T(45) * (at[0][K] - at[1][K]) - T(9) * (at[2][K] - at[3][K]) + (at[4][K] - at[5][K])) / (T(60) * h);
      }
    }
  return H;
}

/// The reference's two Hessians of a graph, in R.
template <Real R> struct HessianReference {
  Matrix<R> forward;     ///< forward over forward (nested dual numbers)
  Matrix<R> differences; ///< sixth-order differences of the reverse gradient
  /// What the differences cannot resolve, absolutely: the stencil's noise at the gradient's scale,
  /// 1000 eps_R^(6/7) max(1, max |grad|) (reference_noise): a Hessian entry small beside the gradient is noise.
  R noise;
};
template <Real R, class F> HessianReference<R> hessian_reference(const F& f, const std::vector<Matrix<R>>& x,
                                                                 const std::vector<std::string>& names) {
  using std::abs;
  Tape<R> tape;
  tape.backward(record_graph(tape, f, x, names));
  R largest(0);
  for (std::size_t b = 0; b < x.size(); ++b)
    for (Eigen::Index e = 0; e < x[b].size(); ++e)
      if (abs(tape.var(b).grad().data()[e]) > largest) largest = abs(tape.var(b).grad().data()[e]);
  return {hessian_forward(f, x, names), hessian_differences(f, x, names),
          reference_noise<R>(Stencil::sixth_order, largest)};
}

/// The Hessian checks, in R (its digits in effect): the engine's Hessian (forward over reverse in the engine's
/// precision, converted exactly to R; `engine_tol` that precision's rounding budget, 1024 eps) against forward
/// over forward (threshold engine_tol plus R's own budget) and against differences of the gradient (engine_tol
/// plus the stencil's, 1000 eps_R^(6/7)), and R's two against each other (the same budget, at most a double
/// engine's: independent of a coarse engine), these two passing also
/// within the stencil's noise at the gradient's scale (HessianReference::noise). Errors are relative to
/// the largest entry; each note names the worst entry's pair of input entries (`names`, `shapes`: the inputs, in
/// order).
template <Real R> CheckReport compare_hessians(const Matrix<R>& engine, const HessianReference<R>& ref,
                                               const R& engine_tol, const std::string& engine_name,
                                               const std::vector<std::string>& names,
                                               const std::vector<Shape>& shapes) {
  const R exact_budget = engine_tol + engine_tolerance<R>();
  const R stencil_budget = engine_tol + reference_tolerance<R>();
  // R's two need agree only as far as the engine is judged (a steep graph puts the stencil's error far above
  // its nominal 1000 eps_R^(6/7): 3.7e-20 at 50 digits for x^20000 at 1.00001), but never looser than a double
  // engine would be, whatever the engine: the engine's Hessian and forward over forward share the dual
  // numbers' rules, so a slip in one of them (1% of a second derivative) is seen here alone, and a coarse
  // engine's budget (3% for float16) must not hide it.
  const R reference_budget =
      std::min(stencil_budget, exact_convert<R>(engine_tolerance<double>()) + reference_tolerance<R>());
  const std::string step = "h6 = " + to_string(default_step<R>(Stencil::sixth_order), 3) + " (times max(1, |x|))";
  const auto named = [&](CheckResult c) {
    c.engine_precision = engine_name;
    c.note = "worst at d2 / d " + flat_entry_name(names, shapes, c.worst_row) + " d " +
             flat_entry_name(names, shapes, c.worst_col) + (c.note.empty() ? "" : "; " + c.note);
    return c;
  };
  CheckReport report;
  report.checks.push_back(
      named(compare<R, R>(CheckKind::hessian_vs_forward, {}, "H", engine, ref.forward, exact_budget, "none")));
  report.checks.push_back(named(compare<R, R>(CheckKind::hessian_vs_finite_differences, {}, "H", engine,
                                              ref.differences, stencil_budget, step, ref.noise)));
  report.checks.push_back(named(compare<R, R>(CheckKind::hessian_reference, {}, "H", ref.differences, ref.forward,
                                              reference_budget, step, ref.noise)));
  return report;
}

/// The Hessian checks of graph `f` (a 1x1 output; `f` generic in its scalar, callable on Tape<Dual<T>>,
/// Tape<R>, Tape<Dual<Dual<R>>>): hessian() in T against hessian_reference() in R, as compare_hessians() says.
/// `reference_digits` sets R's digits when R is MPFR (0: as set).
template <Real T, Real R, class F> CheckReport check_hessian(const F& f, const std::vector<Matrix<T>>& inputs,
                                                             const std::vector<std::string>& names,
                                                             unsigned reference_digits = 0) {
  std::vector<Shape> shapes; // each input's shape as the graph views it (set_input_shape), for naming entries
  {
    Tape<T> tape;
    record_graph(tape, f, inputs, names);
    require_no_detach(tape, "Hessian check");
    for (std::size_t k = 0; k < inputs.size(); ++k)
      shapes.push_back(tape.var(k).shape());
  }
  const Matrix<T> engine = hessian(f, inputs, names);
  // T's part settled before R's digits take effect (both may be MPFR).
  const T engine_tol = engine_tolerance<T>();
  const std::string engine_name = precision_name<T>();
  std::optional<MpfrDigits> digits;
  if constexpr (runtime_precision<R>)
    if (reference_digits > 0) digits.emplace(reference_digits);
  std::vector<Matrix<R>> x;
  for (const Matrix<T>& m : inputs)
    x.push_back(convert<R>(m));
  return compare_hessians<R>(convert<R>(engine), hessian_reference(f, x, names), exact_convert<R>(engine_tol),
                             engine_name, names, shapes);
}

} // namespace tapegrad
