#pragma once
// What an op fault is and how one is recorded: a fault is an op of its own that computes the forward of the op it
// stands in for (by calling that op) and records a plausibly wrong VJP (or, for the naive softmax, a plausibly
// wrong forward). A fault declares
//   using Op                      the op it stands in for
//   static constexpr OpFaultInfo fault, OpInfo info
//   any_rank (optional)           its VJP works on values of any rank; without it, on matrices only
//   refusal(shapes) (optional)    why it cannot be injected on operands of these shapes (empty: it can)
//   invisible(operands, params)   why its slip changes nothing at this point (empty: it shows)
//   apply(in, params, label)      records it
// The faults themselves: op_faults.hpp (which lists them all) and tensor_op_faults.hpp.

#include "../../ops/ops.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tapegrad {

/// What a fault is: its number in `tapegrad bugs`, its one-line name, the op it stands in for, the slip in
/// words, and the report or project it is drawn from.
struct OpFaultInfo {
  int id = 0;
  std::string_view name;
  const OpInfo* op = nullptr;
  std::string_view slip;
  std::string_view seen_in;
};

namespace detail {

/// A fault's descriptor: the op's, with its own node type, so the per-node check names the fault's node and
/// the guards (kink, saturation, masks) treat it as the op it stands in for.
constexpr OpInfo faulty_op(const OpInfo& op, std::string_view node, std::string_view formula,
                           std::string_view file = "../graph/verification/op_faults.hpp") {
  OpInfo info = op;
  info.node = node;
  info.formula = formula;
  info.file = file;
  return info;
}

/// The forward of `Op` on in (checked as Op checks it: shapes, domains), computed on a scratch tape.
template <class Op, Real T>
Tensor<T> forward_of(std::span<const Var<T>> in, const Params<T>& p, const std::string& label) {
  Tape<T> scratch;
  std::vector<Var<T>> copies;
  for (const Var<T>& v : in)
    copies.push_back(scratch.input(v.value(), v.shape(), v.name()));
  return Op::template apply<T>(std::span<const Var<T>>(copies), p, label).tensor();
}

/// Whether fault F's VJP works on values of any rank; else it is written for matrices.
template <class F> constexpr bool any_rank_fault = requires { requires F::any_rank; };

/// Why fault F cannot be injected on operands of `shapes` (named `names`): its VJP is written for matrices and one
/// is not, or F's own refusal(shapes) says why; empty when it can.
template <class F> std::string refusal(std::span<const Shape> shapes, std::span<const std::string> names) {
  if constexpr (!any_rank_fault<F>)
    for (std::size_t k = 0; k < shapes.size(); ++k)
      if (shapes[k].rank() != 2)
        return "the slip is written for matrices; its operand " + names[k] + " is " + shape_string(shapes[k]) +
               " (rank " + std::to_string(shapes[k].rank()) + ")";
  if constexpr (requires { F::refusal(shapes); }) return F::refusal(shapes);
  return {};
}

/// Records fault `F`: the forward of F's op, the VJP given.
template <class F, Real T, class Vjp>
Var<T> record_fault(std::span<const Var<T>> in, const Params<T>& p, std::string label, Vjp vjp) {
  Tape<T>& tape = common_tape(F::info, in);
  std::vector<Shape> shapes;
  std::vector<std::string> names;
  for (const Var<T>& v : in) {
    shapes.push_back(v.shape());
    names.push_back(v.name());
  }
  if (const std::string why = refusal<F>(shapes, names); !why.empty())
    throw ShapeError(std::string(F::fault.name) + ": not injected: " + why);
  Tensor<T> value = forward_of<typename F::Op>(in, p, label);
  return tape.template record<F>(in, value.shape(), std::move(value.matrix()), std::move(vjp), std::move(label), p);
}

} // namespace detail

} // namespace tapegrad
