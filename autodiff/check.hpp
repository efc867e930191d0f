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
// Tape<Dual<T>> for forward mode. Nothing here knows an op by name.

#include "dual.hpp"
#include "finite_difference.hpp"
#include "tape.hpp"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace tapegrad {

/// The name `--precision` takes for T: float, double, long-double, float128, 50, 100, or the digits of MPFR.
template <Real T> std::string precision_name() {
  if constexpr (std::same_as<T, float>)
    return "float";
  else if constexpr (std::same_as<T, double>)
    return "double";
  else if constexpr (std::same_as<T, long double>)
    return "long-double";
  else if constexpr (std::same_as<T, float128>)
    return "float128";
  else if constexpr (std::same_as<T, float50>)
    return "50";
  else if constexpr (std::same_as<T, float100>)
    return "100";
  else
    return std::to_string(digits10<T>());
}

/// What a check compares.
enum class CheckKind {
  tape_vs_finite_differences,  ///< the tape's gradient of an input against the finite-difference reference
  other_vs_finite_differences, ///< another gradient (hand-written, a stale tape...) against the same reference
  tape_vs_other,               ///< the tape's gradient against another gradient, in T
  reference_consistency,       ///< the reference's two stencils against each other (sixth order vs Richardson)
  dual_numbers,                ///< forward mode J'(x) v against the tape's <grad, v>
  node_vjp,                    ///< one node's VJP alone against finite differences of that op alone
  directional,                 ///< d/dt J(x + t v) against <grad, v>, one random direction
  forward,                     ///< a forward value against an independent one (the by-hand attention)
};

/// Every kind, in the enum's order (a test checks each against kind_id, so none is left out).
inline constexpr CheckKind check_kinds[] = {CheckKind::tape_vs_finite_differences,
                                            CheckKind::other_vs_finite_differences,
                                            CheckKind::tape_vs_other,
                                            CheckKind::reference_consistency,
                                            CheckKind::dual_numbers,
                                            CheckKind::node_vjp,
                                            CheckKind::directional,
                                            CheckKind::forward};

/// A stable identifier of the kind, as JSON reports write it: "tape_vs_finite_differences".
inline const char* kind_id(CheckKind k) {
  switch (k) {
  case CheckKind::tape_vs_finite_differences:
    return "tape_vs_finite_differences";
  case CheckKind::other_vs_finite_differences:
    return "other_vs_finite_differences";
  case CheckKind::tape_vs_other:
    return "tape_vs_other";
  case CheckKind::reference_consistency:
    return "reference_consistency";
  case CheckKind::dual_numbers:
    return "dual_numbers";
  case CheckKind::node_vjp:
    return "node_vjp";
  case CheckKind::directional:
    return "directional";
  case CheckKind::forward:
    return "forward";
  }
  return "?";
}

/// What a person reads: "tape vs finite differences", "hand-written vs finite differences", ...; `other`
/// names the other gradient of the kinds that have one.
inline std::string kind_name(CheckKind k, const std::string& other = {}) {
  switch (k) {
  case CheckKind::tape_vs_finite_differences:
    return "tape vs finite differences";
  case CheckKind::other_vs_finite_differences:
    return other + " vs finite differences";
  case CheckKind::tape_vs_other:
    return "tape vs " + other;
  case CheckKind::reference_consistency:
    return "reference: sixth-order vs Richardson";
  case CheckKind::dual_numbers:
    return "dual numbers: J'(x) v vs <grad, v>";
  case CheckKind::node_vjp:
    return "per-node VJP";
  case CheckKind::directional:
    return "directional finite differences";
  case CheckKind::forward:
    return "tape vs " + (other.empty() ? std::string("hand-written") : other) + " forward";
  }
  return "?";
}

