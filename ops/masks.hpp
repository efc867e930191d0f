#pragma once
// Masks: entries a query may not see become -inf, so the softmax after them gives those keys weight exactly 0.
// A masked entry is a constant: its gradient is exactly 0, whatever flows in from above.
#include "../autodiff/operands.hpp"

#include <vector>

namespace tapegrad {
namespace detail {

/// Records op Op: result[i][j] = a[i][j] where keep(i, j), -inf elsewhere; the VJP passes grad through where
/// kept.
template <class Op, Real T, class Keep>
Var<T> masked(std::span<const Var<T>> in, const Keep& keep, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(Op::info, in);
  const Var<T>& a = in[0];
  Matrix<T> result = tape.buffer(a.rows(), a.cols());
  result = a.value();
  for (Eigen::Index i = 0; i < result.rows(); ++i)
    for (Eigen::Index j = 0; j < result.cols(); ++j)
      if (!keep(i, j)) result(i, j) = -infinity<T>();
  return tape.template record<Op>(
      in, std::move(result),
      [keep](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& da) {
          da = bp.grad();
          for (Eigen::Index i = 0; i < da.rows(); ++i)
            for (Eigen::Index j = 0; j < da.cols(); ++j)
              if (!keep(i, j)) da(i, j) = T(0);
        });
      },
      std::move(label), p);
}

} // namespace detail

/// causal_mask(a, offset): query i may see key j only when j <= i + offset.   a: m x n, result: m x n
///   forward  result[i][j] = a[i][j]   if j <= i + offset
///                         = -inf      if j >  i + offset
///   VJP      da[i][j] += grad[i][j] where kept, nothing where masked
/// Rows are queries, columns keys; m may be less than n. With `offset` earlier positions cached, query i
/// stands at position i + offset: offset = n - m makes the last query see every key. A negative offset
/// masks whole rows (query i < -offset sees nothing); softmax_rows gives such rows weight 0.
struct CausalMaskOp {
  static constexpr ParamSpec params[] = {
      {"offset", ParamType::integer, "0", "cached positions before the first query"}};
  static constexpr OpInfo info{.name = "causal_mask",
                               .call = "causal_mask(a, offset)",
                               .node = "CausalMask",
                               .file = "masks.hpp",
                               .params = params,
                               .formula = "result[i][j] = a[i][j] if j <= i + offset, else -inf",
                               .shapes = "a: m x n -> m x n",
                               .masks = true};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> CausalMaskOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  const long offset = p.integer("offset");
  return detail::masked<CausalMaskOp>(
      in, [offset](Eigen::Index i, Eigen::Index j) { return j - i <= offset; }, p, std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, CausalMaskOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> causal_mask(const Var<T>& a, long offset = 0, std::string label = {}) {
  return CausalMaskOp::apply<T>(operands(a), Params<T>().set("offset", offset), std::move(label));
}

/// padding_mask(a, keys): key j may be seen only when keys[j] (0 marks a padding position).
///                                                            a: m x n, keys: n flags, result: m x n
///   forward  result[i][j] = a[i][j] if keys[j], -inf otherwise
///   VJP      da[i][j] += grad[i][j] where keys[j], nothing elsewhere
struct PaddingMaskOp {
  static constexpr ParamSpec params[] = {
      {"keys", ParamType::flags, {}, "one flag per column: 1 a real key, 0 padding"}};
  static constexpr OpInfo info{.name = "padding_mask",
                               .call = "padding_mask(a, keys)",
                               .node = "PaddingMask",
                               .file = "masks.hpp",
                               .params = params,
                               .formula = "result[i][j] = a[i][j] if keys[j] = 1, else -inf",
                               .shapes = "a: m x n, keys: n flags -> m x n",
                               .masks = true};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const std::vector<bool>& keys = p.flags("keys");
    if (static_cast<Eigen::Index>(keys.size()) != in[0].cols())
      throw ShapeError("padding_mask(" + in[0].name() + "): " + in[0].name() + " is " +
                       shape_string(in[0].rows(), in[0].cols()) + " but the key mask has " +
                       std::to_string(keys.size()) + " flags; it needs one per column (key)");
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> PaddingMaskOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  shape(in, p);
  const std::vector<bool>& keys = p.flags("keys");
  return detail::masked<PaddingMaskOp>(
      in, [keys](Eigen::Index, Eigen::Index j) { return bool(keys[static_cast<std::size_t>(j)]); }, p,
      std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, PaddingMaskOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> padding_mask(const Var<T>& a, const std::vector<bool>& keys, std::string label = {}) {
  return PaddingMaskOp::apply<T>(operands(a), Params<T>().set("keys", keys), std::move(label));
}

} // namespace tapegrad
