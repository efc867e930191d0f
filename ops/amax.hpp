#pragma once
#include "sum.hpp"

#include <limits>
#include <vector>

namespace tapegrad {

/// The parameters of amax and logsumexp: the dims reduced (required) and keepdim.
inline constexpr ParamSpec max_reduction_params[] = {
    {"dim", ParamType::dims, {}, "the dims reduced (an integer or a list)"},
    {"keepdim", ParamType::boolean, {}, "keep each reduced dim as a size 1 (default false)", true, true}};

/// The maximum of each slice of x (shape xs) along the reduced dims, in `kept`'s order (a NaN entry makes its
/// slice's maximum NaN, as torch.amax); an empty slice cannot occur (no shape holds a size 0).
template <Real T> void slice_max(T* top, const T* x, const Shape& xs, const Shape& kept) {
  for (Eigen::Index i = 0; i < kept.numel(); ++i)
    top[i] = -infinity<T>();
  BroadcastWalk<1>(xs, {kept}).run([&](Eigen::Index o, Eigen::Index i) {
    if (!is_nan(top[i]) && (x[o] > top[i] || is_nan(x[o]))) top[i] = x[o];
  });
}

/// amax(a, dims, keepdim): the maximum over dims (torch.amax).
///   forward  result[i with the dims in D removed] = max over those dims of a[i]   (keepdim: kept as 1)
///   VJP      da[i] += grad[i's slice] / t where a[i] is its slice's maximum, t the entries tied for it; 0 elsewhere
///            (a slice holding NaN: NaN for each of its entries, as torch's 0 / 0)
/// A tie is a kink (the gradient split evenly is one choice among the one-sided slopes): the kink guard names the
/// coordinates within reach of a tie.
struct AmaxOp {
  static constexpr OpInfo info{.name = "amax",
                               .call = "amax(a, dims, keepdim)",
                               .node = "Amax",
                               .file = "amax.hpp",
                               .params = max_reduction_params,
                               .formula = "result = the maximum of a's entries over dim",
                               .shapes = "a: any rank >= 1 -> a's without dim (keepdim: kept as 1)",
                               .ties = true,
                               .masks = true}; // a slice all -inf (masked) has the maximum -inf
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    return reduced_shape("amax", in[0], p);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> AmaxOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Shape kept = kept_shape("amax", in[0], p), s = shape(in, p);
  Matrix<T> result = tape.buffer(s);
  slice_max(result.data(), in[0].value().data(), in[0].shape(), kept);
  return tape.template record<AmaxOp>(
      in, s, std::move(result),
      [kept](Backprop<T>& bp) {
        const BroadcastWalk<1> walk(bp.input_shape(0), {kept});
        const T *x = bp.input(0).data(), *top = bp.result().data(), *g = bp.grad().data();
        std::vector<long> tied(static_cast<std::size_t>(kept.numel()), 0);
        walk.run([&](Eigen::Index o, Eigen::Index i) {
          if (x[o] == top[i]) ++tied[static_cast<std::size_t>(i)];
        });
        bp.accumulate_with(0, [&](Matrix<T>& da) {
          walk.run([&](Eigen::Index o, Eigen::Index i) {
            const long t = tied[static_cast<std::size_t>(i)];
            da.data()[o] = t == 0 ? std::numeric_limits<T>::quiet_NaN() : x[o] == top[i] ? T(g[i] / T(t)) : T(0);
          });
        });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, AmaxOp, T)
#include "../autodiff/instances.hpp"

/// amax(a, {dims}, keepdim): torch.amax(a, dims, keepdim).
template <Real T> Var<T> amax(const Var<T>& a, std::vector<long> dims, bool keepdim = false, std::string label = {}) {
  return AmaxOp::apply<T>(operands(a), Params<T>().set("dim", std::move(dims)).set("keepdim", keepdim),
                          std::move(label));
}

} // namespace tapegrad
