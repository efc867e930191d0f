#pragma once
#include "../autodiff/operands.hpp"

#include <cstdint>
#include <random>

namespace tapegrad {

using BoolMatrix = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Which entries dropout keeps, and the drop probability p. The pattern is drawn once and then shared by
/// the forward, the VJP, a replay, and any independent reference (graph/attention_by_hand.hpp), so every
/// precision and every checker sees the same function.
struct DropoutMask {
  BoolMatrix keep;
  double p = 0;
};

/// A Bernoulli pattern: each entry dropped with probability p, drawn row by row from `rng` (the top 53 bits
/// of each draw as a uniform number in [0, 1), so the pattern is the same on every platform).
inline DropoutMask dropout_mask(Eigen::Index rows, Eigen::Index cols, double p, std::mt19937_64& rng) {
  if (!(p >= 0 && p < 1))
    throw UsageError("dropout_mask: p = " + std::to_string(p) + "; the drop probability must be in [0, 1)");
  DropoutMask m{BoolMatrix(rows, cols), p};
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j)
      m.keep(i, j) = static_cast<double>(rng() >> 11) * 0x1p-53 >= p;
  return m;
}

/// dropout(a, mask): inverted dropout with a fixed pattern.        a: m x n, mask: m x n, result: m x n
///   forward  result[i][j] = a[i][j] / (1 - p)   where mask.keep[i][j], 0 elsewhere
///   VJP      da[i][j] += grad[i][j] / (1 - p)   where kept, nothing elsewhere
/// 1 / (1 - p) is computed in T from the double p.
template <Real T> Var<T> dropout(const Var<T>& a, const DropoutMask& mask, std::string label = {}) {
  if (mask.keep.rows() != a.rows() || mask.keep.cols() != a.cols())
    throw ShapeError("dropout(" + a.name() + "): " + a.name() + " is " + shape_string(a.rows(), a.cols()) +
                     " but the mask is " + shape_string(mask.keep.rows(), mask.keep.cols()) + "; shapes must match");
  if (!(mask.p >= 0 && mask.p < 1))
    throw UsageError("dropout(" + a.name() + "): p = " + std::to_string(mask.p) + "; it must be in [0, 1)");
  // y = x / (1 - p) where kept, 0 where dropped: the forward map and, being linear, its own VJP.
  const auto apply = [keep = mask.keep, p = mask.p](Matrix<T>& y, const Matrix<T>& x) {
    const T factor = T(1) / (T(1) - T(p));
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < x.cols(); ++j)
        y(i, j) = keep(i, j) ? T(x(i, j) * factor) : T(0);
  };
  Matrix<T> result = a.tape().buffer(a.rows(), a.cols());
  apply(result, a.value());
  return a.tape().record(
      "Dropout", {a}, std::move(result),
      [apply](Backprop<T>& bp) { bp.accumulate_with(0, [&](Matrix<T>& da) { apply(da, bp.grad()); }); },
      [mask](const std::vector<Var<T>>& in) { return dropout(in[0], mask); }, std::move(label));
}

} // namespace tapegrad
