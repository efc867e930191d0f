#pragma once
// Normalisation over the last k dims, shared by layer_norm (centred: the group mean subtracted) and rms_norm (not
// centred). The operand is viewed as R groups ("rows") of K entries, K the product of "normalized_shape" (default:
// the last dim), so a matrix's rows are its groups. Per group (K entries x), with c = mean(x) when centred and 0
// otherwise, and an optional weight w and bias b of shape normalized_shape (entry k of a group meets w[k], b[k]):
//   s = sqrt(mean((x - c)^2) + eps),   y = (x - c) / s,   result = y w + b
//   VJP  with h = g w:  dx = (h - mean(h) - y mean(h y)) / s   centred;   dx = (h - y mean(h y)) / s   not centred
//        dw[k] += sum over groups of g y,   db[k] += sum over groups of g
// where mean(h y) is the group mean of h times y (the derivative of s, and of c, folded in). dx is computed in a
// form without the cancellation of 1 - y^2 (detail::normalise_jacobian), and so is a dual number's tangent. For
// float and double all of it runs in long double (detail::Wide; their dual numbers in Dual<long double>), each
// value rounded to T once.
#include "../autodiff/dual.hpp"
#include "../autodiff/operands.hpp"

#include <optional>
#include <span>
#include <type_traits>
#include <vector>

