#pragma once
// Normalisation over the last k dims, shared by layer_norm (centred: the group mean subtracted) and rms_norm (not
// centred). The operand is viewed as R groups ("rows") of K entries, K the product of "normalized_shape" (default:
// the last dim), so a matrix's rows are its groups. Per group (K entries x), with c = mean(x) when centred and 0
// otherwise, and an optional weight w and bias b of shape normalized_shape (entry k of a group meets w[k], b[k]):
//   s = sqrt(mean((x - c)^2) + eps),   y = (x - c) / s,   result = y w + b
//   VJP  with h = g w:  dx = (h - mean(h) - y mean(h y)) / s   centred;   dx = (h - y mean(h y)) / s   not centred
//        dw[k] += sum over groups of g y,   db[k] += sum over groups of g
// where mean(h y) is the group mean of h times y (the derivative of s, and of c, folded in). dx is computed in a
// form without the cancellation of 1 - y^2 (detail::normalise_jacobian), and so is a dual number's tangent; the
// centre is kept as two numbers so that a nearly constant group keeps z = x - c to its own rounding
// (detail::row_statistics). For float all of it runs in double (detail::Wide).
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

/// The type the statistics, the result and the VJP are computed in: double for float (and Dual<double> for its
/// dual numbers, so that the dual check's tangent is as accurate as the VJP it is compared with), T itself
/// otherwise.
template <class T> struct Widening {
  using type = T;
  static const T& widen(const T& x) { return x; }
  static T narrow(const T& w) { return w; }
};
template <> struct Widening<float> {
  using type = double;
  static double widen(float x) { return x; }
  static float narrow(double w) { return static_cast<float>(w); }
};
template <Real U> struct Widening<Dual<U>> {
  using type = Dual<typename Widening<U>::type>;
  static type widen(const Dual<U>& x) { return {Widening<U>::widen(x.val), Widening<U>::widen(x.eps)}; }
  static Dual<U> narrow(const type& w) { return {Widening<U>::narrow(w.val), Widening<U>::narrow(w.eps)}; }
};
template <Real T> using Wide = typename Widening<T>::type;
template <Real T> Wide<T> widen(const T& x) { return Widening<T>::widen(x); }
template <Real T> T narrow(const Wide<T>& w) { return Widening<T>::narrow(w); }

/// Each group's centre and s (see above) for x (a group per row), as columns, in Wide<T>. The centre is two
/// numbers, c = first + second: `first` the rounded mean, `second` the mean of x - first, and a group's
/// z = x - c is computed as (x - first) - second (centred_entry). A nearly constant group (x near its mean) would
/// otherwise carry first's rounding, eps |c|, into every z, a large error relative to z itself that the VJP
/// multiplies (the property tests found a double layer_norm VJP off by 1.3e-12 relative, for a group of n = 2 whose
/// entries differ by 1.6%); x - first is exact there (x and first are within a factor 2 of each other), so z keeps
/// its own rounding only. Not centred, both are 0. Where the variance (mean square) + eps is not > 0 (a constant
/// group with eps = 0, a negative eps) s is what the formula gives, 0 or NaN, and the group's result is then NaN
/// or +-inf: the format defines no error there, and eps > 0 (the default) keeps every group finite.
template <Real T> struct RowStatistics { Matrix<Wide<T>> first, second, scale; };
template <class W> W centred_entry(const W& x, const W& first, const W& second) { return W(W(x - first) - second); }
template <Real T, class X> RowStatistics<T> row_statistics(const X& x, const T& eps, bool centred) {
  using W = Wide<T>;
  const W n = W(static_cast<long>(x.cols()));
  RowStatistics<T> r{Matrix<W>(x.rows(), 1), Matrix<W>(x.rows(), 1), Matrix<W>(x.rows(), 1)};
  using std::sqrt;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    W first(0), second(0);
    if (centred) {
      for (Eigen::Index j = 0; j < x.cols(); ++j)
        first += widen<T>(x(i, j));
      first = W(first / n);
      for (Eigen::Index j = 0; j < x.cols(); ++j)
        second += W(widen<T>(x(i, j)) - first);
      second = W(second / n);
    }
    W squares(0);
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      const W z = centred_entry(widen<T>(x(i, j)), first, second);
      squares += z * z;
    }
    r.first(i, 0) = first;
    r.second(i, 0) = second;
    r.scale(i, 0) = W(sqrt(W(squares / n + widen(eps))));
  }
  return r;
}

