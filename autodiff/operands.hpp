#pragma once
// Operand checks shared by the ops: one tape, and shapes that fit, with messages that name the op, the
// operands' labels and their shapes: "matmul(Q, Kt): Q is 3x4 but Kt is 3x3; columns of the left must
// equal rows of the right".

#include "tape.hpp"

#include <string>
#include <string_view>

namespace tapegrad {

/// Both operands are live Vars of one tape (else UsageError); returns that tape.
template <Real T> Tape<T>& common_tape(std::string_view op, const Var<T>& a, const Var<T>& b) {
  if (!a.valid() || !b.valid())
    throw UsageError(std::string(op) + ": an operand is a default-constructed Var, not on any tape");
  if (&a.tape() != &b.tape())
    throw UsageError(std::string(op) + "(" + a.name() + ", " + b.name() + "): " + a.name() + " and " + b.name() +
                     " are on different tapes; all operands of an op must be on one tape");
  return a.tape();
}

/// Throws ShapeError "op(a, b): a is RxC but b is RxC; rule".
template <Real T>
[[noreturn]] void shape_mismatch(std::string_view op, const Var<T>& a, const Var<T>& b, std::string_view rule) {
  throw ShapeError(std::string(op) + "(" + a.name() + ", " + b.name() + "): " + a.name() + " is " +
                   shape_string(a.rows(), a.cols()) + " but " + b.name() + " is " + shape_string(b.rows(), b.cols()) +
                   "; " + std::string(rule));
}

/// Elementwise ops: a and b on one tape with equal shapes (no broadcasting).
template <Real T> Tape<T>& same_shape(std::string_view op, const Var<T>& a, const Var<T>& b) {
  Tape<T>& tape = common_tape(op, a, b);
  if (a.rows() != b.rows() || a.cols() != b.cols())
    shape_mismatch(op, a, b, "shapes must be equal (tapegrad does not broadcast)");
  return tape;
}

} // namespace tapegrad