namespace tapegrad {

/// The parameters of layer_norm and rms_norm: "normalized_shape" (the last sizes normalised over; absent: the last
/// dim) and "eps", whose default is an exact decimal, rounded once into T.
inline constexpr ParamSpec eps_param[] = {
    {"eps", ParamType::number, "1e-5", "added to the variance (mean square) before the square root"}};
inline constexpr ParamSpec normalise_params[] = {
    {"normalized_shape",
     ParamType::integer_list,
     {},
     "the last sizes of a normalised over, a non-empty list (absent: the last dim); the weight and bias have it",
     true,
     true},
    eps_param[0]};

/// Options of layer_norm and rms_norm in C++: the last sizes normalised over (empty: the weight's shape when there
/// is one, else the last dim) and eps (absent: the exact decimal 1e-5).
template <Real T> struct NormOptions {
  std::vector<long> normalized_shape = {};
  std::optional<T> eps = std::nullopt;
};

/// The parameters of a C++ call without eps: the default, made in T from its decimal.
template <Real T> Params<T> default_eps() {
  Params<T> p;
  return set_default(p, eps_param[0]);
}

/// The parameters of a C++ call with options; `weight` is the weight's shape when there is one.
template <Real T> Params<T> norm_params(const NormOptions<T>& o, const Shape* weight = nullptr) {
  Params<T> p;
  if (!o.normalized_shape.empty())
    p.set("normalized_shape", o.normalized_shape);
  else if (weight != nullptr)
    p.set("normalized_shape", std::vector<long>(weight->begin(), weight->end()));
  if (o.eps) return p.number("eps", *o.eps);
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

/// x / y, as x times 1/y where W is long double (the caller computes the reciprocal once for many x; for float and
/// double its 11 extra bits absorb the second rounding, for long double itself it costs one ulp, and its range
/// keeps 1/y finite); in any other W the division itself, where 1/y may overflow (float16's 1/s^3 for s < 0.025).
template <class W> constexpr bool divides_by_reciprocal =
    std::is_same_v<W, long double> || std::is_same_v<W, Dual<long double>>;
template <class W> W reciprocal_or_divisor(const W& y) {
  if constexpr (divides_by_reciprocal<W>)
    return W(W(1) / y);
  else
    return y;
}
template <class W> W divide(const W& x, const W& r) {
  if constexpr (divides_by_reciprocal<W>)
    return W(x * r);
  else
    return W(x / r);
}
template <Real T> Wide<T> widen(const T& x) { return Widening<T>::widen(x); }
template <Real T> T narrow(const Wide<T>& w) { return Widening<T>::narrow(w); }

/// Each group's c and s (see above) for x (a group per row), as columns, in Wide<T>. Where the variance (mean
/// square) + eps is not > 0 (a constant group with eps = 0, a negative eps) s is what the formula gives, 0 or NaN,
/// and the group's result is then NaN or +-inf: the format defines no error there, and eps > 0 (the default) keeps
/// every group finite.
template <Real T> struct RowStatistics { Matrix<Wide<T>> centre, scale; };
template <Real T, class X> RowStatistics<T> row_statistics(const X& x, const T& eps, bool centred) {
  using W = Wide<T>;
  const W n = W(static_cast<long>(x.cols()));
  RowStatistics<T> r{Matrix<W>(x.rows(), 1), Matrix<W>(x.rows(), 1)};
  using std::sqrt;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    W sum(0);
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      sum += widen<T>(x(i, j));
    const W c = centred ? W(sum / n) : W(0);
    W squares(0);
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      squares += (widen<T>(x(i, j)) - c) * (widen<T>(x(i, j)) - c);
    r.centre(i, 0) = c;
    r.scale(i, 0) = W(sqrt(W(squares / n + widen(eps))));
  }
  return r;
}

/// The group's Jacobian dy/dx applied to h (it is symmetric, so this is the VJP and a dual number's tangent alike):
///   d_j = (u_j (mean(z^2) + eps) - z_j mean(u z)) / s^3,   u = h - mean(h) when centred, h otherwise,
/// with z = x - c and s^2 = mean(z^2) + eps. The term k = j of mean(z^2) and of mean(u z) cancels exactly, so both
/// sums leave it out (over k != j, from prefix and suffix sums): rms_norm over one entry, y = x / sqrt(x^2 + eps),
/// gives d = h eps / s^3 to W's rounding, where (h - y mean(h y)) / s loses x^2 / eps of it to 1 - y^2.
/// `after` is workspace (any contents; resized to 2 (K + 1)), kept by a caller that runs many groups.
template <class W> void normalise_jacobian(std::span<const W> h, std::span<const W> z, const W& s, const W& eps,
                                           bool centred, std::span<W> d, std::vector<W>& after) {
  const std::size_t K = h.size();
  const W n = W(static_cast<long>(K));
  W mean_h(0);
  if (centred) {
    for (const W& v : h)
      mean_h += v;
    mean_h = W(mean_h / n);
  }
  const auto u = [&](std::size_t k) { return centred ? W(h[k] - mean_h) : h[k]; };
  after.resize(2 * (K + 1));
  const std::span<W> squares_after(after.data(), K + 1), products_after(after.data() + K + 1, K + 1); // k > j, at j + 1
  squares_after[K] = W(0);
  products_after[K] = W(0);
  for (std::size_t k = K; k-- > 0;) {
    squares_after[k] = W(squares_after[k + 1] + z[k] * z[k]);
    products_after[k] = W(products_after[k + 1] + u(k) * z[k]);
  }
  const W cube = reciprocal_or_divisor(W(s * s * s)), by_n = reciprocal_or_divisor(n);
  W squares_before(0), products_before(0);
  for (std::size_t j = 0; j < K; ++j) {
    const W squares = W(squares_before + squares_after[j + 1]), products = W(products_before + products_after[j + 1]);
    d[j] = divide(W(u(j) * W(divide(squares, by_n) + eps) - z[j] * divide(products, by_n)), cube);
    squares_before += z[j] * z[j];
    products_before += u(j) * z[j];
  }
}

/// A group's y = z / s; a dual number's tangent is the Jacobian applied to x's tangents (normalise_jacobian), not
/// the chain rule through s, which cancels as the VJP's first form does.
template <class W>
void normalised_group(std::span<const W> x, const W& c, const W& s, const W& eps, bool centred, std::span<W> y) {
  const W by = reciprocal_or_divisor(s);
  for (std::size_t j = 0; j < x.size(); ++j)
    y[j] = divide(W(x[j] - c), by);
  if constexpr (is_dual<W>) {
    using U = std::remove_cvref_t<decltype(W{}.val)>;
    std::vector<U> tangent(x.size()), z(x.size()), dy(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) {
      tangent[j] = x[j].eps;
      z[j] = U(x[j].val - c.val);
    }
    std::vector<U> work;
    normalise_jacobian<U>(tangent, z, s.val, eps.val, centred, dy, work);
    for (std::size_t j = 0; j < x.size(); ++j)
      y[j].eps = dy[j];
  }
}

/// The entries of one group: the product of "normalized_shape" (the last dim's size without it).
template <class A, Real T> Eigen::Index group_size(const A& a, const Params<T>& p) {
  if (!p.has("normalized_shape")) return a.shape().rank() == 0 ? 1 : a.shape()[a.shape().rank() - 1];
  Eigen::Index k = 1;
  for (long n : p.integer_list("normalized_shape"))
    k *= n;
  return k;
}

/// The shape of layer_norm or rms_norm (`op`): a's, once a has normalized_shape as its last sizes and the weight
/// and bias (operands 1 and 2) have exactly that shape; else a ShapeError naming the op, the operands and shapes.
template <class A, Real T> Shape normalise_shape(std::string_view op, std::span<const A> in, const Params<T>& p) {
  const A& a = in[0];
  const Shape& s = a.shape();
  const std::string what = std::string(op) + "(" + a.name() + ")";
  if (s.rank() == 0) throw ShapeError(what + ": " + a.name() + " is rank 0; it normalises over its last dims");
  Shape normalized;
  if (p.has("normalized_shape")) {
    const std::vector<long>& n = p.integer_list("normalized_shape");
    if (n.empty()) throw ShapeError(what + ": normalized_shape is an empty list");
    if (n.size() > s.rank())
      throw ShapeError(what + ": normalized_shape has " + std::to_string(n.size()) + " sizes but " + a.name() + " is " +
                       shape_string(s) + " (rank " + std::to_string(s.rank()) + ")");
    for (std::size_t k = 0; k < n.size(); ++k) {
      if (n[k] != s[s.rank() - n.size() + k])
        throw ShapeError(what + ": normalized_shape " + list_string(n) + " is not the last sizes of " + a.name() +
                         ", " + shape_string(s));
      normalized.push_back(n[k]);
    }
  } else
    normalized.push_back(s[s.rank() - 1]);
  for (std::size_t k = 1; k < in.size(); ++k)
    if (in[k].shape() != normalized)
      throw ShapeError(what + ": its " + (k == 1 ? "weight " : "bias ") + in[k].name() + " is " +
                       shape_string(in[k].shape()) + "; it must be " + shape_string(normalized) +
                       ", the normalized shape");
  return s;
}

/// Records layer_norm (centred) or rms_norm (not) on in[0], with in[1] the weight and in[2] the bias when given,
/// with the node's "eps" and "normalized_shape". The VJP recomputes y in Wide<T> from the operand and the saved
/// statistics, rather than reading the result rounded to T.
template <class Op, Real T>
Var<T> record_normalise(std::span<const Var<T>> in, const Params<T>& p, std::string label, bool centred) {
  using W = Wide<T>;
  using ConstView = Eigen::Map<const Matrix<T>>;
  Tape<T>& tape = common_tape(Op::info, in);
  const Shape s = Op::shape(in, p);
  const Eigen::Index K = group_size(in[0], p), R = s.numel() / K;
  const ConstView x(in[0].value().data(), R, K);
  const W eps = widen(p.number("eps"));
  RowStatistics<T> stats = row_statistics(x, p.number("eps"), centred);
  const std::size_t operands = in.size(), k = static_cast<std::size_t>(K);
  // The weight and bias of entry j of a group, in Wide<T> (1 and 0 when absent).
  const auto weight = [&](Eigen::Index j) { return operands > 1 ? widen(in[1].value().data()[j]) : W(1); };
  const auto bias = [&](Eigen::Index j) { return operands > 2 ? widen(in[2].value().data()[j]) : W(0); };
  Matrix<T> result = tape.buffer(s);
  Eigen::Map<Matrix<T>> out(result.data(), R, K);
  std::vector<W> xi(k), yi(k);
  for (Eigen::Index i = 0; i < R; ++i) {
    for (Eigen::Index j = 0; j < K; ++j)
      xi[static_cast<std::size_t>(j)] = widen(x(i, j));
    normalised_group<W>(xi, stats.centre(i, 0), stats.scale(i, 0), eps, centred, yi);
    for (Eigen::Index j = 0; j < K; ++j)
      out(i, j) = narrow<T>(W(yi[static_cast<std::size_t>(j)] * weight(j) + bias(j)));
  }
  return tape.template record<Op>(
      in, s, std::move(result),
      [stats = std::move(stats), eps, centred, R, K, k, operands](Backprop<T>& bp) {
        const ConstView g(bp.grad().data(), R, K), x(bp.input(0).data(), R, K);
        std::vector<W> h(k), z(k), d(k), work;
        bp.accumulate_with(0, [&](Matrix<T>& da) {
          Eigen::Map<Matrix<T>> out(da.data(), R, K);
          for (Eigen::Index i = 0; i < R; ++i) {
            for (Eigen::Index j = 0; j < K; ++j) {
              const auto u = static_cast<std::size_t>(j);
              z[u] = W(widen(x(i, j)) - stats.centre(i, 0));
              h[u] = operands > 1 ? W(widen(g(i, j)) * widen(bp.input(1).data()[j])) : widen(g(i, j));
            }
            normalise_jacobian<W>(h, z, stats.scale(i, 0), eps, centred, d, work);
            for (Eigen::Index j = 0; j < K; ++j)
              out(i, j) = narrow<T>(d[static_cast<std::size_t>(j)]);
          }
        });
        for (std::size_t q = 1; q < operands; ++q) // the weight (sum of g y) and the bias (sum of g), row by row
          bp.accumulate_with(q, [&](Matrix<T>& dw) {
            std::vector<W>& total = d; // d's entries are not needed any more
            std::fill(total.begin(), total.end(), W(0));
            for (Eigen::Index i = 0; i < R; ++i) {
              const W c = stats.centre(i, 0), by = reciprocal_or_divisor(stats.scale(i, 0));
              for (Eigen::Index j = 0; j < K; ++j)
                total[static_cast<std::size_t>(j)] +=
                    q == 1 ? W(widen(g(i, j)) * divide(W(widen(x(i, j)) - c), by)) : widen(g(i, j));
            }
            for (Eigen::Index j = 0; j < K; ++j)
              dw.data()[j] = narrow<T>(total[static_cast<std::size_t>(j)]);
          });
      },
      std::move(label), p);
}

} // namespace detail

} // namespace tapegrad
