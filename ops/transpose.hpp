#pragma once
#include "../autodiff/operands.hpp"

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

/// transpose(a).                                          a: m x n, result: n x m
///   forward  result[j][i] = a[i][j]
///   VJP      da[i][j] += grad[j][i]                   da += grad^T
struct TransposeOp {
  static constexpr OpInfo info{.name = "transpose",
                               .call = "transpose(a)",
                               .node = "Transpose",
                               .file = "transpose.hpp",
                               .formula = "result[j][i] = a[i][j]",
                               .shapes = "a: m x n -> n x m"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return {in[0].cols(), in[0].rows()};
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label);
};

template <Real T> Var<T> TransposeOp::apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  Matrix<T> result = tape.buffer(in[0].cols(), in[0].rows());
  transpose_tiled(result, in[0].value());
  return tape.template record<TransposeOp>(
      in, std::move(result),
      [](Backprop<T>& bp) { bp.accumulate_with(0, [&](Matrix<T>& da) { transpose_tiled(da, bp.grad()); }); },
      std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, TransposeOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> transpose(const Var<T>& a, std::string label = {}) {
  return TransposeOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