/// One comparison, with everything needed to judge it: never a bare "false". The fields are the data;
/// reports (text and JSON) are rendered from them, and nothing parses a message.
struct CheckResult {
  std::string graph; ///< which graph or case ("example 1, local Q K V"); set by the caller
  CheckKind kind = CheckKind::tape_vs_finite_differences;
  std::string other; ///< the other gradient's name for the kinds that compare one ("hand-written")
  std::string name;  ///< kind_name(kind, other): what was compared, as people read it
  std::string input; ///< the input (or node, or direction) it concerns
  std::string engine_precision, reference_precision;
  std::string max_abs_error, max_rel_error; ///< decimal strings
  double abs_error = 0, rel_error = 0;      ///< the same errors as numbers (NaN stays NaN)
  double threshold_value = 0;               ///< the threshold as a number
  double ratio = 0; ///< rel / threshold, computed in the reference's precision (tiny thresholds stay exact)
  long worst_row = 0, worst_col = 0; ///< where the error is largest
  std::string numeric, analytic;     ///< the reference and the checked value there
  std::string step;                  ///< the finite-difference step ("none" for dual numbers)
  std::string threshold;             ///< fixed before the run
  bool passed = false;
  std::string note;     ///< e.g. "weaker: random projections"
  std::size_t task = 0; ///< the unit of work it came from (see Shard): orders a merge of partial reports
  /// The tape node a per-node check is about (its index in recording order), and its name; -1 and empty
  /// for checks about a whole input.
  long node = -1;
  std::string node_name;
};

/// Splits the work of a check over n runs (`--shard i/n`): units of work (one input's finite differences,
/// the per-node checks, ...) are numbered in the order a run meets them, the same in every run with the
/// same options; run i does the units whose number is i modulo n. Pass one Shard to every check of a run.
struct Shard {
  unsigned index = 0, count = 1;
  std::size_t next = 0;
  /// Numbers the next unit; true when it is this run's.
  bool take() { return next++ % count == index; }
};

struct CheckReport {
  std::vector<CheckResult> checks;
  std::vector<std::string> warnings;
  bool passed() const {
    for (const CheckResult& c : checks)
      if (!c.passed) return false;
    return !checks.empty();
  }
  /// Adds other's checks and warnings; `graph` names the graph of those whose graph is not yet set.
  void append(CheckReport other, const std::string& graph = {}) {
    for (CheckResult& c : other.checks) {
      if (c.graph.empty()) c.graph = graph;
      checks.push_back(std::move(c));
    }
    for (std::string& w : other.warnings)
      warnings.push_back(std::move(w));
  }
};

/// Exact conversion T -> R (R has at least T's precision).
template <Real R, Real T> Matrix<R> convert(const Matrix<T>& m) {
  return m.unaryExpr([](const T& x) { return exact_convert<R>(x); });
}

/// Errors from rounding in T's own arithmetic, relative to the largest gradient entry: 1024 eps.
template <Real T> T engine_tolerance() { return T(1024) * epsilon<T>(); }

/// How far the sixth-order reference in R may be from the true derivative: 1000 eps_R^(6/7).
template <Real R> R reference_tolerance() { return R(1000) * expected_stencil_error<R>(Stencil::sixth_order); }

