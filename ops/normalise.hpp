#pragma once
// Row normalisation, shared by layer_norm (centred: the row mean subtracted) and rms_norm (not centred). Per
// row of a (n entries), with c = mean(x) when centred and 0 otherwise:
//   s = sqrt(mean((x - c)^2) + eps),   y = (x - c) / s
//   VJP  dx = (g - mean(g) - y mean(g y)) / s   centred;   dx = (g - y mean(g y)) / s   not centred
// where mean(g y) is the row mean of grad times result (the derivative of s, and of c, folded in). For float and
// double all of it runs in long double (detail::Wide; their dual numbers in Dual<long double>), each value rounded
// to T once.
#include "../autodiff/dual.hpp"
#include "../autodiff/operands.hpp"

#include <type_traits>
#include <vector>

namespace tapegrad {

/// The "eps" parameter of layer_norm and rms_norm; its default is an exact decimal, rounded once into T.
inline constexpr ParamSpec eps_param[] = {
    {"eps", ParamType::number, "1e-5", "added to the variance (mean square) before the square root"}};

/// The parameters of a C++ call without eps: the default, made in T from its decimal.
template <Real T> Params<T> default_eps() {
  Params<T> p;
  return set_default(p, eps_param[0]);
}

namespace detail {

/// The type the statistics, the result and the VJP are computed in: long double for float and double (and
/// Dual<long double> for their dual numbers, so that the dual check's tangent is as accurate as the VJP it is
/// compared with), T itself otherwise. A nearly constant row (x near its mean c) loses, in T, the digits of c's
/// rounding from x - c: the property tests found a double layer_norm VJP off by 1.3e-12 relative for a row of
/// n = 2 whose entries differ by 1.6% (x - c carried 120 eps of error, which the VJP's cancellation multiplied).
/// With 11 more bits the result and the VJP keep the rounding of their own values.
template <class T> struct Widening {
  using type = T;
  static const T& widen(const T& x) { return x; }
  static T narrow(const T& w) { return w; }
};
template <class F>
requires std::is_same_v<F, double> || std::is_same_v<F, float>
struct Widening<F> {
  using type = long double;
  static long double widen(F x) { return x; }
  static F narrow(long double w) { return static_cast<F>(w); }
};
template <Real U> struct Widening<Dual<U>> {
  using type = Dual<typename Widening<U>::type>;
  static type widen(const Dual<U>& x) { return {Widening<U>::widen(x.val), Widening<U>::widen(x.eps)}; }
  static Dual<U> narrow(const type& w) { return {Widening<U>::narrow(w.val), Widening<U>::narrow(w.eps)}; }
};
template <Real T> using Wide = typename Widening<T>::type;
template <Real T> Wide<T> widen(const T& x) { return Widening<T>::widen(x); }
template <Real T> T narrow(const Wide<T>& w) { return Widening<T>::narrow(w); }

/// Each row's c and s (see above) for x, as columns, in Wide<T>. Where the variance (mean square) + eps is not
/// > 0 (a constant row with eps = 0, a negative eps) s is what the formula gives, 0 or NaN, and the row's result
/// is then NaN or +-inf: graph-format-v2 defines no error there, and eps > 0 (the default) keeps every row finite.
template <Real T> struct RowStatistics { Matrix<Wide<T>> centre, scale; };
template <Real T> RowStatistics<T> row_statistics(const Matrix<T>& x, const T& eps, bool centred) {
  using W = Wide<T>;
  const W n = W(static_cast<long>(x.cols()));
  RowStatistics<T> r{Matrix<W>(x.rows(), 1), Matrix<W>(x.rows(), 1)};
  using std::sqrt;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    W sum(0);
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      sum += widen(x(i, j));
    const W c = centred ? W(sum / n) : W(0);
    W squares(0);
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      squares += (widen(x(i, j)) - c) * (widen(x(i, j)) - c);
    r.centre(i, 0) = c;
    r.scale(i, 0) = W(sqrt(W(squares / n + widen(eps))));
  }
  return r;
}

/// Records layer_norm (centred) or rms_norm (not) on in[0] with the node's "eps". The VJP recomputes y in
/// Wide<T> from the operand and the saved statistics, rather than reading the result rounded to T.
template <class Op, Real T>
Var<T> record_normalise(std::span<const Var<T>> in, const Params<T>& p, std::string label, bool centred) {
  using W = Wide<T>;
  Tape<T>& tape = common_tape(Op::info, in);
  const Matrix<T>& x = in[0].value();
  RowStatistics<T> stats = row_statistics(x, p.number("eps"), centred);
  Matrix<T> result = tape.buffer(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      result(i, j) = narrow<T>(W((widen(x(i, j)) - stats.centre(i, 0)) / stats.scale(i, 0)));
  return tape.template record<Op>(
      in, std::move(result),
      [stats = std::move(stats), centred](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& out) {
          const Matrix<T>& g = bp.grad();
          const Matrix<T>& x = bp.input(0);
          const W n = W(static_cast<long>(x.cols()));
          std::vector<W> y(static_cast<std::size_t>(x.cols()));
          for (Eigen::Index i = 0; i < x.rows(); ++i) {
            const W &c = stats.centre(i, 0), &s = stats.scale(i, 0);
            W sum_g(0), sum_gy(0);
            for (Eigen::Index j = 0; j < x.cols(); ++j) {
              W& yj = y[static_cast<std::size_t>(j)];
              yj = W((widen(x(i, j)) - c) / s);
              sum_g += widen(g(i, j));
              sum_gy += widen(g(i, j)) * yj;
            }
            const W mean_g = centred ? W(sum_g / n) : W(0), mean_gy = W(sum_gy / n);
            for (Eigen::Index j = 0; j < x.cols(); ++j)
              out(i, j) = narrow<T>(W((widen(g(i, j)) - mean_g - y[static_cast<std::size_t>(j)] * mean_gy) / s));
          }
        });
      },
      std::move(label), p);
}

} // namespace detail

} // namespace tapegrad
