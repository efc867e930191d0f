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
// centres of x and of h are kept as two numbers each, and h = g w carries its product's rounding error (a fused
// multiply-add), so that a nearly constant group keeps z = x - c and h - mean(h) to their own rounding
// (detail::two_part_centre). For float all of it runs in double (detail::Wide); a double call (float's, a dual
// number's of double) whose numbers would leave double's exponent range on the way (s^3, z^2,
// h (mean(z^2) + eps), y w + b) runs in long double instead (detail::Fallback, detail::moderate).
#include "../autodiff/dual.hpp"
#include "../autodiff/operands.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
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
template <class T> struct Widening { using type = T; };
template <> struct Widening<float> { using type = double; };
template <Real U> struct Widening<Dual<U>> { using type = Dual<typename Widening<U>::type>; };
template <Real T> using Wide = typename Widening<T>::type;

/// The type a group is computed in when its numbers would leave double's exponent range on the way (see
/// moderate): long double for double (and Dual<long double> for Dual<double>), W itself otherwise.
template <class W> struct FallingBack { using type = W; };
template <> struct FallingBack<double> {
  // s^3 of any double s, and products of such, in range: three times double's exponent range (x87's is 16 times)
  static_assert(std::numeric_limits<long double>::max_exponent >= 3 * std::numeric_limits<double>::max_exponent &&
                    std::numeric_limits<long double>::min_exponent <= 3 * std::numeric_limits<double>::min_exponent,
                "layer_norm's range fallback needs a long double with three times double's exponent range (x87)");
  using type = long double;
};
template <Real U> struct FallingBack<Dual<U>> { using type = Dual<typename FallingBack<U>::type>; };
template <class W> using Fallback = typename FallingBack<W>::type;

/// x as a To, To and From both plain numbers or both dual numbers (part by part): exact from a narrower type, one
/// rounding to a narrower one, x itself for the same type.
template <class To, class From> To change(const From& x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (is_dual<To>) {
    using U = std::remove_cvref_t<decltype(To{}.val)>;
    return To{change<U>(x.val), change<U>(x.eps)};
  } else {
    return static_cast<To>(x);
  }
}
template <Real T> Wide<T> widen(const T& x) { return change<Wide<T>>(x); }

/// Whether a per-entry division by a group's s (or n s^3) may be a product by its reciprocal: not where the plain
/// type is 16-bit, whose range the reciprocal leaves (1/s^3 > 65504 at s < 0.025 in float16) while the quotient
/// does not.
template <class W> inline constexpr bool divides_by_reciprocal = !is_16_bit<decltype(plain_value(W{}))>;

/// Whether product_error is exact in W: the binary types that round each operation once (not the 16-bit types,
/// whose operations run in float and round twice, nor dual numbers).
template <class W> inline constexpr bool exact_product_error = !is_dual<W> && !is_16_bit<W>;
/// a b - p exactly, p = a b rounded in W, barring underflow: a fused multiply-add for the hardware types,
/// Dekker's product of halves (Veltkamp's split at 2^ceil(digits / 2) + 1) for the others.
template <class W> W product_error(const W& a, const W& b, const W& p) {
  static_assert(exact_product_error<W>);
  if constexpr (std::is_floating_point_v<W>) {
    return std::fma(a, b, -p);
  } else {
    using std::ldexp;
    const W split = W(ldexp(W(1), (digits<W>() + 1) / 2) + W(1));
    const auto halves = [&](const W& v) {
      const W t = W(split * v), high = W(t - W(t - v));
      return std::pair{high, W(v - high)};
    };
    const auto [ah, al] = halves(a);
    const auto [bh, bl] = halves(b);
    W e = W(W(ah * bh) - p); // each step exact (Dekker), in this order
    e = W(e + W(ah * bl));
    e = W(e + W(al * bh));
    return W(e + W(al * bl));
  }
}

