#pragma once
// Masks: entries a query may not see become -inf, so the softmax after them gives those keys weight exactly 0.
// A masked entry is a constant: its gradient is exactly 0, whatever flows in from above.
#include "../autodiff/operands.hpp"

#include <vector>

namespace tapegrad {
namespace detail {

/// A mask acts on the last two dims (queries x keys) of a tensor of rank >= 2, the same on every trailing matrix;
/// ShapeError naming the op and operand otherwise.
template <class A> void require_trailing_matrices(std::string_view op, const A& a) {
  if (a.shape().rank() < 2)
    throw ShapeError(std::string(op) + "(" + a.name() + "): " + a.name() + " is " + shape_string(a.shape()) +
                     " (rank " + std::to_string(a.shape().rank()) +
                     "); a mask acts on the last two dims (queries x keys), so it needs rank >= 2");
}

/// Records op Op: result[.., i, j] = a[.., i, j] where keep(i, j), -inf elsewhere, on every trailing matrix; the
/// VJP passes grad through where kept.
template <class Op, Real T, class Keep>
Var<T> masked(std::span<const Var<T>> in, const Keep& keep, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(Op::info, in);
  const Var<T>& a = in[0];
  require_trailing_matrices(Op::info.name, a);
  const Eigen::Index queries = a.shape()[a.shape().rank() - 2]; // the storage view's row r is query r mod queries
  Matrix<T> result = tape.buffer(a.shape());
  const Eigen::Index n = result.cols();
  for (Eigen::Index i = 0; i < result.rows(); ++i) { // row by row on raw pointers, so the compiler can vectorise
    const T* x = a.value().data() + i * n;
    T* r = result.data() + i * n;
    const Eigen::Index query = i % queries;
    for (Eigen::Index j = 0; j < n; ++j)
      r[j] = keep(query, j) ? x[j] : -infinity<T>();
  }
  return tape.template record<Op>(
      in, a.shape(), std::move(result),
      [keep, queries](Backprop<T>& bp) {
        bp.accumulate_in_place(0, [&](Matrix<T>& da, Into into) {
          const Eigen::Index n = da.cols();
          for (Eigen::Index i = 0; i < da.rows(); ++i) {
            const T* g = bp.grad().data() + i * n;
            T* d = da.data() + i * n;
            const Eigen::Index query = i % queries;
            if (into == Into::assign)
              for (Eigen::Index j = 0; j < n; ++j)
                d[j] = keep(query, j) ? g[j] : T(0);
            else
              for (Eigen::Index j = 0; j < n; ++j)
                if (keep(query, j)) d[j] += g[j];
          }
        });
      },
      std::move(label), p);
}

} // namespace detail

/// causal_mask(a, offset): query i may see key j only when j <= i + offset.   a: m x n, result: m x n
/// (any rank >= 2: the same on each trailing matrix)
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
                               .shapes = "a: .. x m x n -> a's shape (each trailing matrix)",
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
                               .shapes = "a: .. x m x n, keys: n flags -> a's shape",
                               .masks = true};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const std::vector<bool>& keys = p.flags("keys");
    detail::require_trailing_matrices("padding_mask", in[0]);
    if (static_cast<Eigen::Index>(keys.size()) != in[0].cols())
      throw ShapeError("padding_mask(" + in[0].name() + "): " + in[0].name() + " is " + shape_string(in[0].shape()) +
                       " but the key mask has " + std::to_string(keys.size()) +
                       " flags; it needs one per column (key)");
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