/// Threshold of engine T against a finite-difference reference in R: both error budgets added. When T and
/// R are both MPFR, call it with T's precision in effect for the engine part (see check_gradient).
template <Real T, Real R> R fd_threshold(const T& engine_tol = engine_tolerance<T>()) {
  return static_cast<R>(engine_tol) + reference_tolerance<R>();
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
/// passes too (the noise of a finite-difference reference, see reference_noise); 0 for none.
template <Real R, Real T> CheckResult compare(CheckKind kind, std::string other, std::string input,
                                              const Matrix<T>& checked, const Matrix<R>& reference, const R& threshold,
                                              std::string step, const R& floor = R(0)) {
  using std::abs;
  assert(checked.rows() == reference.rows() && checked.cols() == reference.cols());
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
  R worst(-1), scale(0);
  for (Eigen::Index i = 0; i < reference.rows(); ++i)
    for (Eigen::Index j = 0; j < reference.cols(); ++j) {
      const R e = abs(static_cast<R>(checked(i, j)) - reference(i, j));
      if (!(e <= worst)) { // NaN counts as the worst
        worst = e;
        r.worst_row = i;
        r.worst_col = j;
      }
      if (abs(reference(i, j)) > scale) scale = abs(reference(i, j));
    }
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
    r.note = "the reference is NaN at (" + std::to_string(r.worst_row) + ", " + std::to_string(r.worst_col) +
             "): a finite-difference point fell outside an op's domain (log of an entry <= 0?) or the graph is not "
             "finite there; check a point farther from the domain's edge";
  if (!r.passed && worst <= floor) {
    r.passed = true;
    r.note = "every gradient entry is at the reference's noise level: abs " + r.max_abs_error + " <= noise floor " +
             to_string(floor, 3);
  }
  return r;
}

/// The graph's 1x1 output on a fresh tape of U.
template <Real U, class F> Var<U> record_graph(Tape<U>& tape, const F& f, const std::vector<Matrix<U>>& inputs,
                                               const std::vector<std::string>& names) {
  std::vector<Var<U>> vars;
  for (std::size_t k = 0; k < inputs.size(); ++k)
    vars.push_back(tape.input(inputs[k], k < names.size() ? names[k] : "in" + std::to_string(k)));
  Var<U> out = f(tape, vars);
  if (out.rows() != 1 || out.cols() != 1)
    throw UsageError("check: the graph's output " + out.name() + " is " + shape_string(out.rows(), out.cols()) +
                     "; a checked graph must end in a 1x1 value (sum it, or take a probe sum(O * G))");
  return out;
}

/// The engine's gradient w.r.t. every input, and its value.
template <Real T> struct EngineGradient {
  T value;
  std::vector<Matrix<T>> grads;
};

template <Real T, class F> EngineGradient<T> engine_gradient(const F& f, const std::vector<Matrix<T>>& inputs,
                                                             const std::vector<std::string>& names,
                                                             const TapeOptions& options = {}) {
  Tape<T> tape(options);
  const Var<T> out = record_graph(tape, f, inputs, names);
  tape.backward(out);
  EngineGradient<T> g{out.value()(0, 0), {}};
  for (std::size_t k = 0; k < inputs.size(); ++k)
    g.grads.push_back(tape.grad(tape.var(k)));
  return g;
}

/// Tapes lent to concurrent evaluations of one graph: an evaluation borrows a cleared tape and gives it back,
/// so the next recording of the same graph reuses its buffers (Tape::buffer) instead of allocating them,
/// which for MPFR numbers is a large share of an evaluation. Lives for one finite-difference sweep only.
template <Real U> class TapePool {
public:
  /// fn(Tape<U>&) on a cleared tape of the pool; returns what fn returns.
  template <class Fn> auto with(Fn&& fn) {
    std::unique_ptr<Tape<U>> tape;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        tape = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!tape) tape = std::make_unique<Tape<U>>();
    tape->clear();
    auto result = fn(*tape);
    const std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(tape));
    return result;
  }

private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Tape<U>>> free_;
};

/// Finite-difference reference for input k in R: the sixth-order stencil, and the Richardson estimate
/// (second-order steps h and h/2) as an independent second opinion.
template <Real R> struct Reference {
  Matrix<R> sixth, richardson;
  std::string step; ///< the sixth-order step at |x| <= 1, and Richardson's
};

/// The graph's output as a function of input k alone, evaluated by recomputing only what input k reaches.
/// The graph is recorded once at `inputs`; an evaluation with input k moved replays, in recording order, the
/// nodes that both depend on input k and lead to the output (each op's replay, as the per-node check uses
/// it), and feeds every other node they read in as a constant holding its recorded value, which cannot
/// change when only input k moves. The result is the same number a full recording gives (the same ops on
/// the same values); the work saved is what does not depend on input k. In attention, moving Wv leaves Q,
/// K, S and the softmax alone (2 products of 5), moving Wq or Wk leaves one projection each.
/// The structure is the one recorded at `inputs`: a graph function that chooses its ops by looking at
/// values is differenced along the branch it took there.
template <Real R> class InputFunction {
public:
  template <class F>
  InputFunction(const F& f, const std::vector<Matrix<R>>& inputs, const std::vector<std::string>& names, std::size_t k)
      : out_(record_graph(base_, f, inputs, names).index()) {
    assert(k < inputs.size());
    // record_graph records input j as node j; then which nodes input k reaches, and which of those the
    // output needs.
    const std::size_t n = out_ + 1;
    std::vector<bool> reached(n, false), needed(n, false);
    reached[k] = true;
    for (std::size_t i = k + 1; i < n; ++i)
      for (std::size_t p : base_.node(i).parents)
        if (reached[p]) reached[i] = true;
    needed[out_] = true;
    for (std::size_t i = n; i-- > 0;)
      if (needed[i])
        for (std::size_t p : base_.node(i).parents)
          needed[p] = true;
    role_.assign(n, Role::unused);
    for (std::size_t i = 0; i < n; ++i)
      if (reached[i] && needed[i]) {
        role_[i] = i == k ? Role::moved : Role::replayed;
        if (i != k && base_.node(i).replay == nullptr) complete_ = false; // an op recorded without a replay
        for (std::size_t p : base_.node(i).parents)
          if (!reached[p]) role_[p] = Role::constant;
      }
  }

  /// Whether every node to replay has a replay (a user's op recorded without one has not); if not, the
  /// caller records the whole graph instead.
  bool complete() const { return complete_; }

  /// The output with input k set to `xk`, recorded on `tape` (cleared). Safe to call concurrently, each
  /// call with its own tape. Only when complete().
  R operator()(Tape<R>& tape, const Matrix<R>& xk) const {
    assert(complete_);
    if (role_[out_] == Role::unused) return base_.node(out_).value(0, 0); // the output ignores input k
    std::vector<Var<R>> vars(out_ + 1), parents;
    for (std::size_t i = 0; i <= out_; ++i) {
      const auto& node = base_.node(i);
      switch (role_[i]) {
      case Role::unused:
        break;
      case Role::moved:
        vars[i] = tape.input(xk);
        break;
      case Role::constant:
        vars[i] = tape.input(node.value);
        break;
      case Role::replayed:
        parents.clear();
        for (std::size_t p : node.parents)
          parents.push_back(vars[p]);
        vars[i] = base_.replay(i, parents);
        break;
      }
    }
    return vars[out_].value()(0, 0);
  }

  /// How many nodes an evaluation replays (0 when the output does not depend on input k).
  std::size_t replayed() const {
    return static_cast<std::size_t>(std::count(role_.begin(), role_.end(), Role::replayed));
  }

private:
  enum class Role { unused, moved, constant, replayed };
  Tape<R> base_;
  std::size_t out_;
  std::vector<Role> role_;
  bool complete_ = true;
};