/// Whether x (each part of a dual number), computed in double, is 0 or within [2^-e, 2^e] in magnitude, the
/// bounds made once by bounds(e) (bounds(e, true): at most 2^e). Groups whose entries are all moderate at e = 250 (and
/// eps 0 or within [2^-600, 2^500]) stay inside double's range through the formula, for groups of up to 2^30 entries:
/// |z| <= 2^251, so sum z^2 <= 2^533; a group that is not constant has a z of at least 2^-304 (two entries that
/// differ do so by 2^-53 of the larger), so s >= 2^-304 / 2^15, s^3 >= 2^-957 (a normal double), and the largest
/// |u| (mean(z^2) + eps) stays within [2^-1000, 2^760] when h is moderate at 250 (a smaller one may go subnormal,
/// below the largest entry's rounding); a constant group has s = sqrt(eps), 0 or within [2^-300, 2^250]. NaN and
/// inf are not moderate: such a call runs in Fallback and gives the NaN or inf the formula gives. The checks are
/// per call (forward_keeps_range, backward_keeps_range): one group out of range sends the whole call to Fallback.
template <class P> struct Bounds {
  P low, high; // low = 0: bounded from above only
};
template <class P> Bounds<P> bounds(int e, bool above_only = false) {
  using std::ldexp;
  return {above_only ? P(0) : P(ldexp(P(1), -e)), P(ldexp(P(1), e))};
}
template <class W, class P> bool moderate(const W& x, const Bounds<P>& b) {
  if constexpr (is_dual<W>) {
    return moderate(x.val, b) && moderate(x.eps, b);
  } else if constexpr (std::is_same_v<W, double>) {
    // on the bits, without branches (the callers' loops vectorise): |x|'s bits order as |x| does, NaN above inf
    const auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v) & ~(std::uint64_t(1) << 63); };
    const std::uint64_t a = bits(x), low = bits(b.low), high = bits(b.high);
    return (a == 0) | (a - low <= high - low);
  } else {
    using std::abs;
    const W a = abs(x);
    return a <= b.high && (a == W(0) || a >= b.low);
  }
}

/// The centre of a group as two numbers, c = first + second: `first` the rounded mean, `second` the mean of
/// entry - first, and a centred entry is (entry - first) - second (centred). A nearly constant group (entries near
/// their mean) would otherwise carry first's rounding, eps |c|, into every centred entry, a large error relative
/// to the entry itself that the VJP multiplies (the property tests found a double layer_norm VJP off by 1.3e-12
/// relative, for a group of n = 2 whose entries differ by 1.6%). There entry - first is exact (the two are within
/// a factor 2 of each other), so first's rounding cancels through second, and what is left is second's rounding
/// and the subtraction's, each relative to the centred entry itself. `entry(k)` gives entry k of n, in W.
template <class W> struct Centre { W first{0}, second{0}; };
template <class W> W centred(const W& x, const Centre<W>& c) { return W(W(x - c.first) - c.second); }
template <class W, class Entry> Centre<W> two_part_centre(std::size_t n, const Entry& entry) {
  const W count = W(static_cast<long>(n));
  Centre<W> c;
  for (std::size_t k = 0; k < n; ++k)
    c.first += entry(k);
  c.first = W(c.first / count);
  for (std::size_t k = 0; k < n; ++k)
    c.second += W(entry(k) - c.first);
  c.second = W(c.second / count);
  return c;
}

/// Each group's centre (two_part_centre; 0 when not centred) and s (see above) for x (a group per row), in W.
/// Where the variance (mean square) + eps is not > 0 (a constant group with eps = 0, a negative eps) s is what the
/// formula gives, 0 or NaN, and the group's result is then NaN or +-inf: the format defines no error there, and
/// eps > 0 (the default) keeps every group finite.
template <class W> struct RowStatistics {
  std::vector<Centre<W>> centre;
  std::vector<W> scale;
};
template <class W, class X, Real T> RowStatistics<W> row_statistics(const X& x, const T& eps, bool centred_group) {
  const auto K = static_cast<std::size_t>(x.cols());
  const W n = W(static_cast<long>(K)), e = change<W>(eps);
  RowStatistics<W> r{std::vector<Centre<W>>(static_cast<std::size_t>(x.rows())),
                     std::vector<W>(static_cast<std::size_t>(x.rows()))};
  using std::sqrt;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const auto entry = [&](std::size_t j) { return change<W>(x(i, static_cast<Eigen::Index>(j))); };
    Centre<W>& c = r.centre[static_cast<std::size_t>(i)];
    if (centred_group) c = two_part_centre<W>(K, entry);
    W squares(0);
    for (std::size_t j = 0; j < K; ++j) {
      const W z = centred(entry(j), c);
      squares += z * z;
    }
    r.scale[static_cast<std::size_t>(i)] = W(sqrt(W(squares / n + e)));
  }
  return r;
}

