#pragma once
// The kink guard, beside the saturation guard: an op with a kink (its descriptor's `kink`: relu and abs, not
// differentiable where an operand entry is 0) whose operand entry lies within the reach of the central
// differences' stencil straddles the kink there. The differences then mix both one-sided slopes and cannot be
// trusted: a correct VJP may disagree with them and a wrong one may agree. Such a point is a poor test point;
// the guard names the node, the operand and the coordinate, and the per-node check does not judge those
// coordinates (every other coordinate of the node is judged as usual).

#include "../finite_difference.hpp"
#include "../tape.hpp"

#include <string>
#include <utility>
#include <vector>

namespace tapegrad {

/// How far from a kink central differences reach at an operand entry x, |x| <= 1: the sixth-order stencil's
/// outermost points x +- 3h, h the default step (for |x| > 1 the kink at 0 is out of reach).
template <Real T> T kink_reach() { return T(3) * default_step<T>(Stencil::sixth_order); }

/// The coordinates of x within `reach` of a kink at 0, row-major.
template <Real T>
std::vector<std::pair<Eigen::Index, Eigen::Index>> kink_coordinates(const Matrix<T>& x, const T& reach) {
  using std::abs;
  std::vector<std::pair<Eigen::Index, Eigen::Index>> near;
  for (Eigen::Index r = 0; r < x.rows(); ++r)
    for (Eigen::Index c = 0; c < x.cols(); ++c)
      if (abs(x(r, c)) <= reach) near.emplace_back(r, c);
  return near;
}

/// The warning for node i of `tape` (an op with a kink) whose operand `operand` (its value x) has entries
/// within `reach` of the kink at `near`: names the node, the operand, the first coordinate and how many.
template <Real T> std::string kink_warning(const Tape<T>& tape, std::size_t i, std::size_t operand, const Matrix<T>& x,
                                           const std::vector<std::pair<Eigen::Index, Eigen::Index>>& near,
                                           const T& reach) {
  const auto& node = tape.node(i);
  const auto [r, c] = near.front();
  return "kink: " + tape.node_name(i) + " (" + std::string(node.op->node) + "): entry (" + std::to_string(r) + ", " +
         std::to_string(c) + ") of its operand " + tape.node_name(node.parents[operand]) + " is " +
         to_string(x(r, c), 3) +
         (near.size() > 1 ? " (and " + std::to_string(near.size() - 1) + " more entries)" : "") + ", within " +
         to_string(reach, 3) + " of " + std::string(node.op->name) +
         "'s kink at 0: central differences there straddle the kink and cannot be trusted; this is a poor test "
         "point, check one away from the kink";
}

/// Every kinked node of `tape` with operand entries within `reach` of its kink, one warning per operand.
template <Real T> std::vector<std::string> kink_warnings(const Tape<T>& tape, const T& reach) {
  std::vector<std::string> warnings;
  for (std::size_t i = 0; i < tape.size(); ++i) {
    if (!tape.node(i).op->kink) continue;
    for (std::size_t k = 0; k < tape.node(i).parents.size(); ++k) {
      const Matrix<T>& x = tape.node(tape.node(i).parents[k]).value;
      const auto near = kink_coordinates(x, reach);
      if (!near.empty()) warnings.push_back(kink_warning(tape, i, k, x, near, reach));
    }
  }
  return warnings;
}

} // namespace tapegrad
