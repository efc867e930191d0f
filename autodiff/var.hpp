#pragma once
// Var<T>: what a graph is written with, a handle to one node of a tape (autodiff/tape.hpp).

#include "error.hpp"
#include "real.hpp"
#include "shape.hpp"
#include "tensor.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tapegrad {

template <Real T> class Tape;

/// A handle to one node of a tape: {tape, index, generation}. Cheap to copy. Using a Var after its tape was
/// cleared, or with another tape, is an error (UsageError), not undefined behaviour.
template <Real T> class Var {
public:
  Var() = default;

  Tape<T>& tape() const {
    check();
    return *tape_;
  }
  std::size_t index() const { return index_; }
  bool valid() const { return tape_ != nullptr; }

  /// The value's entries in their storage view (a matrix for rank 2: the matrix itself).
  const Matrix<T>& value() const { return tape().value(*this); }
  /// d(output)/d(this node) summed over every backward run since the last zero_grad; zeros if unreached. In the
  /// storage view, like value().
  const Matrix<T>& grad() const { return tape().grad(*this); }
  /// The value's shape, rank 0 to 8.
  const Shape& shape() const { return tape().shape(*this); }
  std::size_t rank() const { return shape().rank(); }
  /// The value as a tensor (a copy), and its gradient.
  Tensor<T> tensor() const { return Tensor<T>(shape(), value()); }
  Tensor<T> grad_tensor() const { return Tensor<T>(shape(), grad()); }
  /// The storage view's rows and columns (a matrix's own).
  Eigen::Index rows() const { return value().rows(); }
  Eigen::Index cols() const { return value().cols(); }
  const std::string& label() const { return tape().label(*this); }
  /// The label, or "node 7 (MatMul)" when the node has none: what error messages and listings show.
  std::string name() const { return tape().name(*this); }
  /// "Q (3x4)", "X (2x3x4)"
  std::string described() const { return name() + " (" + shape_string(shape()) + ")"; }

private:
  friend class Tape<T>;
  Var(Tape<T>* tape, std::size_t index, std::uint64_t generation)
      : tape_(tape), index_(index), generation_(generation) {}
  void check() const {
    if (tape_ == nullptr) throw UsageError("tapegrad: a default-constructed Var is not on any tape");
  }

  Tape<T>* tape_ = nullptr;
  std::size_t index_ = 0;
  std::uint64_t generation_ = 0;
};

} // namespace tapegrad