/// The group's Jacobian dy/dx applied to h (it is symmetric, so this is the VJP and a dual number's tangent alike):
///   d_j = (u_j (mean(z^2) + eps) - z_j mean(u z)) / s^3,   u = h - mean(h) when centred, h otherwise,
/// with z = x - c and s^2 = mean(z^2) + eps. The term k = j of mean(z^2) and of mean(u z) cancels exactly, so both
/// sums leave it out (over k != j, from prefix and suffix sums): rms_norm over one entry, y = x / sqrt(x^2 + eps),
/// gives d = h eps / s^3 to W's rounding, where (h - y mean(h y)) / s loses x^2 / eps of it to 1 - y^2. mean(h) is
/// a two-part centre, as x's is, so that a nearly constant h (g w with a nearly constant weight and gradient) keeps
/// u to its own rounding; h is exact there only with `h_error`, the rounding error of each h = g w (product_error;
/// empty: h is exact, as a tangent or g alone is), which u takes in. `work` is workspace (any contents; resized to
/// 3 K + 2), kept by a caller that runs many groups.
template <class W> void normalise_jacobian(std::span<const W> h, std::span<const W> h_error, std::span<const W> z,
                                           const W& s, const W& eps, bool centred_group, std::span<W> d,
                                           std::vector<W>& work) {
  const std::size_t K = h.size();
  const W n = W(static_cast<long>(K));
  work.resize(3 * K + 2);
  const std::span<W> u(work.data(), K), squares_after(work.data() + K, K + 1),
      products_after(work.data() + 2 * K + 1, K + 1); // the sums over k > j, at j + 1
  if (centred_group) {
    const Centre<W> c = two_part_centre<W>(K, [&](std::size_t k) { return h[k]; });
    for (std::size_t k = 0; k < K; ++k)
      u[k] = centred(h[k], c);
    if (!h_error.empty()) { // u += e - mean(e): the e are below h's rounding, so one part is enough for their mean
      W mean_error(0);
      for (const W& e : h_error)
        mean_error += e;
      mean_error = W(mean_error / n);
      for (std::size_t k = 0; k < K; ++k)
        u[k] = W(u[k] + W(h_error[k] - mean_error));
    }
  } else { // rms_norm: h's own rounding is relative to h, which u is
    std::copy(h.begin(), h.end(), u.begin());
  }
  squares_after[K] = W(0);
  products_after[K] = W(0);
  for (std::size_t k = K; k-- > 0;) {
    squares_after[k] = W(squares_after[k + 1] + z[k] * z[k]);
    products_after[k] = W(products_after[k + 1] + u[k] * z[k]);
  }
  // d_j = (u_j (S_j + n eps) - z_j P_j) / (n s^3), S_j and P_j the sums over k != j: one product by the
  // reciprocal per entry, not three divisions (divides_by_reciprocal)
  const W cube = W(s * s * s), n_eps = W(n * eps), reciprocal = W(W(1) / W(n * cube));
  W squares_before(0), products_before(0);
  for (std::size_t j = 0; j < K; ++j) {
    const W squares = W(squares_before + squares_after[j + 1]), products = W(products_before + products_after[j + 1]);
    if constexpr (divides_by_reciprocal<W>)
      d[j] = W(W(u[j] * W(squares + n_eps) - z[j] * products) * reciprocal);
    else
      d[j] = W(W(u[j] * W(W(squares / n) + eps) - z[j] * W(products / n)) / cube);
    squares_before += z[j] * z[j];
    products_before += u[j] * z[j];
  }
}

