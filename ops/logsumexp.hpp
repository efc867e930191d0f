#pragma once
#include "amax.hpp"

#include <vector>

namespace tapegrad {

/// logsumexp(a, dims, keepdim): log of the sum of exp over dims, shifted by the slice's maximum (torch.logsumexp).
///   forward  m = max of the slice,  result = m + log(sum exp(a[i] - m))   (a slice all -inf: -inf)
///   VJP      da[i] += grad[i's slice] exp(a[i] - m) / sum exp(a[k] - m)   (the softmax; 0 for a slice all -inf)
/// An entry of +inf is a DomainError naming it (inf - inf).
struct LogsumexpOp {
  static constexpr OpInfo info{.name = "logsumexp",
                               .call = "logsumexp(a, dims, keepdim)",
                               .node = "Logsumexp",
                               .file = "logsumexp.hpp",
                               .params = max_reduction_params,
                               .formula = "result = m + log(sum exp(a - m)) over dim, m the maximum",
                               .shapes = "a: any rank >= 1 -> a's without dim (keepdim: kept as 1)",
                               .dual = "exp, log",
                               .masks = true};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    return reduced_shape("logsumexp", in[0], p);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> LogsumexpOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  using std::exp;
  using std::log;
  Tape<T>& tape = common_tape(info, in);
  const Shape kept = kept_shape("logsumexp", in[0], p), s = shape(in, p);
  const Shape& xs = in[0].shape();
  const T* x = in[0].value().data();
  for (Eigen::Index o = 0; o < xs.numel(); ++o)
    if (x[o] == infinity<T>())
      throw DomainError("logsumexp(" + in[0].name() + ")" + (label.empty() ? "" : " for '" + label + "'") + ": entry " +
                        entry_string(xs, o) + " of " + in[0].name() +
                        " is +inf: its logsumexp is undefined (inf - inf)");
  // Per slice: its maximum m and sum exp(a - m), kept for the VJP.
  const auto n = static_cast<std::size_t>(kept.numel());
  std::vector<T> top(n), total(n, T(0));
  slice_max(top.data(), x, xs, kept);
  const BroadcastWalk<1> walk(xs, {kept});
  walk.run([&](Eigen::Index o, Eigen::Index i) {
    if (top[static_cast<std::size_t>(i)] != -infinity<T>())
      total[static_cast<std::size_t>(i)] += exp(T(x[o] - top[static_cast<std::size_t>(i)]));
  });
  Matrix<T> result = tape.buffer(s);
  for (std::size_t i = 0; i < n; ++i)
    result.data()[i] = top[i] == -infinity<T>() ? top[i] : T(top[i] + log(total[i]));
  return tape.template record<LogsumexpOp>(
      in, s, std::move(result),
      [kept, top = std::move(top), total = std::move(total)](Backprop<T>& bp) {
        const T *a = bp.input(0).data(), *g = bp.grad().data();
        bp.accumulate_with(0, [&](Matrix<T>& da) {
          BroadcastWalk<1>(bp.input_shape(0), {kept}).run([&](Eigen::Index o, Eigen::Index i) {
            const auto k = static_cast<std::size_t>(i);
            da.data()[o] = top[k] == -infinity<T>() ? T(0) : T(g[i] * exp(T(a[o] - top[k])) / total[k]);
          });
        });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, LogsumexpOp, T)
#include "../autodiff/instances.hpp"

/// logsumexp(a, {dims}, keepdim): torch.logsumexp(a, dims, keepdim).
template <Real T>
Var<T> logsumexp(const Var<T>& a, std::vector<long> dims, bool keepdim = false, std::string label = {}) {
  return LogsumexpOp::apply<T>(operands(a), Params<T>().set("dim", std::move(dims)).set("keepdim", keepdim),
                               std::move(label));
}

} // namespace tapegrad
