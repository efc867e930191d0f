#pragma once
// Anomaly mode (TapeOptions::detect_anomaly): the first NaN or infinity a value or a gradient takes throws
// AnomalyError naming the node (op, label, shape), its parents and the coordinate. The tape calls these at its
// two hooks: when it records a node, and when a VJP has made its parents' adjoints.

#include "error.hpp"
#include "op_info.hpp"
#include "real.hpp"
#include "shape.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace tapegrad {

template <Real T> class Tape;

namespace anomaly {

/// The row-major position of the first entry of m that is NaN or infinite (-inf allowed when `minus_inf_ok`).
template <Real T> std::optional<Eigen::Index> first_bad(const Matrix<T>& m, bool minus_inf_ok) {
  for (Eigen::Index e = 0; e < m.size(); ++e) {
    const T& x = m.data()[e];
    if (is_finite(x) || (minus_inf_ok && !is_nan(x) && x < T(0))) continue;
    return e;
  }
  return std::nullopt;
}

template <Real T> std::string bad_kind(const T& x) { return is_nan(x) ? "NaN" : (x > T(0) ? "+inf" : "-inf"); }

/// Node i's value, just recorded. -inf is allowed only in values of ops that mask (OpInfo::masks) and in inputs.
template <Real T> void check_value(const Tape<T>& tape, std::size_t i) {
  const auto& n = tape.node(i);
  const auto bad = first_bad<T>(n.value, n.op->masks);
  if (!bad) return;
  std::string parents;
  for (std::size_t p : n.parents)
    parents += (parents.empty() ? "" : ", ") + tape.node_summary(p);
  throw AnomalyError("anomaly: the value of " + tape.node_summary(i) + " holds " + bad_kind(n.value.data()[*bad]) +
                     " at " + entry_string(n.shape, *bad) + "; its parents: " + (parents.empty() ? "none" : parents));
}

/// The adjoint of node p, just made by the VJP of node `by` (or the seed when `seed`).
template <Real T> void check_adjoint(const Tape<T>& tape, std::size_t by, std::size_t p, bool seed) {
  const auto& n = tape.node(p);
  if (!n.has_adjoint) return;
  const auto bad = first_bad<T>(n.adjoint, false);
  if (!bad) return;
  const std::string where = " at " + entry_string(n.shape, *bad);
  const std::string kind = bad_kind(n.adjoint.data()[*bad]);
  if (seed) throw AnomalyError("anomaly: the backward seed of " + tape.node_summary(p) + " holds " + kind + where);
  throw AnomalyError("anomaly: backward through " + tape.node_summary(by) + " made the gradient of its parent " +
                     tape.node_summary(p) + " hold " + kind + where);
}

/// The adjoints node i's VJP has just made.
template <Real T> void check_parents(const Tape<T>& tape, std::size_t i) {
  for (std::size_t p : tape.node(i).parents)
    check_adjoint(tape, i, p, false);
}

} // namespace anomaly
} // namespace tapegrad
