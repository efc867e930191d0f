#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// causal_mask(a, offset): query i may see key j only when j <= i + offset.   a: m x n, result: m x n
///   forward  result[i][j] = a[i][j]   if j <= i + offset
///                         = -inf      if j >  i + offset
///   VJP      da[i][j] += grad[i][j] where kept, nothing where masked (a masked entry is a constant)
/// offset 0 is the usual causal mask; offset k lets query i see k more keys (earlier positions cached).
template <Real T> Var<T> causal_mask(const Var<T>& a, long offset = 0, std::string label = {}) {
  const auto masked = [offset](Eigen::Index i, Eigen::Index j) { return j > i + offset; };
  Matrix<T> result = a.value();
  for (Eigen::Index i = 0; i < result.rows(); ++i)
    for (Eigen::Index j = 0; j < result.cols(); ++j)
      if (masked(i, j)) result(i, j) = -infinity<T>();
  return a.tape().record(
      "CausalMask", {a}, std::move(result),
      [masked](Backprop<T>& bp) {
        Matrix<T> da = bp.grad();
        for (Eigen::Index i = 0; i < da.rows(); ++i)
          for (Eigen::Index j = 0; j < da.cols(); ++j)
            if (masked(i, j)) da(i, j) = T(0);
        bp.accumulate(0, da);
      },
      [offset](const std::vector<Var<T>>& in) { return causal_mask(in[0], offset); }, std::move(label));
}

} // namespace tapegrad