/// A group's y = z / s, z = x - c its centred entries; a dual number's tangent is the Jacobian applied to x's
/// tangents (normalise_jacobian), not the chain rule through s, which cancels as the VJP's first form does.
template <class W> void normalised_group(std::span<const W> x, std::span<W> z, const W& s, const W& eps,
                                         bool centred_group, std::span<W> y) {
  const W reciprocal = W(W(1) / s); // a product per entry (divides_by_reciprocal)
  for (std::size_t j = 0; j < z.size(); ++j)
    y[j] = divides_by_reciprocal<W> ? W(z[j] * reciprocal) : W(z[j] / s);
  if constexpr (is_dual<W>) {
    using U = std::remove_cvref_t<decltype(W{}.val)>;
    std::vector<U> tangent(x.size()), value(x.size()), dy(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) {
      tangent[j] = x[j].eps;
      value[j] = z[j].val;
    }
    std::vector<U> work;
    normalise_jacobian<U>(tangent, {}, value, s.val, eps.val, centred_group, dy, work);
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

/// A tensor's storage as R groups of K entries, one per row.
template <Real T> using GroupView = Eigen::Map<const Matrix<T>>;

/// Whether every group of x, with eps and the weight and bias w, b (null when absent; K entries each), stays inside
/// double's range when computed in W (moderate; w and b only from above, y w + b <= 2^15 2^1000 + 2^1000: below
/// 2^1024); always for a W without a Fallback.
template <class W, Real T> bool forward_keeps_range(const GroupView<T>& x, const T& eps, const T* w, const T* b) {
  if constexpr (std::is_same_v<W, Fallback<W>>) {
    return true;
  } else {
    using P = decltype(plain_value(W{}));    // double
    const P e = change<P>(plain_value(eps)); // a parameter: a dual eps's tangent is 0
    if (!moderate(e, Bounds<P>{bounds<P>(600).low, bounds<P>(500).high})) return false;
    const Bounds<P> entries = bounds<P>(250), above = bounds<P>(1000, true);
    bool in_range = true;
    for (Eigen::Index k = 0; k < x.size(); ++k)
      in_range &= moderate(change<W>(x.data()[k]), entries);
    for (const T* v : {w, b})
      for (Eigen::Index j = 0; v != nullptr && j < x.cols(); ++j)
        in_range &= moderate(change<W>(v[j]), above);
    return in_range;
  }
}

/// Whether the VJP's h = g w (w null: h = g) stays inside double's range in W: moderate at 250, and (plain W) h is 0
/// only where g or w is, so the product did not underflow; a dual number's parts are products summed, so there
/// g and w are each moderate at 125 instead. Always for a W without a Fallback.
template <class W, Real T> bool backward_keeps_range(const GroupView<T>& g, const T* w) {
  if constexpr (std::is_same_v<W, Fallback<W>>) {
    return true;
  } else if constexpr (is_dual<W>) {
    using P = decltype(plain_value(W{}));
    const Bounds<P> b = bounds<P>(w != nullptr ? 125 : 250);
    for (Eigen::Index k = 0; k < g.size(); ++k)
      if (!moderate(change<W>(g.data()[k]), b)) return false;
    for (Eigen::Index j = 0; w != nullptr && j < g.cols(); ++j)
      if (!moderate(change<W>(w[j]), b)) return false;
    return true;
  } else {
    const Bounds<W> b = bounds<W>(250);
    bool in_range = true;
    if (w == nullptr) {
      for (Eigen::Index k = 0; k < g.size(); ++k)
        in_range &= moderate(change<W>(g.data()[k]), b);
      return in_range;
    }
    // h = 0 from nonzero g and w is an underflow: (h == 0) <= (g == 0 or w == 0), without branches
    for (Eigen::Index i = 0; i < g.rows(); ++i)
      for (Eigen::Index j = 0; j < g.cols(); ++j) {
        const W gij = change<W>(g(i, j)), wj = change<W>(w[j]), h = W(gij * wj);
        in_range &= moderate(h, b) & ((h == W(0)) <= ((gij == W(0)) | (wj == W(0))));
      }
    return in_range;
  }
}

/// The forward in V for x's groups: writes each group's y w + b (w, b null: 1 and 0) to `out` and returns the
/// statistics the VJP reuses.
template <class V, Real T> RowStatistics<V> normalise_forward(const GroupView<T>& x, const T& eps, bool centred_group,
                                                              const T* w, const T* b, T* out) {
  const Eigen::Index R = x.rows(), K = x.cols();
  const auto k = static_cast<std::size_t>(K);
  const V e = change<V>(eps);
  RowStatistics<V> stats = row_statistics<V>(x, eps, centred_group);
  std::vector<V> xi(k), zi(k), yi(k);
  for (Eigen::Index i = 0; i < R; ++i) {
    const Centre<V>& c = stats.centre[static_cast<std::size_t>(i)];
    for (std::size_t j = 0; j < k; ++j) {
      xi[j] = change<V>(x(i, static_cast<Eigen::Index>(j)));
      zi[j] = centred(xi[j], c);
    }
    normalised_group<V>(xi, zi, stats.scale[static_cast<std::size_t>(i)], e, centred_group, yi);
    for (std::size_t j = 0; j < k; ++j) {
      V r = yi[j];
      if (w != nullptr) r = V(r * change<V>(w[j]));
      if (b != nullptr) r = V(r + change<V>(b[j]));
      out[static_cast<std::size_t>(i) * k + j] = change<T>(r);
    }
  }
  return stats;
}

/// The VJP in V, from the forward's statistics: dx (normalise_jacobian on h = g w), and when there are a weight
/// and a bias, dw = sum over groups of g y and db = sum over groups of g.
template <class V, Real T> void normalise_backward(Backprop<T>& bp, const RowStatistics<V>& stats, const T& eps,
                                                   bool centred_group, Eigen::Index R, Eigen::Index K,
                                                   std::size_t operands) {
  const GroupView<T> g(bp.grad().data(), R, K), x(bp.input(0).data(), R, K);
  const auto k = static_cast<std::size_t>(K);
  const V e = change<V>(eps);
  const auto z = [&](Eigen::Index i, std::size_t j) {
    return centred(change<V>(x(i, static_cast<Eigen::Index>(j))), stats.centre[static_cast<std::size_t>(i)]);
  };
  const auto gradient = [&](Eigen::Index i, std::size_t j) { return change<V>(g(i, static_cast<Eigen::Index>(j))); };
  // With a weight, h = g w rounds; a centred group takes its rounding error in too (normalise_jacobian).
  const bool with_error = operands > 1 && centred_group && exact_product_error<V>;
  std::vector<V> h(k), h_error(with_error ? k : 0), zi(k), d(k), work;
  bp.accumulate_with(0, [&](Matrix<T>& da) {
    for (Eigen::Index i = 0; i < R; ++i) {
      for (std::size_t j = 0; j < k; ++j) {
        zi[j] = z(i, j);
        if (operands == 1) {
          h[j] = gradient(i, j);
          continue;
        }
        const V gij = gradient(i, j), wj = change<V>(bp.input(1).data()[j]);
        h[j] = V(gij * wj);
        if constexpr (exact_product_error<V>)
          if (with_error) h_error[j] = product_error(gij, wj, h[j]);
      }
      normalise_jacobian<V>(h, h_error, zi, stats.scale[static_cast<std::size_t>(i)], e, centred_group, d, work);
      for (std::size_t j = 0; j < k; ++j)
        da.data()[static_cast<std::size_t>(i) * k + j] = change<T>(d[j]);
    }
  });
  for (std::size_t q = 1; q < operands; ++q) // the weight (sum of g y) and the bias (sum of g), row by row
    bp.accumulate_with(q, [&](Matrix<T>& dw) {
      std::vector<V>& total = d; // d's entries are not needed any more
      std::fill(total.begin(), total.end(), V(0));
      for (Eigen::Index i = 0; i < R; ++i) {
        const V& scale = stats.scale[static_cast<std::size_t>(i)];
        const V reciprocal = V(V(1) / scale);
        for (std::size_t j = 0; j < k; ++j)
          if (q == 1)
            total[j] += V(gradient(i, j) * (divides_by_reciprocal<V> ? V(z(i, j) * reciprocal) : V(z(i, j) / scale)));
          else
            total[j] += gradient(i, j);
      }
      for (std::size_t j = 0; j < k; ++j)
        dw.data()[j] = change<T>(total[j]);
    });
}

/// Records layer_norm (centred) or rms_norm (not) on in[0], with in[1] the weight and in[2] the bias when given,
/// with the node's "eps" and "normalized_shape". It computes in Wide<T>, or in Fallback<Wide<T>> where a group
/// would leave double's range (forward_keeps_range, backward_keeps_range: there the statistics are recomputed in
/// it). The VJP recomputes z from the operand and the saved statistics, rather than reading the result rounded to
/// T.
template <class Op, Real T>
Var<T> record_normalise(std::span<const Var<T>> in, const Params<T>& p, std::string label, bool centred_group) {
  using W = Wide<T>;
  Tape<T>& tape = common_tape(Op::info, in);
  const Shape s = Op::shape(in, p);
  const Eigen::Index K = group_size(in[0], p), R = s.numel() / K;
  const GroupView<T> x(in[0].value().data(), R, K);
  const T eps = p.number("eps");
  const std::size_t operands = in.size();
  const T* w = operands > 1 ? in[1].value().data() : nullptr;
  const T* b = operands > 2 ? in[2].value().data() : nullptr;
  Matrix<T> result = tape.buffer(s);
  std::optional<RowStatistics<W>> stats; // absent: the forward ran in Fallback<W>, and so does the VJP
  if (forward_keeps_range<W>(x, eps, w, b))
    stats = normalise_forward<W>(x, eps, centred_group, w, b, result.data());
  else
    normalise_forward<Fallback<W>>(x, eps, centred_group, w, b, result.data());
  return tape.template record<Op>(
      in, s, std::move(result),
      [stats = std::move(stats), eps, centred_group, R, K, operands](Backprop<T>& bp) {
        const GroupView<T> g(bp.grad().data(), R, K), x(bp.input(0).data(), R, K);
        if (stats && backward_keeps_range<W>(g, operands > 1 ? bp.input(1).data() : nullptr))
          normalise_backward<W>(bp, *stats, eps, centred_group, R, K, operands);
        else
          normalise_backward<Fallback<W>>(bp, row_statistics<Fallback<W>>(x, eps, centred_group), eps, centred_group, R,
                                          K, operands);
      },
      std::move(label), p);
}

} // namespace detail

} // namespace tapegrad
