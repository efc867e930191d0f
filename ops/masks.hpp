#pragma once
// Masks: entries a query may not see become -inf, so the softmax after them gives those keys weight exactly 0.
// A masked entry is a constant: its gradient is exactly 0, whatever flows in from above.
#include "../autodiff/operands.hpp"

#include <vector>

namespace tapegrad {
namespace detail {

/// result[i][j] = a[i][j] where keep(i, j), -inf elsewhere; the VJP passes grad through where kept.
template <Real T, class Keep> Var<T> masked(std::string_view op, const Var<T>& a, const Keep& keep,
                                            typename Tape<T>::Replay replay, std::string label) {
  Matrix<T> result = a.tape().buffer(a.rows(), a.cols());
  result = a.value();
  for (Eigen::Index i = 0; i < result.rows(); ++i)
    for (Eigen::Index j = 0; j < result.cols(); ++j)
      if (!keep(i, j)) result(i, j) = -infinity<T>();
  return a.tape().record(
      op, {a}, std::move(result),
      [keep](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& da) {
          da = bp.grad();
          for (Eigen::Index i = 0; i < da.rows(); ++i)
            for (Eigen::Index j = 0; j < da.cols(); ++j)
              if (!keep(i, j)) da(i, j) = T(0);
        });
      },
      std::move(replay), std::move(label), Tape<T>::Masks::yes);
}

} // namespace detail

/// causal_mask(a, offset): query i may see key j only when j <= i + offset.   a: m x n, result: m x n
///   forward  result[i][j] = a[i][j]   if j <= i + offset
///                         = -inf      if j >  i + offset
///   VJP      da[i][j] += grad[i][j] where kept, nothing where masked
/// Rows are queries, columns keys; m may be less than n. With `offset` earlier positions cached, query i
/// stands at position i + offset: offset = n - m makes the last query see every key. A negative offset
/// masks whole rows (query i < -offset sees nothing); softmax_rows gives such rows weight 0.
template <Real T> Var<T> causal_mask(const Var<T>& a, long offset = 0, std::string label = {}) {
  return detail::masked(
      "CausalMask", a, [offset](Eigen::Index i, Eigen::Index j) { return j <= i + offset; },
      [offset](const std::vector<Var<T>>& in) { return causal_mask(in[0], offset); }, std::move(label));
}

/// padding_mask(a, keys): key j may be seen only when keys[j] (false marks a padding position).
///                                                            a: m x n, keys: n flags, result: m x n
///   forward  result[i][j] = a[i][j] if keys[j], -inf otherwise
///   VJP      da[i][j] += grad[i][j] where keys[j], nothing elsewhere
template <Real T> Var<T> padding_mask(const Var<T>& a, const std::vector<bool>& keys, std::string label = {}) {
  if (static_cast<Eigen::Index>(keys.size()) != a.cols())
    throw ShapeError("padding_mask(" + a.name() + "): " + a.name() + " is " + shape_string(a.rows(), a.cols()) +
                     " but the key mask has " + std::to_string(keys.size()) + " flags; it needs one per column (key)");
  return detail::masked(
      "PaddingMask", a, [keys](Eigen::Index, Eigen::Index j) { return bool(keys[static_cast<std::size_t>(j)]); },
      [keys](const std::vector<Var<T>>& in) { return padding_mask(in[0], keys); }, std::move(label));
}

} // namespace tapegrad
