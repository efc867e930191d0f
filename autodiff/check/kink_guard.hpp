#pragma once
// The kink guard, beside the saturation guard: an op with a kink (its descriptor's `kink`: relu and abs, not
// differentiable where an operand entry is 0; or `ties`: amax, not differentiable where two entries of a reduced
// slice tie for its maximum) whose operand entry lies within the reach of the central differences' stencil
// straddles the kink there. The differences then mix both one-sided slopes and cannot be
// trusted: a correct VJP may disagree with them and a wrong one may agree. Such a point is a poor test point;
// the guard names the node, the operand and the coordinate, and the per-node check does not judge those
// coordinates (every other coordinate of the node is judged as usual).

#include "../finite_difference.hpp"
#include "../tape.hpp"

#include <algorithm>
#include <cassert>
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

/// The coordinates of x (shape xs) that lie within `reach` max(1, |m|) of their slice's maximum m along `dims`
/// (amax's "dim"; the step grows with |x| as default_step's does) in a slice where two or more entries do: a step
/// there may change which entry is the maximum, so the differences mix the slopes of both (a tie splits the
/// gradient; either side of it does not). A slice all -inf (masked) has no tie to straddle. Row-major.
template <Real T> std::vector<std::pair<Eigen::Index, Eigen::Index>>
tie_coordinates(const Matrix<T>& x, const Shape& xs, const std::vector<long>& dims, const T& reach) {
  using std::abs;
  assert(x.size() == xs.numel() && "tie_coordinates: x holds the entries of shape xs");
  Shape kept = xs;
  const auto chosen = dim_set(dims, xs.rank(), "amax");
  for (std::size_t k = 0; k < xs.rank(); ++k)
    if (chosen[k]) kept[k] = 1;
  const BroadcastWalk<1> walk(xs, {kept});
  std::vector<T> top(static_cast<std::size_t>(kept.numel()), -infinity<T>());
  std::vector<long> close(top.size(), 0);
  const T* v = x.data();
  walk.run([&](Eigen::Index o, Eigen::Index i) {
    if (v[o] > top[static_cast<std::size_t>(i)]) top[static_cast<std::size_t>(i)] = v[o];
  });
  const auto near_top = [&](Eigen::Index o, Eigen::Index i) {
    const T& m = top[static_cast<std::size_t>(i)];
    return m != -infinity<T>() && v[o] >= m - reach * std::max(T(1), T(abs(m)));
  };
  walk.run([&](Eigen::Index o, Eigen::Index i) {
    if (near_top(o, i)) ++close[static_cast<std::size_t>(i)];
  });
  std::vector<std::pair<Eigen::Index, Eigen::Index>> near;
  walk.run([&](Eigen::Index o, Eigen::Index i) {
    if (close[static_cast<std::size_t>(i)] > 1 && near_top(o, i)) near.emplace_back(o / x.cols(), o % x.cols());
  });
  std::sort(near.begin(), near.end());
  return near;
}

/// The coordinates of operand k (value x) of node i of `tape` where central differences straddle its op's kink (a
/// kink at 0, or ties for a maximum); empty for an op with neither.
template <Real T, Real U> std::vector<std::pair<Eigen::Index, Eigen::Index>>
kinked_coordinates(const Tape<T>& tape, std::size_t i, std::size_t k, const Matrix<U>& x, const U& reach) {
  const auto& node = tape.node(i);
  if (node.op->kink) return kink_coordinates(x, reach);
  if (node.op->ties) return tie_coordinates(x, tape.node(node.parents[k]).shape, node.params.dims("dim"), reach);
  return {};
}

/// The warning for node i of `tape` (an op with a kink) whose operand `operand` (its value x) has entries
/// within `reach` of the kink at `near`: names the node, the operand, the first coordinate and how many.
template <Real T> std::string kink_warning(const Tape<T>& tape, std::size_t i, std::size_t operand, const Matrix<T>& x,
                                           const std::vector<std::pair<Eigen::Index, Eigen::Index>>& near,
                                           const T& reach) {
  const auto& node = tape.node(i);
  const auto [r, c] = near.front();
  const Shape& shape = tape.node(node.parents[operand]).shape; // named by its own index: (1, 2, 3) in a 2x3x4
  return "kink: " + tape.node_name(i) + " (" + std::string(node.op->node) + "): entry " +
         entry_string(shape, r * x.cols() + c) + " of its operand " + tape.node_name(node.parents[operand]) + " is " +
         to_string(x(r, c), 3) +
         (near.size() > 1 ? " (and " + std::to_string(near.size() - 1) + " more entries)" : "") + ", within " +
         to_string(reach, 3) + " of " +
         (node.op->ties ? "another entry of its slice tied for " + std::string(node.op->name) + "'s maximum"
                        : std::string(node.op->name) + "'s kink at 0") +
         ": central differences there straddle the kink and cannot be trusted; this is a poor test point, check one "
         "away from the kink";
}

/// Every kinked node of `tape` with operand entries within `reach` of its kink, one warning per operand.
template <Real T> std::vector<std::string> kink_warnings(const Tape<T>& tape, const T& reach) {
  std::vector<std::string> warnings;
  for (std::size_t i = 0; i < tape.size(); ++i) {
    if (!tape.node(i).op->kink && !tape.node(i).op->ties) continue;
    for (std::size_t k = 0; k < tape.node(i).parents.size(); ++k) {
      const Matrix<T>& x = tape.node(tape.node(i).parents[k]).value;
      const auto near = kinked_coordinates(tape, i, k, x, reach);
      if (!near.empty()) warnings.push_back(kink_warning(tape, i, k, x, near, reach));
    }
  }
  return warnings;
}

} // namespace tapegrad
