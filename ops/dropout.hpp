#pragma once
#include "../autodiff/operands.hpp"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>

namespace tapegrad {

using BoolMatrix = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Which entries dropout keeps, the drop probability p and the seed the pattern was drawn from. The pattern
/// is a function of (shape, p, seed) alone, so the forward, the VJP, a replay, a graph file and any
/// independent reference (graph/verification/attention_by_hand.hpp) all see the same function in every precision.
struct DropoutMask {
  BoolMatrix keep;
  double p = 0;
  std::uint64_t seed = 0;
};

/// A Bernoulli pattern: each entry dropped with probability p, drawn row by row from mt19937_64(seed) (the
/// top 53 bits of each draw as a uniform number in [0, 1), so the pattern is the same on every platform).
inline DropoutMask dropout_mask(Eigen::Index rows, Eigen::Index cols, double p, std::uint64_t seed) {
  if (!(p >= 0 && p < 1))
    throw UsageError("dropout_mask: p = " + std::to_string(p) + "; the drop probability must be in [0, 1)");
  DropoutMask m{BoolMatrix(rows, cols), p, seed};
  std::mt19937_64 rng(seed);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j)
      m.keep(i, j) = static_cast<double>(rng() >> 11) * 0x1p-53 >= p;
  return m;
}

/// dropout(a, p, seed): inverted dropout with a fixed pattern, on any rank.       result: a's shape
///   forward  result[i][j] = a[i][j] / (1 - p)   where keep[i][j], 0 elsewhere
///   VJP      da[i][j] += grad[i][j] / (1 - p)   where kept, nothing elsewhere
/// keep = dropout_mask(rows, cols, p, seed).keep on a's storage view (every entry in row-major order, so a matrix's
/// pattern is v2's), drawn with p as the double nearest to its decimal; 1 / (1 - p) is computed in T from p in T.
struct DropoutOp {
  static constexpr ParamSpec params[] = {{"p", ParamType::number, {}, "the drop probability, 0 <= p < 1"},
                                         {"seed", ParamType::integer, {}, "the pattern's seed (mt19937_64), >= 0"}};
  static constexpr OpInfo info{.name = "dropout",
                               .call = "dropout(a, p, seed)",
                               .node = "Dropout",
                               .file = "dropout.hpp",
                               .params = params,
                               .formula = "result[i][j] = a[i][j] / (1 - p) where keep[i][j], else 0",
                               .shapes = elementwise_shapes};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const T& q = p.number("p");
    if (!(q >= T(0) && q < T(1)))
      throw UsageError("dropout(" + in[0].name() + "): p = " + p.number_text("p") + "; it must be in [0, 1)");
    if (p.integer("seed") < 0)
      throw UsageError("dropout(" + in[0].name() + "): seed " + std::to_string(p.integer("seed")) +
                       "; it must be >= 0");
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> DropoutOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Var<T>& a = in[0];
  shape(in, p);
  const DropoutMask mask = dropout_mask(a.rows(), a.cols(), std::strtod(p.number_text("p").c_str(), nullptr),
                                        static_cast<std::uint64_t>(p.integer("seed")));
  // y = x / (1 - p) where kept, 0 where dropped: the forward map and, being linear, its own VJP.
  const auto apply_mask = [keep = mask.keep, factor = T(T(1) / (T(1) - p.number("p")))](Matrix<T>& y,
                                                                                        const Matrix<T>& x) {
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < x.cols(); ++j)
        y(i, j) = keep(i, j) ? T(x(i, j) * factor) : T(0);
  };
  Matrix<T> result = tape.buffer(a.rows(), a.cols());
  apply_mask(result, a.value());
  return tape.template record<DropoutOp>(
      in, a.shape(), std::move(result),
      [apply_mask](Backprop<T>& bp) { bp.accumulate_with(0, [&](Matrix<T>& da) { apply_mask(da, bp.grad()); }); },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, DropoutOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> dropout(const Var<T>& a, double p, std::uint64_t seed, std::string label = {}) {
  if (seed > static_cast<std::uint64_t>(std::numeric_limits<long>::max()))
    throw UsageError("dropout(" + a.name() + "): seed " + std::to_string(seed) +
                     " is above 2^63 - 1, the largest a "
                     "node (and a graph file) can hold");
  return DropoutOp::apply<T>(operands(a),
                             Params<T>().set("p", Number<T>{T(p), to_decimal(p)}).set("seed", static_cast<long>(seed)),
                             std::move(label));
}

/// dropout with the pattern `mask` (as dropout_mask made it): the same as dropout(a, mask.p, mask.seed).
template <Real T> Var<T> dropout(const Var<T>& a, const DropoutMask& mask, std::string label = {}) {
  if (mask.keep.rows() != a.rows() || mask.keep.cols() != a.cols())
    throw ShapeError("dropout(" + a.name() + "): " + a.name() + " is " + shape_string(a.rows(), a.cols()) +
                     " but the mask is " + shape_string(mask.keep.rows(), mask.keep.cols()) + "; shapes must match");
  if (dropout_mask(a.rows(), a.cols(), mask.p, mask.seed).keep != mask.keep)
    throw UsageError("dropout(" + a.name() + "): the mask is not the pattern dropout_mask(" +
                     shape_string(a.rows(), a.cols()) + ", p, seed " + std::to_string(mask.seed) +
                     ") draws; a node is replayed from p and seed, so its pattern must be theirs");
  return dropout(a, mask.p, mask.seed, std::move(label));
}

} // namespace tapegrad
