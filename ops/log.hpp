#pragma once
#include "../autodiff/operands.hpp"
#include "../autodiff/vector_math.hpp"

namespace tapegrad {

/// log(a), natural, elementwise.                          a, result: m x n
///   forward  result[i][j] = log(a[i][j])
///   VJP      da[i][j] += grad[i][j] / a[i][j]         (d/dx log(x) = 1/x)
/// Domain: every entry > 0. An entry <= 0 (or NaN) is a DomainError naming the node, the operand and the
/// entry, not a silent -inf or NaN.
struct LogOp {
  static constexpr OpInfo info{.name = "log",
                               .call = "log(a)",
                               .node = "Log",
                               .file = "log.hpp",
                               .formula = "result[i][j] = log(a[i][j]), entries > 0",
                               .shapes = elementwise_shapes,
                               .dual = "log",
                               .domains = positive_operand};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label);
};

template <Real T> Var<T> LogOp::apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  require_domain(info, in, 0, label);
  const Matrix<T>& x = in[0].value();
  Matrix<T> result = tape.buffer(x.rows(), x.cols());
  result = x;
  log_in_place(result.data(), static_cast<std::size_t>(result.size())); // vectorised for double
  return tape.template record<LogOp>(
      in, in[0].shape(), std::move(result),
      [](Backprop<T>& bp) { bp.accumulate(0, bp.grad().cwiseQuotient(bp.input(0))); }, std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, LogOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> log(const Var<T>& a, std::string label = {}) {
  return LogOp::apply<T>(operands(a), {}, std::move(label));
}

} // namespace tapegrad