/// The group's Jacobian dy/dx applied to h (it is symmetric, so this is the VJP and a dual number's tangent alike):
///   d_j = (u_j (mean(z^2) + eps) - z_j mean(u z)) / s^3,   u = h - mean(h) when centred, h otherwise,
/// with z = x - c and s^2 = mean(z^2) + eps. The term k = j of mean(z^2) and of mean(u z) cancels exactly, so both
/// sums leave it out (over k != j, from prefix and suffix sums): rms_norm over one entry, y = x / sqrt(x^2 + eps),
/// gives d = h eps / s^3 to W's rounding, where (h - y mean(h y)) / s loses x^2 / eps of it to 1 - y^2.
/// `work` is workspace (any contents; resized to 3 K + 2), kept by a caller that runs many groups.
template <class W> void normalise_jacobian(std::span<const W> h, std::span<const W> z, const W& s, const W& eps,
                                           bool centred, std::span<W> d, std::vector<W>& work) {
  const std::size_t K = h.size();
  const W n = W(static_cast<long>(K));
  work.resize(3 * K + 2);
  const std::span<W> u(work.data(), K), squares_after(work.data() + K, K + 1),
      products_after(work.data() + 2 * K + 1, K + 1); // the sums over k > j, at j + 1
  W mean_h(0);
  if (centred) {
    for (const W& v : h)
      mean_h += v;
    mean_h = W(mean_h / n);
  }
  for (std::size_t k = 0; k < K; ++k)
    u[k] = centred ? W(h[k] - mean_h) : h[k];
  squares_after[K] = W(0);
  products_after[K] = W(0);
  for (std::size_t k = K; k-- > 0;) {
    squares_after[k] = W(squares_after[k + 1] + z[k] * z[k]);
    products_after[k] = W(products_after[k + 1] + u[k] * z[k]);
  }
  const W cube = W(s * s * s);
  W squares_before(0), products_before(0);
  for (std::size_t j = 0; j < K; ++j) {
    const W squares = W(squares_before + squares_after[j + 1]), products = W(products_before + products_after[j + 1]);
    d[j] = W(W(u[j] * W(W(squares / n) + eps) - z[j] * W(products / n)) / cube);
    squares_before += z[j] * z[j];
    products_before += u[j] * z[j];
  }
}

/// A group's y = z / s, z = x - c its centred entries; a dual number's tangent is the Jacobian applied to x's
/// tangents (normalise_jacobian), not the chain rule through s, which cancels as the VJP's first form does.
template <class W> void normalised_group(std::span<const W> x, std::span<W> z, const W& s, const W& eps, bool centred,
                                         std::span<W> y) {
  for (std::size_t j = 0; j < z.size(); ++j)
    y[j] = W(z[j] / s);
  if constexpr (is_dual<W>) {
    using U = std::remove_cvref_t<decltype(W{}.val)>;
    std::vector<U> tangent(x.size()), value(x.size()), dy(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) {
      tangent[j] = x[j].eps;
      value[j] = z[j].val;
    }
    std::vector<U> work;
    normalise_jacobian<U>(tangent, value, s.val, eps.val, centred, dy, work);
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
/// with the node's "eps" and "normalized_shape". The VJP recomputes z in Wide<T> from the operand and the saved
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
  std::vector<W> xi(k), zi(k), yi(k);
  for (Eigen::Index i = 0; i < R; ++i) {
    for (Eigen::Index j = 0; j < K; ++j) {
      const auto u = static_cast<std::size_t>(j);
      xi[u] = widen(x(i, j));
      zi[u] = centred_entry(xi[u], stats.first(i, 0), stats.second(i, 0));
    }
    normalised_group<W>(xi, zi, stats.scale(i, 0), eps, centred, yi);
    for (Eigen::Index j = 0; j < K; ++j)
      out(i, j) = narrow<T>(W(yi[static_cast<std::size_t>(j)] * weight(j) + bias(j)));
  }
  return tape.template record<Op>(
      in, s, std::move(result),
      [stats = std::move(stats), eps, centred, R, K, k, operands](Backprop<T>& bp) {
        const ConstView g(bp.grad().data(), R, K), x(bp.input(0).data(), R, K);
        const auto z = [&](Eigen::Index i, Eigen::Index j) {
          return centred_entry(widen(x(i, j)), stats.first(i, 0), stats.second(i, 0));
        };
        std::vector<W> h(k), zi(k), d(k), work;
        bp.accumulate_with(0, [&](Matrix<T>& da) {
          Eigen::Map<Matrix<T>> out(da.data(), R, K);
          for (Eigen::Index i = 0; i < R; ++i) {
            for (Eigen::Index j = 0; j < K; ++j) {
              const auto u = static_cast<std::size_t>(j);
              zi[u] = z(i, j);
              h[u] = operands > 1 ? W(widen(g(i, j)) * widen(bp.input(1).data()[j])) : widen(g(i, j));
            }
            normalise_jacobian<W>(h, zi, stats.scale(i, 0), eps, centred, d, work);
            for (Eigen::Index j = 0; j < K; ++j)
              out(i, j) = narrow<T>(d[static_cast<std::size_t>(j)]);
          }
        });
        for (std::size_t q = 1; q < operands; ++q) // the weight (sum of g y) and the bias (sum of g), row by row
          bp.accumulate_with(q, [&](Matrix<T>& dw) {
            std::vector<W>& total = d; // d's entries are not needed any more
            std::fill(total.begin(), total.end(), W(0));
            for (Eigen::Index i = 0; i < R; ++i)
              for (Eigen::Index j = 0; j < K; ++j)
                total[static_cast<std::size_t>(j)] +=
                    q == 1 ? W(widen(g(i, j)) * W(z(i, j) / stats.scale(i, 0))) : widen(g(i, j));
            for (Eigen::Index j = 0; j < K; ++j)
              dw.data()[j] = narrow<T>(total[static_cast<std::size_t>(j)]);
          });
      },
      std::move(label), p);
}

} // namespace detail

} // namespace tapegrad
