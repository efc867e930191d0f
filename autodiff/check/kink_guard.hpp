#pragma once
// The kink guard, beside the saturation guard: an op with a kink (its descriptor's `kink`: relu and abs, not
// differentiable where an operand entry is 0) whose operand entry lies within the reach of the central
// differences' stencil straddles the kink there. The differences then mix both one-sided slopes and cannot be
// trusted: a correct VJP may disagree with them and a wrong one may agree. Such a point is a poor test point;
// the guard names the node, the operand and the coordinate, and the per-node check does not call that node's
// disagreement a VJP failure.

#include "../finite_difference.hpp"
#include "../tape.hpp"

#include <optional>
#include <string>
#include <vector>

namespace tapegrad {

/// How far from a kink central differences reach at an operand entry x, |x| <= 1: the sixth-order stencil's
/// outermost points x +- 3h, h the default step (for |x| > 1 the kink at 0 is out of reach).
template <Real T> T kink_reach() { return T(3) * default_step<T>(Stencil::sixth_order); }

/// An operand entry of a kinked node within `reach` of the kink: which operand, where, and its value.
template <Real T> struct NearKink {
  std::size_t operand = 0;
  Eigen::Index row = 0, col = 0;
  T value{0};
};

/// The first operand entry (row-major, operand by operand) of node i within `reach` of its op's kink at 0,
/// if node i's op has a kink.
template <Real T> std::optional<NearKink<T>> near_kink(const Tape<T>& tape, std::size_t i, const T& reach) {
  const auto& node = tape.node(i);
  if (!node.op->kink) return std::nullopt;
  using std::abs;
  for (std::size_t k = 0; k < node.parents.size(); ++k) {
    const Matrix<T>& x = tape.node(node.parents[k]).value;
    for (Eigen::Index r = 0; r < x.rows(); ++r)
      for (Eigen::Index c = 0; c < x.cols(); ++c)
        if (abs(x(r, c)) <= reach) return NearKink<T>{k, r, c, x(r, c)};
  }
  return std::nullopt;
}

/// The warning for node i's entry near its kink: names the node, the operand, the coordinate and the reach.
template <Real T> std::string kink_warning(const Tape<T>& tape, std::size_t i, const NearKink<T>& k, const T& reach) {
  const auto& node = tape.node(i);
  return "kink: " + tape.node_name(i) + " (" + std::string(node.op->node) + "): entry (" + std::to_string(k.row) +
         ", " + std::to_string(k.col) + ") of its operand " + tape.node_name(node.parents[k.operand]) + " is " +
         to_string(k.value, 3) + ", within " + to_string(reach, 3) + " of " + std::string(node.op->name) +
         "'s kink at 0: central differences there straddle the kink and cannot be trusted; this is a poor test "
         "point, check one away from the kink";
}

/// Every kinked node of `tape` with an operand entry within `reach` of its kink, one warning per node.
template <Real T> std::vector<std::string> kink_warnings(const Tape<T>& tape, const T& reach) {
  std::vector<std::string> warnings;
  for (std::size_t i = 0; i < tape.size(); ++i)
    if (const auto k = near_kink(tape, i, reach)) warnings.push_back(kink_warning(tape, i, *k, reach));
  return warnings;
}

} // namespace tapegrad
