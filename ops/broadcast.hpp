#pragma once
// Broadcasting, shared by the elementwise binary ops (add, sub, mul, div). Two operands a (ra x ca) and
// b (rb x cb) fit when, per axis, their sizes are equal or one of them is 1; the result is
// max(ra, rb) x max(ca, cb), and an operand of size 1 on an axis is repeated along it:
//   (m x n, 1 x n), (m x n, m x 1), (m x n, 1 x 1), (m x 1, 1 x n) -> m x n
// The gradient of a repeated operand is the upstream gradient SUMMED over the axes it was repeated along, so
// it has the operand's own shape (forgetting that sum is the classic broadcast bug).
#include "../autodiff/operands.hpp"

#include <type_traits>

namespace tapegrad {

/// The shapes column of a broadcasting op's descriptor.
inline constexpr std::string_view broadcast_shapes =
    "a: ra x ca, b: rb x cb, per axis equal or 1 -> max(ra, rb) x max(ca, cb)";

/// The result shape of a broadcasting op, or a ShapeError naming the op, both operands and both shapes.
template <class A> Shape broadcast_shape(std::string_view op, const A& a, const A& b) {
  if (a.rows() == 0 || a.cols() == 0 || b.rows() == 0 || b.cols() == 0)
    shape_mismatch(op, a, b, "an empty operand does not broadcast");
  const auto fits = [](Eigen::Index x, Eigen::Index y) { return x == y || x == 1 || y == 1; };
  if (!fits(a.rows(), b.rows()) || !fits(a.cols(), b.cols()))
    shape_mismatch(op, a, b, "per axis the sizes must be equal or one of them 1 (broadcasting)");
  return {std::max(a.rows(), b.rows()), std::max(a.cols(), b.cols())};
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
  const Matrix<T>& x = bp.input(k);
  const Matrix<T>& r = bp.result();
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
  Matrix<T> result = tape.buffer(s.rows, s.cols);
  with_expanded(in[0].value(), s.rows, s.cols, [&](const auto& a) {
    with_expanded(in[1].value(), s.rows, s.cols, [&](const auto& b) { result.noalias() = forward(a, b); });
  });
  return tape.template record<Op>(in, std::move(result), std::move(vjp), std::move(label));
}

} // namespace tapegrad
