#pragma once
// Broadcasting, shared by the elementwise binary ops (add, sub, mul, div) and expand: NumPy's rule
// (autodiff/shape.hpp, broadcast_shapes): shapes aligned at their trailing end, a missing leading dim counts as
// 1, per dim equal sizes or one of them 1; an operand of size 1 along a dim is repeated along it. For two
// matrices: (m x n, 1 x n), (m x n, m x 1), (m x n, 1 x 1), (m x 1, 1 x n) -> m x n.
// The gradient of a repeated operand is the upstream gradient SUMMED over the dims it was repeated along
// (sum_to), so it has the operand's own shape (forgetting that sum is the classic broadcast bug).
//
// Every broadcast of a matrix, and most of a tensor (a bias over the last dim, a per-row statistic), repeats
// the operand's storage view as a whole row or column of the result's view (Expansion): those go to Eigen as
// expressions. Any other (a (B, 1, D) operand against (B, T, D)) is expanded entry by entry (BroadcastWalk).
#include "../autodiff/operands.hpp"

#include <type_traits>

namespace tapegrad {

/// The shapes column of a broadcasting op's descriptor.
inline constexpr std::string_view broadcast_shape_rule =
    "any ranks, aligned at the end, per dim equal or 1 -> the larger per dim";

/// The result shape of a broadcasting op, or a ShapeError naming the op, both operands and both shapes.
template <class A> Shape broadcast_shape(std::string_view op, const A& a, const A& b) {
  if (a.shape().numel() == 0 || b.shape().numel() == 0) shape_mismatch(op, a, b, "an empty operand does not broadcast");
  Shape out;
  if (!broadcast_shapes(a.shape(), b.shape(), out))
    shape_mismatch(op, a, b,
                   "aligned at their last dims, per dim the sizes must be equal or one of them 1 (broadcasting)");
  return out;
}

/// How an operand of shape x that broadcasts to shape `to` is repeated, seen on the storage views: not at all
/// (same entries), one entry everywhere, its view's one row repeated down, its one column repeated across, or
/// otherwise (general: entry by entry).
enum class Expansion { same, constant, row, column, general };
inline Expansion expansion(const Shape& x, const Shape& to) {
  if (x.numel() == to.numel()) return Expansion::same; // nothing repeated: the same entries in the same order
  if (x.numel() == 1) return Expansion::constant;
  if (x.rows() == 1 && x.cols() == to.cols()) return Expansion::row;    // every leading dim 1, the last kept
  if (x.cols() == 1 && x.rows() == to.rows()) return Expansion::column; // the leading dims kept, the last 1
  return Expansion::general;
}

/// x (of shape xs) repeated to shape `to` (which xs broadcasts to), every entry written out.
template <Real T> Matrix<T> expand_to(const Matrix<T>& x, const Shape& xs, const Shape& to) {
  Matrix<T> out(to.rows(), to.cols());
  BroadcastWalk<1>(to, {xs}).run([&](Eigen::Index o, Eigen::Index i) { out.data()[o] = x.data()[i]; });
  return out;
}

/// g (of shape gs) summed over the dims along which shape xs was repeated to make gs: the gradient of an operand
/// of shape xs from the upstream gradient of its broadcast (NumPy's and PyTorch's sum_to). One place for it.
template <Real T> Matrix<T> sum_to(const Matrix<T>& g, const Shape& gs, const Shape& xs) {
  Matrix<T> out = Matrix<T>::Zero(xs.rows(), xs.cols());
  BroadcastWalk<1>(gs, {xs}).run([&](Eigen::Index o, Eigen::Index i) { out.data()[i] += g.data()[o]; });
  return out;
}

/// Calls f(e) with e = x repeated along its axes of size 1 up to rows x cols, as the cheapest Eigen operand
/// for that shape: x itself when it has the shape already (so what f builds is a plain expression Eigen
/// vectorises), a constant for a 1 x 1 x in float, double or long double, a row repeated down (a bias) or a
/// column repeated across as a replicate of x's row or column block, and otherwise x.replicate(...). Eigen's
/// replicate reads entry (i, j) of its argument at (i mod rows, j mod cols): for a row block the row count
/// is 1 at compile time and the column factor is 1, so both modulos fold away (likewise for a column);
/// x.replicate(a, b) on the matrix itself pays two integer divisions per entry. A replicate is read entry by
/// entry (Eigen never vectorises it) and hands MPFR numbers out by reference, where a constant would copy one
/// per entry.
template <Real T, class F> void with_expanded(const Matrix<T>& x, Eigen::Index rows, Eigen::Index cols, F&& f) {
  if (x.rows() == rows && x.cols() == cols) return f(x);
  if constexpr (std::is_floating_point_v<T>)
    if (x.size() == 1) return f(Matrix<T>::Constant(rows, cols, x(0, 0)));
  if (x.rows() == 1 && x.cols() == cols)
    return f(Eigen::Replicate<typename Matrix<T>::ConstRowXpr, Eigen::Dynamic, 1>(x.row(0), rows, 1));
  if (x.cols() == 1 && x.rows() == rows)
    return f(Eigen::Replicate<typename Matrix<T>::ConstColXpr, 1, Eigen::Dynamic>(x.col(0), 1, cols));
  f(x.replicate(rows / x.rows(), cols / x.cols()));
}

/// The same for tensors: x of shape xs repeated to shape `to` (which xs broadcasts to) as the cheapest operand,
/// an Eigen expression on the storage views where the repetition is a whole row, column or entry of them, and
/// otherwise x expanded entry by entry.
template <Real T, class F> void with_expanded(const Matrix<T>& x, const Shape& xs, const Shape& to, F&& f) {
  if (expansion(xs, to) == Expansion::general) return f(expand_to(x, xs, to));
  with_expanded(x, to.rows(), to.cols(), std::forward<F>(f));
}

/// g x, but exactly 0 where g is 0 and x infinite: an upstream gradient of 0 (a masked entry, a dropped one)
/// times an infinite operand entry (-inf after a mask) contributes nothing, not 0 * inf = NaN. Every other
/// product, NaN ones included, is g x.
struct ZeroSafeProduct {
  template <class T> T operator()(const T& g, const T& x) const {
    return g == T(0) && (x == infinity<T>() || x == -infinity<T>()) ? T(0) : T(g * x);
  }
  /// The same on Eigen's packets (float and double), so that Eigen vectorises it like a plain product.
  template <class Packet> Packet packetOp(const Packet& g, const Packet& x) const {
    namespace ei = Eigen::internal;
    using T = typename ei::unpacket_traits<Packet>::type;
    const Packet zero = ei::pzero(g);
    const Packet dropped = ei::pand(ei::pcmp_eq(g, zero), ei::pcmp_eq(ei::pabs(x), ei::pset1<Packet>(infinity<T>())));
    return ei::pselect(dropped, zero, ei::pmul(g, x));
  }
};

} // namespace tapegrad