/// evaluate(), or NaN when it throws DomainError: a finite-difference point that falls outside an op's domain
/// (log of an entry <= 0, for a coordinate within a few steps of 0) gives a NaN reference there, which the
/// comparison reports as a failure with a note, instead of ending the whole check.
template <Real R, class Evaluate> R outside_domain_is_nan(Evaluate&& evaluate) {
  try {
    return evaluate();
  } catch (const DomainError&) {
    return std::numeric_limits<R>::quiet_NaN();
  }
}

/// Coordinates run on `threads` threads (0: every core); `progress` advances by one per coordinate and stencil.
template <Real R, class F> Reference<R> fd_reference(const F& f, const std::vector<Matrix<R>>& inputs,
                                                     const std::vector<std::string>& names, std::size_t k,
                                                     unsigned threads = 1, Progress* progress = nullptr) {
  const InputFunction<R> of_k(f, inputs, names, k);
  TapePool<R> tapes;
  const auto J = [&](const std::vector<Matrix<R>>& x) -> R {
    return outside_domain_is_nan<R>([&] {
      return tapes.with([&](Tape<R>& tape) -> R {
        return of_k.complete() ? of_k(tape, x[k]) : record_graph(tape, f, x, names).value()(0, 0);
      });
    });
  };
  return {central_difference<R>(J, inputs, k, Stencil::sixth_order, R(1), threads, progress),
          central_difference<R>(J, inputs, k, Stencil::richardson, R(1), threads, progress),
          "h6 = " + to_string(default_step<R>(Stencil::sixth_order), 3) +
              ", h2 = " + to_string(default_step<R>(Stencil::richardson), 3) + " (times max(1, |x|))"};
}

/// Seeded random matrices shaped like `like`, entries k/8 with k in [-8, 8] (exact in any T).
template <Real T> std::vector<Matrix<T>> random_like(const std::vector<Matrix<T>>& like, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> k(-8, 8);
  std::vector<Matrix<T>> out;
  for (const Matrix<T>& m : like) {
    Matrix<T> v(m.rows(), m.cols());
    for (Eigen::Index i = 0; i < v.size(); ++i)
      v.data()[i] = T(k(rng)) / T(8);
    out.push_back(std::move(v));
  }
  return out;
}

template <Real T> T inner(const std::vector<Matrix<T>>& a, const std::vector<Matrix<T>>& b) {
  T s(0);
  for (std::size_t k = 0; k < a.size(); ++k)
    s += a[k].cwiseProduct(b[k]).sum();
  return s;
}

/// Forward mode: the graph on Dual<T> with every input seeded along a random v gives J'(x) v, which must
/// equal <grad, v> from the tape, to engine_tolerance relative to sum |grad| |v|. No step size at all.
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
    const T forward = record_graph(tape, f, seeded, names).value()(0, 0).eps;
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
    r.passed = rel <= tol;
    r.note = "relative to sum |grad| |v|; seed " + std::to_string(seed);
    report.checks.push_back(std::move(r));
  }
  return report;
}

