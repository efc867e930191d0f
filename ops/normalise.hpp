#pragma once
// Row normalisation, shared by layer_norm (centred: the row mean subtracted) and rms_norm (not centred). Per
// row of a (n entries), with c = mean(x) when centred and 0 otherwise:
//   s = sqrt(mean((x - c)^2) + eps),   y = (x - c) / s
//   VJP  dx = (g - mean(g) - y mean(g y)) / s   centred;   dx = (g - y mean(g y)) / s   not centred
// where mean(g y) is the row mean of grad times result (the derivative of s, and of c, folded in).
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// The "eps" parameter of layer_norm and rms_norm; its default is an exact decimal, rounded once into T.
inline constexpr ParamSpec eps_param[] = {
    {"eps", ParamType::number, "1e-5", "added to the variance (mean square) before the square root"}};

/// The parameters of a C++ call without eps: the default, made in T from its decimal.
template <Real T> Params<T> default_eps() {
  const std::string text(eps_param[0].default_value);
  return Params<T>().set("eps", Number<T>{from_decimal<T>(text), text});
}

namespace detail {

/// Each row's s (see above) for a. Where the variance (mean square) + eps is not > 0 (a constant row with
/// eps = 0, a negative eps) s is what the formula gives, 0 or NaN, and the row's result is then NaN or +-inf:
/// graph-format-v2 defines no error there, and eps > 0 (the default) keeps every row finite.
template <Real T> Matrix<T> row_scales(const Var<T>& a, const T& eps, bool centred) {
  const Matrix<T>& x = a.value();
  const T n = T(static_cast<long>(x.cols()));
  Matrix<T> s(x.rows(), 1);
  using std::sqrt;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const T c = centred ? x.row(i).sum() / n : T(0);
    T squares(0);
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      squares += (x(i, j) - c) * (x(i, j) - c);
    s(i, 0) = sqrt(squares / n + eps);
  }
  return s;
}

/// Records layer_norm (centred) or rms_norm (not) on in[0] with the node's "eps".
template <class Op, Real T>
Var<T> record_normalise(std::span<const Var<T>> in, const Params<T>& p, std::string label, bool centred) {
  Tape<T>& tape = common_tape(Op::info, in);
  const Matrix<T>& x = in[0].value();
  const Matrix<T> s = row_scales(in[0], p.number("eps"), centred);
  const T n = T(static_cast<long>(x.cols()));
  Matrix<T> result = tape.buffer(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const T c = centred ? x.row(i).sum() / n : T(0);
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      result(i, j) = (x(i, j) - c) / s(i, 0);
  }
  return tape.template record<Op>(
      in, std::move(result),
      [s, n, centred](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& out) {
          const Matrix<T>& g = bp.grad();
          const Matrix<T>& y = bp.result();
          for (Eigen::Index i = 0; i < y.rows(); ++i) {
            const T mean_g = centred ? g.row(i).sum() / n : T(0);
            T gy(0);
            for (Eigen::Index j = 0; j < y.cols(); ++j)
              gy += g(i, j) * y(i, j);
            const T mean_gy = gy / n;
            for (Eigen::Index j = 0; j < y.cols(); ++j)
              out(i, j) = (g(i, j) - mean_g - y(i, j) * mean_gy) / s(i, 0);
          }
        });
      },
      std::move(label), p);
}

} // namespace detail

} // namespace tapegrad
