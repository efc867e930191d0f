#pragma once
#include "broadcast.hpp"

namespace tapegrad {

/// The broadcast shape of a bool condition and real operands, or a ShapeError naming the op and the shapes.
template <class A> Shape broadcast_with_condition(std::string_view op, const Shape& condition,
                                                  std::string_view condition_name, std::span<const A> in) {
  Shape out = condition;
  for (const A& a : in)
    if (!broadcast_shapes(Shape(out), a.shape(), out))
      throw ShapeError(std::string(op) + ": the " + std::string(condition_name) + " is " + shape_string(condition) +
                       " and " + a.name() + " is " + shape_string(a.shape()) +
                       "; they must broadcast (aligned at their last dims, per dim equal or 1)");
  return out;
}

/// where(condition, a, b): torch.where, condition a bool constant; all three broadcast.
///   forward  result[i] = condition[i] ? a[i] : b[i]
///   VJP      da += sum_to(grad where condition, a's shape);  db += sum_to(grad where not condition, b's shape)
struct WhereOp {
  static constexpr ParamSpec params[] = {
      {"condition", ParamType::constant, {}, "the bool condition (a graph file's first argument)", false}};
  static constexpr ConstOperand constants[] = {{.position = 0, .param = "condition", .boolean = true}};
  static constexpr OpInfo info{.name = "where",
                               .call = "where(condition, a, b)",
                               .node = "Where",
                               .file = "where.hpp",
                               .arity = 2,
                               .params = params,
                               .formula = "result[i] = condition[i] ? a[i] : b[i], broadcasting",
                               .shapes = "condition (bool), a, b: broadcast together",
                               .const_operands = constants};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    return broadcast_with_condition("where(" + in[0].name() + ", " + in[1].name() + ")", p.ints("condition").shape(),
                                    "condition", in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> WhereOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Shape s = shape(in, p);
  const std::shared_ptr<const Tensor<long>> c = p.ints_shared("condition");
  Matrix<T> result = tape.buffer(s);
  const T *a = in[0].value().data(), *b = in[1].value().data();
  BroadcastWalk<3>(s, {c->shape(), in[0].shape(), in[1].shape()})
      .run([&](Eigen::Index o, Eigen::Index ic, Eigen::Index ia, Eigen::Index ib) {
        result.data()[o] = (*c)[ic] != 0 ? a[ia] : b[ib];
      });
  return tape.template record<WhereOp>(
      in, s, std::move(result),
      [c](Backprop<T>& bp) {
        const T* g = bp.grad().data();
        for (std::size_t k = 0; k < 2; ++k)
          bp.accumulate_with(k, [&](Matrix<T>& d) {
            d.setZero();
            BroadcastWalk<2>(bp.result_shape(), {c->shape(), bp.input_shape(k)})
                .run([&](Eigen::Index o, Eigen::Index ic, Eigen::Index i) {
                  if (((*c)[ic] != 0) == (k == 0)) d.data()[i] += g[o];
                });
          });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, WhereOp, T)
#include "../autodiff/instances.hpp"

/// The bool tensor as the int constant a node keeps (1 true, 0 false).
inline std::shared_ptr<const Tensor<long>> bool_constant(const Tensor<bool>& t) {
  Tensor<long> out = Tensor<long>::zeros(t.shape());
  for (Eigen::Index e = 0; e < t.numel(); ++e)
    out[e] = t[e] ? 1 : 0;
  return std::make_shared<const Tensor<long>>(std::move(out));
}

template <Real T>
Var<T> where(const Tensor<bool>& condition, const Var<T>& a, const Var<T>& b, std::string label = {}) {
  return WhereOp::apply<T>(operands(a, b), Params<T>().set("condition", bool_constant(condition)), std::move(label));
}

/// masked_fill(a, mask, value): torch's a.masked_fill(mask, value), mask a bool constant broadcast to a's shape.
///   forward  result[i] = mask[i] ? value : a[i]          (value a number, or -inf / inf)
///   VJP      da[i] += grad[i] where not mask[i]
struct MaskedFillOp {
  static constexpr ParamSpec params[] = {
      {"mask", ParamType::constant, {}, "the bool mask (a graph file's second argument)", false},
      {"value", ParamType::number, {}, "the fill value: a number, \"-inf\" or \"inf\""}};
  static constexpr ConstOperand constants[] = {{.position = 1, .param = "mask", .boolean = true}};
  static constexpr OpInfo info{.name = "masked_fill",
                               .call = "masked_fill(a, mask, value)",
                               .node = "MaskedFill",
                               .file = "where.hpp",
                               .params = params,
                               .formula = "result[i] = mask[i] ? value : a[i]",
                               .shapes = "a: any, mask (bool): broadcasts to a's shape -> a's shape",
                               .masks = true,
                               .const_operands = constants};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const Shape s = broadcast_with_condition("masked_fill(" + in[0].name() + ")", p.ints("mask").shape(), "mask", in);
    if (!(s == in[0].shape()))
      throw ShapeError("masked_fill(" + in[0].name() + "): the mask is " + shape_string(p.ints("mask").shape()) +
                       " and " + in[0].name() + " is " + shape_string(in[0].shape()) + "; the mask must broadcast to " +
                       in[0].name() + "'s shape (the result has it)");
    if (is_nan(p.number("value"))) throw ShapeError("masked_fill(" + in[0].name() + "): the value is NaN");
    return s;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> MaskedFillOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Shape s = shape(in, p);
  const std::shared_ptr<const Tensor<long>> m = p.ints_shared("mask");
  const T value = p.number("value");
  Matrix<T> result = tape.buffer(s);
  const T* a = in[0].value().data();
  BroadcastWalk<1>(s, {m->shape()}).run([&](Eigen::Index o, Eigen::Index im) {
    result.data()[o] = (*m)[im] != 0 ? value : a[o];
  });
  return tape.template record<MaskedFillOp>(
      in, s, std::move(result),
      [m](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& d) {
          const T* g = bp.grad().data();
          BroadcastWalk<1>(bp.result_shape(), {m->shape()}).run([&](Eigen::Index o, Eigen::Index im) {
            d.data()[o] = (*m)[im] != 0 ? T(0) : g[o];
          });
        });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, MaskedFillOp, T)
#include "../autodiff/instances.hpp"

template <Real T>
Var<T> masked_fill(const Var<T>& a, const Tensor<bool>& mask, const T& value, std::string label = {}) {
  return MaskedFillOp::apply<T>(operands(a), Params<T>().set("mask", bool_constant(mask)).number("value", value),
                                std::move(label));
}

} // namespace tapegrad