/// Eigen vectorises ZeroSafeProduct (its packetOp) wherever the scalar type has packets.
template <> struct Eigen::internal::functor_traits<tapegrad::ZeroSafeProduct> {
  enum { Cost = 3, PacketAccess = true };
};

namespace tapegrad {

/// Adds the upstream contribution `g` (shaped like the result) into operand k's adjoint, summed over the axes
/// along which operand k was repeated.
/// The sums run over g evaluated into a matrix, so the additions are the same whatever g is; when g is one
/// already (add's upstream gradient) it is not copied.
template <Real T, class G> void accumulate_broadcast(Backprop<T>& bp, std::size_t k, const G& g) {
  if (!bp.wants(k)) return; // a constant: nothing to compute
  const Matrix<T>& x = bp.input(k);
  const Matrix<T>& r = bp.result();
  if (expansion(bp.input_shape(k), bp.result_shape()) == Expansion::general) {
    bp.accumulate(k, sum_to(Matrix<T>(g), bp.result_shape(), bp.input_shape(k)));
    return;
  }
  const auto reduce = [&](const auto& m) {
    if (x.rows() == 1 && x.cols() == 1)
      bp.accumulate(k, Matrix<T>::Constant(1, 1, m.sum()));
    else if (x.rows() == 1)
      bp.accumulate(k, m.colwise().sum());
    else
      bp.accumulate(k, m.rowwise().sum());
  };
  if (x.rows() == r.rows() && x.cols() == r.cols()) {
    bp.accumulate(k, g);
  } else if constexpr (std::is_same_v<G, Matrix<T>>) {
    reduce(g);
  } else {
    reduce(Matrix<T>(g));
  }
}

/// Records broadcasting binary op `Op` on in[0] and in[1]: the result shape from Op::shape (a ShapeError when
/// they do not broadcast), each operand's domain (OpInfo::domains), then result = forward(a, b) with a and b
/// expanded to the result's shape (with_expanded), and `vjp` as the node's backward.
template <class Op, Real T, class Forward, class Vjp>
Var<T> record_broadcast(std::span<const Var<T>> in, const Params<T>& p, std::string label, Forward forward, Vjp vjp) {
  Tape<T>& tape = common_tape(Op::info, in);
  const Shape s = Op::shape(in, p);
  for (std::size_t k = 0; k < in.size(); ++k)
    require_domain(Op::info, in, k, label);
  Matrix<T> result = tape.buffer(s);
  with_expanded(in[0].value(), in[0].shape(), s, [&](const auto& a) {
    with_expanded(in[1].value(), in[1].shape(), s, [&](const auto& b) { result.noalias() = forward(a, b); });
  });
  return tape.template record<Op>(in, s, std::move(result), std::move(vjp), std::move(label));
}

} // namespace tapegrad