/// Per node: every recorded op's VJP alone, against sixth-order differences of that op alone, with a seeded
/// random upstream gradient W; names the node whose VJP is wrong. The VJP is the engine's (T, from `tape`);
/// the differences are taken in R with the same op replayed from `reference` (the same graph recorded on
/// Tape<R>), at the T parent values converted exactly, so a steep op (log near 0) is resolved too.
/// No node is skipped silently: one whose op has no replay is listed as not checked (a warning, or a
/// failure when `strict`), and one whose replay does not reproduce its recorded value bit for bit, in T or
/// in R, is a failure (its VJP cannot be checked against differences of a different function).
template <Real T, Real R> CheckReport node_check(const Tape<T>& tape, const Tape<R>& reference, std::uint64_t seed,
                                                 const R& threshold, unsigned threads = 1,
                                                 const R& engine_tol = static_cast<R>(engine_tolerance<T>()),
                                                 bool strict = false) {
  if (tape.size() != reference.size())
    throw UsageError("per-node check: the engine's tape has " + std::to_string(tape.size()) +
                     " nodes but the reference's " + std::to_string(reference.size()) +
                     "; the graph must record the same nodes in every precision");
  CheckReport report;
  std::mt19937_64 rng(seed);
  const auto same = [](const auto& a, const auto& b) { // bit for bit, NaN where NaN
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    for (Eigen::Index e = 0; e < a.size(); ++e)
      if (!(a.data()[e] == b.data()[e] || (is_nan(a.data()[e]) && is_nan(b.data()[e])))) return false;
    return true;
  };
  const auto refuse = [&](std::size_t i, std::string note) {
    CheckResult r;
    r.kind = CheckKind::node_vjp;
    r.name = kind_name(r.kind);
    r.input = tape.node_name(i);
    r.engine_precision = precision_name<T>();
    r.reference_precision = precision_name<R>();
    r.step = "none";
    r.ratio = std::numeric_limits<double>::infinity();
    r.note = std::move(note);
    r.node = static_cast<long>(i);
    r.node_name = tape.node_name(i);
    report.checks.push_back(std::move(r));
  };
  for (std::size_t i = 0; i < tape.size(); ++i) {
    const auto& node = tape.node(i);
    if (node.is_input()) continue;
    if (reference.node(i).op != node.op) {
      refuse(i, "the reference recorded another op here (" + std::string(reference.node(i).op->node) +
                    "): a graph that chooses its ops by looking at values; its VJP is not checked");
      continue;
    }
    if (node.replay == nullptr || reference.node(i).replay == nullptr) {
      const std::string why = "not checked: " + tape.node_name(i) + " (" + std::string(node.op->node) +
                              ") has no replay, so its VJP cannot be evaluated alone";
      report.warnings.push_back("per-node check: " + why);
      if (strict) refuse(i, why + " (strict)");
      continue;
    }
    // The engine's VJP of this node alone, at the engine's own precision: when T is MPFR too, the reference's
    // digits are in effect here, and a replay made at them would not be the engine's op.
    std::optional<MpfrDigits> engine_digits;
    if constexpr (runtime_precision<T>) engine_digits.emplace(static_cast<unsigned>(node.value.data()[0].precision()));
    const std::string engine_name = precision_name<T>();
    Matrix<T> W = random_like(std::vector<Matrix<T>>{node.value}, rng)[0];
    for (Eigen::Index e = 0; e < W.size(); ++e)
      if (!is_finite(node.value.data()[e])) W.data()[e] = T(0); // a -inf entry (mask) carries no gradient
    std::vector<Matrix<T>> parents;
    for (std::size_t p : node.parents)
      parents.push_back(tape.node(p).value);
    Tape<T> scratch;
    std::vector<Var<T>> vars;
    for (const Matrix<T>& m : parents)
      vars.push_back(scratch.input(m));
    const Var<T> replayed = tape.replay(i, vars);
    if (!same(replayed.value(), node.value)) {
      engine_digits.reset();
      refuse(i, "its replay in " + engine_name +
                    " does not reproduce the recorded value bit for bit (an op "
                    "that draws something afresh, or reads state it does not keep?): its VJP is not checked");
      continue;
    }
    scratch.backward(replayed, W);
    engine_digits.reset(); // the reference's digits again
    // J(parents) = sum over the finite entries of op(parents) .* W, in R.
    const Matrix<R> Wr = convert<R>(W);
    TapePool<R> tapes; // the evaluations of this node reuse their buffers
    const auto J = [&](const std::vector<Matrix<R>>& x) -> R {
      return outside_domain_is_nan<R>([&] {
        return tapes.with([&](Tape<R>& t) -> R {
          std::vector<Var<R>> in;
          for (const Matrix<R>& m : x)
            in.push_back(t.input(m));
          const Matrix<R>& y = reference.replay(i, in).value();
          R s(0);
          for (Eigen::Index e = 0; e < y.size(); ++e)
            if (Wr.data()[e] != R(0)) s += y.data()[e] * Wr.data()[e];
          return s;
        });
      });
    };
    std::vector<Matrix<R>> parents_r;
    for (const Matrix<T>& m : parents)
      parents_r.push_back(convert<R>(m));
    {
      Tape<R> t;
      std::vector<Var<R>> in;
      for (std::size_t p : reference.node(i).parents)
        in.push_back(t.input(reference.node(p).value));
      if (!same(reference.replay(i, in).value(), reference.node(i).value)) {
        refuse(i, "its replay in " + precision_name<R>() +
                      " does not reproduce the reference's recorded value bit for "
                      "bit: its VJP is not checked");
        continue;
      }
    }
    // A VJP that is zero in truth (the softmax's, when W is constant along a row) meets stencil noise.
    const R J0 = J(parents_r);
    const R floor = engine_noise_floor(J0, engine_tol);
    for (std::size_t k = 0; k < parents.size(); ++k) {
      report.checks.push_back(compare<R, T>(
          CheckKind::node_vjp, {}, tape.node_name(i) + " <- " + tape.node_name(node.parents[k]), scratch.grad(vars[k]),
          central_difference<R>(J, parents_r, k, Stencil::sixth_order, R(1), threads), threshold,
          "h6 = " + to_string(default_step<R>(Stencil::sixth_order), 3), floor));
      report.checks.back().node = static_cast<long>(i);
      report.checks.back().node_name = tape.node_name(i);
    }
  }
  return report;
}

