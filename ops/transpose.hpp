#pragma once
#include "layout.hpp"

#include <algorithm>
#include <cassert>

namespace tapegrad {

/// out = a^T (Into::assign) or out += a^T (Into::add) for a, rows x cols, and out, cols x rows, in raw row-major
/// storage (not overlapping), in 16 x 16 tiles: a whole transposed copy reads a's columns with a stride of a row
/// and touches a new cache line per entry; a tile of doubles reads 32 lines (16 rows of 128 bytes) and writes 32. At
/// attention's K (512 x 64) the tiles took 7.5 us and Eigen's whole-matrix transposed copy 24.8 us
/// (bench/elementwise.cpp, BM_Transpose, one run).
template <Real T> void transpose_tiled(T* out, Into into, const T* a, Eigen::Index rows, Eigen::Index cols) {
  const Eigen::Map<const Matrix<T>> A(a, rows, cols);
  Eigen::Map<Matrix<T>> Out(out, cols, rows);
  constexpr Eigen::Index tile = 16;
  for (Eigen::Index i = 0; i < rows; i += tile)
    for (Eigen::Index j = 0; j < cols; j += tile) {
      const Eigen::Index r = std::min(tile, rows - i), c = std::min(tile, cols - j);
      if (r == tile && c == tile) { // a whole tile: fixed sizes, which Eigen unrolls
        if (into == Into::assign)
          Out.template block<tile, tile>(j, i).noalias() = A.template block<tile, tile>(i, j).transpose();
        else
          Out.template block<tile, tile>(j, i).noalias() += A.template block<tile, tile>(i, j).transpose();
      } else if (into == Into::assign) {
        Out.block(j, i, c, r).noalias() = A.block(i, j, r, c).transpose();
      } else {
        Out.block(j, i, c, r).noalias() += A.block(i, j, r, c).transpose();
      }
    }
}
/// out = a^T (out shaped n x m already, not a itself).
template <Real T> void transpose_tiled(Matrix<T>& out, const Matrix<T>& a) {
  assert(out.rows() == a.cols() && out.cols() == a.rows() && &out != &a);
  transpose_tiled(out.data(), Into::assign, a.data(), a.rows(), a.cols());
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
  const std::size_t r = in[0].rank();
  if (d0 == d1 || std::max(d0, d1) != r - 1 || std::min(d0, d1) != r - 2) // not the last two dims: the index map
    return record_layout<TransposeOp>(in, p, std::move(label), map(in[0], p));
  // The last two dims: each trailing matrix transposed in tiles.
  const Shape out = shape(in, p);
  const Eigen::Index rows = out[r - 1], cols = out[r - 2], slices = rows * cols == 0 ? 0 : out.numel() / (rows * cols);
  Matrix<T> result = tape.buffer(out);
  for (Eigen::Index e = 0; e < slices; ++e)
    transpose_tiled(result.data() + e * rows * cols, Into::assign, in[0].value().data() + e * rows * cols, rows, cols);
  return tape.template record<TransposeOp>(
      in, out, std::move(result),
      [slices, rows, cols](Backprop<T>& bp) {
        bp.accumulate_in_place(0, [&](Matrix<T>& da, Into into) { // the same swap: its own inverse
          for (Eigen::Index e = 0; e < slices; ++e)
            transpose_tiled(da.data() + e * rows * cols, into, bp.grad().data() + e * rows * cols, cols, rows);
        });
      },
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
