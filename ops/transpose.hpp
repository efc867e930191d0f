#pragma once
#include "layout.hpp"

#include <algorithm>
#include <cassert>

namespace tapegrad {

/// out = a^T (out shaped n x m already, not a itself), in 16 x 16 tiles: a whole transposed copy reads a's
/// columns with a stride of a row and touches a new cache line per entry; a tile of doubles reads 32 lines
/// (16 rows of 128 bytes) and writes 32. At attention's K (512 x 64) the tiles took 7.5 us and Eigen's
/// whole-matrix transposed copy 24.8 us (bench/elementwise.cpp, BM_Transpose, one run).
template <Real T> void transpose_tiled(Matrix<T>& out, const Matrix<T>& a) {
  assert(out.rows() == a.cols() && out.cols() == a.rows() && &out != &a);
  constexpr Eigen::Index tile = 16;
  for (Eigen::Index i = 0; i < a.rows(); i += tile)
    for (Eigen::Index j = 0; j < a.cols(); j += tile) {
      const Eigen::Index rows = std::min(tile, a.rows() - i), cols = std::min(tile, a.cols() - j);
      out.block(j, i, cols, rows).noalias() = a.block(i, j, rows, cols).transpose();
    }
}

/// transpose(a), transpose(a, dim0, dim1): two dims swapped, the last two when none are given (torch.transpose;
/// for a matrix, a^T).                                    a: m x n, result: n x m; any rank >= 2 without dims
///   forward  result[j][i] = a[i][j]                    (result[i] = a[i with dim0 and dim1 swapped])
///   VJP      da[i][j] += grad[j][i]                   da += grad^T (the same swap: its own inverse)
struct TransposeOp {
  static constexpr ParamSpec params[] = {
      {"dim0", ParamType::integer, {}, "one dim swapped (with dim1; both absent: the last two)", true, true},
      {"dim1", ParamType::integer, {}, "the other", true, true}};
  static constexpr OpInfo info{.name = "transpose",
                               .call = "transpose(a)",
                               .node = "Transpose",
                               .file = "transpose.hpp",
                               .params = params,
                               .formula = "result[j][i] = a[i][j]; dims dim0 and dim1 swapped",
                               .shapes = "a: m x n -> n x m; any rank: dim0 and dim1 swapped"};
  /// The two dims swapped, normalised; ShapeError when only one is given, one is out of range, or (without
  /// them) a has rank < 2.
  template <class A, Real T> static std::pair<std::size_t, std::size_t> swapped(const A& a, const Params<T>& p) {
    const std::size_t r = a.shape().rank();
    const std::string what = "transpose(" + a.name() + ")";
    if (p.has("dim0") != p.has("dim1")) throw ShapeError(what + ": dim0 and dim1 go together (give both or neither)");
    if (!p.has("dim0")) {
      if (r < 2)
        throw ShapeError(what + ": " + a.name() + " is " + shape_string(a.shape()) + " (rank " + std::to_string(r) +
                         "); without dim0 and dim1 transpose swaps the last two dims, so it needs rank >= 2");
      return {r - 2, r - 1};
    }
    return {normalize_dim(p.integer("dim0"), r, what), normalize_dim(p.integer("dim1"), r, what)};
  }
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const auto [d0, d1] = swapped(in[0], p);
    Shape out = in[0].shape();
    std::swap(out[d0], out[d1]);
    return out;
  }
  /// The index map of transposing a (any rank).
  template <class A, Real T> static StridedMap map(const A& a, const Params<T>& p) {
    const auto [d0, d1] = swapped(a, p);
    StridedMap m{shape(std::span<const A>(&a, 1), p)};
    m.stride = a.shape().strides();
    std::swap(m.stride[d0], m.stride[d1]);
    return m;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> TransposeOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const auto [d0, d1] = swapped(in[0], p);
  const Shape out = shape(in, p);
  if (in[0].rank() != 2 || d0 == d1) // a tensor's dims, or nothing swapped: the index map
    return record_layout<TransposeOp>(in, p, std::move(label), map(in[0], p));
  Matrix<T> result = tape.buffer(out);
  transpose_tiled(result, in[0].value());
  return tape.template record<TransposeOp>(
      in, out, std::move(result),
      [](Backprop<T>& bp) { bp.accumulate_with(0, [&](Matrix<T>& da) { transpose_tiled(da, bp.grad()); }); },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, TransposeOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> transpose(const Var<T>& a, std::string label = {}) {
  return TransposeOp::apply<T>(operands(a), {}, std::move(label));
}
/// torch.transpose(a, dim0, dim1).
template <Real T> Var<T> transpose(const Var<T>& a, long dim0, long dim1, std::string label = {}) {
  return TransposeOp::apply<T>(operands(a), Params<T>().set("dim0", dim0).set("dim1", dim1), std::move(label));
}

} // namespace tapegrad