struct CheckOptions {
  std::vector<std::size_t> wrt;  ///< inputs to check; empty means all (others are held constant)
  bool directional = false;      ///< random projections instead of every coordinate (weaker)
  int directions = 3;            ///< for directional mode and for dual numbers
  std::uint64_t seed = 1;        ///< for every random draw; printed in the notes
  unsigned reference_digits = 0; ///< MPFR digits for the reference when R is mpfr_real (0: as set)
  TapeOptions tape_options;      ///< for the engine's tapes (fault injection in `tapegrad bugs`)
  unsigned threads = 0;          ///< for the finite-difference coordinates; 0: every core
  bool progress = false;         ///< a progress bar on stderr (only if a terminal, only after ~1 s)
  bool strict = false;           ///< a node the per-node check cannot replay is a failure, not a warning
  Shard* shard = nullptr;        ///< when set, only this run's units of work (and they are numbered)
};

/// Runs `unit` if it is this run's share (always without a shard), tagging what it adds to `report` with
/// the unit's number.
template <class Unit> void shard_unit(const CheckOptions& opt, CheckReport& report, Unit&& unit) {
  const std::size_t task = opt.shard ? opt.shard->next : 0;
  if (opt.shard && !opt.shard->take()) return;
  const std::size_t first = report.checks.size();
  unit();
  for (std::size_t i = first; i < report.checks.size(); ++i)
    report.checks[i].task = task;
}

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

/// The whole check of one graph: engine T against finite differences in R (every coordinate, or
/// directional), the reference's self-consistency, dual numbers, and every node's VJP. Each gradient in
/// `others` is compared with the same reference and with the tape: a three-way agreement.
template <Real T, Real R, class F>
CheckReport check_gradient(F f, const std::vector<Matrix<T>>& inputs, const std::vector<std::string>& names,
                           const CheckOptions& opt = {}, const std::vector<OtherGradient<T>>& others = {}) {
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
  const R sixth_noise = engine_noise_floor(J, static_cast<R>(engine_tol));
  const R richardson_noise = reference_noise<R>(Stencil::richardson, J);
  std::vector<Matrix<R>> x;
  for (const Matrix<T>& m : inputs)
    x.push_back(convert<R>(m));
  shard_unit(opt, report, [&] {
    Tape<R> reference;
    record_graph(reference, f, x, names);
    report.append(
        node_check(tape, reference, opt.seed, threshold, opt.threads, static_cast<R>(engine_tol), opt.strict));
  });
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

} // namespace tapegrad
