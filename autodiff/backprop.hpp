#pragma once
// Backprop<T>: the one thing a VJP is handed while the tape sweeps backwards through its node.

#include "real.hpp"
#include "shape.hpp"

#include <cstddef>
#include <utility>

namespace tapegrad {

template <Real T> class Tape;

/// How a contribution is written into an adjoint: over it (its old entries are never read, so it needs no zeroing
/// first: a GEMM's beta = 0) or added to it (beta = 1).
enum class Into { assign, add };

/// What a VJP sees while the tape sweeps backwards through its node.
template <Real T> class Backprop {
public:
  /// The adjoint of this node's result (d output / d result), same shape as the result.
  const Matrix<T>& grad() const { return tape_.sweep_adjoint(node_); }
  /// The forward value of this node.
  const Matrix<T>& result() const { return tape_.node_value(node_); }
  /// The forward value of parent k (in the order the op passed its parents).
  const Matrix<T>& input(std::size_t k) const { return tape_.node_value(tape_.parent(node_, k)); }
  /// The shapes of parent k and of this node's result (values and adjoints are in their storage views).
  const Shape& input_shape(std::size_t k) const { return tape_.node(tape_.parent(node_, k)).shape; }
  const Shape& result_shape() const { return tape_.node(node_).shape; }
  /// Whether parent k takes a gradient (false for a constant, Tape::constant, and a node made from constants only):
  /// the accumulate calls below drop a contribution to it, so a VJP may skip computing one.
  bool wants(std::size_t k) const { return tape_.node(tape_.parent(node_, k)).needs_grad; }
  /// Adds `contribution` into the adjoint of parent k. A VJP only ever adds.
  template <class Expr> void accumulate(std::size_t k, const Expr& contribution) {
    tape_.accumulate(tape_.parent(node_, k), contribution);
  }
  /// The same for a contribution that is not one Eigen expression: `fill(Matrix<T>& out)` writes the whole
  /// contribution into `out` (already shaped like parent k, contents unspecified). When parent k has no
  /// adjoint yet, `out` IS that adjoint, so nothing is allocated or copied; otherwise it is the tape's
  /// scratch matrix, added afterwards.
  template <class Fill> void accumulate_with(std::size_t k, Fill&& fill) {
    tape_.accumulate_with(tape_.parent(node_, k), std::forward<Fill>(fill));
  }
  /// The same, written in place: `write(Matrix<T>& adjoint, Into into)` assigns the whole contribution
  /// (Into::assign: parent k's first this sweep; `adjoint` is shaped, its contents unspecified) or adds it
  /// (Into::add) to parent k's adjoint. Neither a temporary nor a zeroing pass: for contributions that a kernel can
  /// add where it writes (a GEMM with beta = 1, a layout op's inverse map).
  template <class Write> void accumulate_in_place(std::size_t k, Write&& write) {
    tape_.accumulate_in_place(tape_.parent(node_, k), std::forward<Write>(write));
  }
  /// The tape's work matrix (see Tape::work(): every use overwrites it), for a VJP's temporaries; never the
  /// matrix accumulate_with fills.
  Matrix<T>& work() { return tape_.work(); }

private:
  friend class Tape<T>;
  Backprop(Tape<T>& tape, std::size_t node) : tape_(tape), node_(node) {}
  Tape<T>& tape_;
  std::size_t node_;
};

} // namespace tapegrad
