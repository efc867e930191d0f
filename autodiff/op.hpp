#pragma once
// What an op is. Its descriptor (OpInfo) is in autodiff/op_info.hpp, the values of its parameters on one node
// (Params<T>) in autodiff/params.hpp, lists of ops (OpList) in autodiff/op_list.hpp; here, the helpers its shape
// rule uses. Nothing here knows any particular op: each ops/<op>.hpp defines one, and ops/ops.hpp lists them once.
//
// An op is a struct with
//   static constexpr OpInfo info{...};
//   template <class A, Real T> static Shape shape(std::span<const A> operands, const Params<T>&);
//       the result's shape from the operands' (anything with shape() and name(): a Var, or a shape
//       alone); throws ShapeError naming the op, the operands and their shapes when they do not fit
//   template <Real T> static Var<T> apply(std::span<const Var<T>> operands, const Params<T>&, std::string label);
//       records the op; the tape replays a node with it (the per-node check, finite differences)
// and records its nodes with Tape<T>::record<Op>(...), which keeps &Op::info, the parameters and the replay.
// A built-in op defines apply right after its struct and ends with its line for autodiff/instances.hpp
// (TAPEGRAD_OP_INSTANCE in operands.hpp), so our own builds compile it once per engine type.

#include "error.hpp"
#include "op_info.hpp"
#include "op_list.hpp"
#include "params.hpp"
#include "shape.hpp"

#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace tapegrad {

/// An operand known by its shape alone (the random-graph generator, the docs): what shape() needs.
struct ShapeOperand {
  Shape dims;
  std::string label = "a";
  ShapeOperand() = default;
  ShapeOperand(Eigen::Index rows, Eigen::Index cols, std::string name = "a")
      : dims{rows, cols}, label(std::move(name)) {}
  ShapeOperand(Shape s, std::string name) : dims(s), label(std::move(name)) {}
  const Shape& shape() const { return dims; }
  Eigen::Index rows() const { return dims.rows(); }
  Eigen::Index cols() const { return dims.cols(); }
  std::string name() const { return label; }
};

/// "op(a, b): a is RxC but b is RxC; rule" as a ShapeError, for any operands with shape() and name().
template <class A>
[[noreturn]] void shape_mismatch(std::string_view op, const A& a, const A& b, std::string_view rule) {
  throw ShapeError(std::string(op) + "(" + a.name() + ", " + b.name() + "): " + a.name() + " is " +
                   shape_string(a.shape()) + " but " + b.name() + " is " + shape_string(b.shape()) + "; " +
                   std::string(rule));
}

/// The shape of an elementwise op: every operand as the first.
template <class A> Shape same_shape_as_first(std::span<const A> in) { return in[0].shape(); }

} // namespace tapegrad
