#pragma once
// Check results as data: what a check compares (CheckKind), one comparison with its numbers (CheckResult),
// a report (CheckReport) and how a check splits into shards. Rendering lives in one place (app/report.cpp).

#include "../real.hpp"
#include "../shape.hpp"

#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace tapegrad {

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
  given_vs_reference, ///< a gradient from elsewhere (a file, another framework) against the tape's in the reference
  hessian_vs_forward, ///< the Hessian by forward over reverse against forward over forward (nested duals)
  hessian_vs_finite_differences, ///< the same against finite differences of the reference's gradient
  hessian_reference, ///< the reference's two Hessians (differences, forward over forward) against each other
};

/// Every kind, in the enum's order (a test checks each against kind_id, so none is left out).
inline constexpr CheckKind check_kinds[] = {CheckKind::tape_vs_finite_differences,
                                            CheckKind::other_vs_finite_differences,
                                            CheckKind::tape_vs_other,
                                            CheckKind::reference_consistency,
                                            CheckKind::dual_numbers,
                                            CheckKind::node_vjp,
                                            CheckKind::directional,
                                            CheckKind::forward,
                                            CheckKind::given_vs_reference,
                                            CheckKind::hessian_vs_forward,
                                            CheckKind::hessian_vs_finite_differences,
                                            CheckKind::hessian_reference};

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
  case CheckKind::given_vs_reference:
    return "given_vs_reference";
  case CheckKind::hessian_vs_forward:
    return "hessian_vs_forward";
  case CheckKind::hessian_vs_finite_differences:
    return "hessian_vs_finite_differences";
  case CheckKind::hessian_reference:
    return "hessian_reference";
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
  case CheckKind::given_vs_reference:
    return (other.empty() ? std::string("given") : other) + " vs reference tape";
  case CheckKind::hessian_vs_forward:
    return "Hessian vs forward-over-forward";
  case CheckKind::hessian_vs_finite_differences:
    return "Hessian vs differences of the gradient";
  case CheckKind::hessian_reference:
    return "reference Hessian: differences vs duals";
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
  long worst_row = 0, worst_col = 0; ///< where the error is largest, in the storage view of `shape`
  /// The shape of the values compared: the matrices' rows x cols (compare() sets it), or the tensor's they are the
  /// storage view of, where the caller knows it (set_shape), so that reports name the worst entry by its own index.
  Shape shape{1, 1};
  std::string numeric, analytic; ///< the reference and the checked value there
  std::string step;              ///< the finite-difference step ("none" for dual numbers)
  std::string threshold;         ///< fixed before the run
  bool passed = false;
  std::string note;     ///< e.g. "weaker: random projections"
  std::size_t task = 0; ///< the unit of work it came from (see Shard): orders a merge of partial reports
  /// The tape node a per-node check is about (its index in recording order), and its name; -1 and empty
  /// for checks about a whole input.
  long node = -1;
  std::string node_name;
};

/// The worst entry's index in the compared values' own shape: (1, 2, 3) in a 2x3x4 input, () in a rank-0 one.
inline std::vector<Eigen::Index> worst_index(const CheckResult& c) {
  return unravel(c.shape, c.worst_row * c.shape.cols() + c.worst_col);
}
inline std::string worst_entry(const CheckResult& c) { return index_string(worst_index(c)); }

/// Gives c the shape `s` of the tensor its matrices were the storage view of (as many entries), the worst entry
/// kept.
inline void set_shape(CheckResult& c, const Shape& s) {
  assert(s.numel() == c.shape.numel() && "set_shape: the same entries");
  const long flat = c.worst_row * c.shape.cols() + c.worst_col;
  c.shape = s;
  c.worst_row = flat / s.cols();
  c.worst_col = flat % s.cols();
}

/// How many decimal digits of the checked gradient are right, from the check's relative error (relative to
/// the reference's largest entry): -log10(rel), infinity when it is exact, NaN when the error is NaN.
inline double correct_digits(const CheckResult& c) {
  if (std::isnan(c.rel_error)) return c.rel_error;
  if (c.rel_error == 0) return std::numeric_limits<double>::infinity();
  const double d = -std::log10(c.rel_error); // an infinite error: -inf, no digit right
  return d > 0 ? d : 0.0;
}

/// Whether check a is worse than check b: a failure before a pass, among those a NaN before any number, then the
/// larger error over threshold. (A check can pass above its threshold, through a noise floor.)
inline bool worse(const CheckResult& a, const CheckResult& b) {
  if (a.passed != b.passed) return !a.passed;
  const bool a_nan = std::isnan(a.ratio), b_nan = std::isnan(b.ratio);
  if (a_nan != b_nan) return a_nan;
  return !a_nan && a.ratio > b.ratio;
}

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

} // namespace tapegrad
