#pragma once
// Dual numbers for forward mode: x + x' e with e^2 = 0. Running a graph's forward code on Dual<T> with the
// inputs seeded along a direction v gives the directional derivative J'(x) v in the e part, exactly up to
// rounding: an oracle with no step size, independent of every VJP.
//
// Dual<T> satisfies Real, so the very same ops and graph-building functions run on Tape<Dual<T>>.
// Comparisons and equality look at the value only (branches such as the row max in softmax follow the
// value, as they must for a derivative).

#include "real.hpp"

#include <ostream>

namespace tapegrad {

template <Real T> struct Dual {
  T val{0}; ///< the value
  T eps{0}; ///< the derivative along the seeded direction

  Dual() = default;
  Dual(const T& v, const T& d) : val(v), eps(d) {}
  // Constants: from T and from anything T is made from (T(2), T(3L)...); their derivative is 0.
  // U is a number (not Dual itself, whose copies these are not): Eigen::half's constructor takes any U, so
  // constructible_from alone would be asked of Eigen's expression types, and of Dual while Dual is being checked.
  template <class U>
  requires(!std::same_as<std::remove_cvref_t<U>, Dual> &&
           (std::is_arithmetic_v<U> || std::numeric_limits<U>::is_specialized ||
            runtime_precision<U>)&&std::constructible_from<T, U>) Dual(const U& v)
      : val(v), eps(0) {} // NOLINT: implicit, as constants are for the other scalar types

  Dual& operator+=(const Dual& o) { return *this = *this + o; }
  Dual& operator-=(const Dual& o) { return *this = *this - o; }
  Dual& operator*=(const Dual& o) { return *this = *this * o; }
  Dual& operator/=(const Dual& o) { return *this = *this / o; }

  friend Dual operator+(const Dual& a, const Dual& b) { return {a.val + b.val, a.eps + b.eps}; }
  friend Dual operator-(const Dual& a, const Dual& b) { return {a.val - b.val, a.eps - b.eps}; }
  friend Dual operator-(const Dual& a) { return {-a.val, -a.eps}; }
  friend Dual operator*(const Dual& a, const Dual& b) { return {a.val * b.val, a.eps * b.val + a.val * b.eps}; }
  friend Dual operator/(const Dual& a, const Dual& b) {
    const T q = a.val / b.val;
    return {q, (a.eps - q * b.eps) / b.val};
  }
  friend bool operator==(const Dual& a, const Dual& b) { return a.val == b.val; }
  friend bool operator!=(const Dual& a, const Dual& b) { return a.val != b.val; }
  friend bool operator<(const Dual& a, const Dual& b) { return a.val < b.val; }
  friend bool operator>(const Dual& a, const Dual& b) { return a.val > b.val; }
  friend bool operator<=(const Dual& a, const Dual& b) { return a.val <= b.val; }
  friend bool operator>=(const Dual& a, const Dual& b) { return a.val >= b.val; }
  friend std::ostream& operator<<(std::ostream& out, const Dual& a) { return out << a.val << " + " << a.eps << "e"; }
};

/// d exp(x) = exp(x) dx
template <Real T> Dual<T> exp(const Dual<T>& a) {
  using std::exp;
  const T e = exp(a.val);
  return {e, e * a.eps};
}
/// d log(x) = dx / x
template <Real T> Dual<T> log(const Dual<T>& a) {
  using std::log;
  return {log(a.val), a.eps / a.val};
}
/// d sqrt(x) = dx / (2 sqrt(x))
template <Real T> Dual<T> sqrt(const Dual<T>& a) {
  using std::sqrt;
  const T r = sqrt(a.val);
  return {r, a.eps / (T(2) * r)};
}
/// d |x| = sign(x) dx, and 0 at x = 0 (the subgradient graph files use, abs'(0) = 0)
template <Real T> Dual<T> abs(const Dual<T>& a) {
  if (a.val < T(0)) return -a;
  if (a.val == T(0)) return {T(0), T(0)};
  return a;
}

/// tanh'(x) = 1 - tanh(x)^2 = 4 e / (1 + e)^2 with e = exp(-2 |x|): no cancellation where tanh rounds to +-1
/// (0 at +-inf). In two steps, so that ops/tanh.hpp can take the exp of a whole array at once.
template <Real T> T tanh_derivative_from_exp(const T& e) { return T(4) * e / ((T(1) + e) * (T(1) + e)); }
template <Real T> T tanh_derivative(const T& x) {
  using std::abs;
  using std::exp;
  return tanh_derivative_from_exp(T(exp(T(-2) * abs(x))));
}
/// d tanh(x) = tanh'(x) dx
template <Real T> Dual<T> tanh(const Dual<T>& a) {
  using std::tanh;
  return {tanh(a.val), tanh_derivative(a.val) * a.eps};
}
/// d log1p(x) = dx / (1 + x)
template <Real T> Dual<T> log1p(const Dual<T>& a) {
  using std::log1p;
  return {log1p(a.val), a.eps / (T(1) + a.val)};
}
/// d erfc(x) = -(2 / sqrt(pi)) exp(-x^2) dx
template <Real T> Dual<T> erfc(const Dual<T>& a) {
  using std::erfc;
  using std::exp;
  using std::sqrt;
  const T two_over_sqrt_pi = T(2) / sqrt(pi<T>());
  return {T(erfc(a.val)), -two_over_sqrt_pi * exp(-a.val * a.val) * a.eps}; // T(): erfc of a 16-bit type is float's
}
/// d x^p = p x^(p - 1) dx for a constant p; 0 when p = 0 (x^0 = 1 everywhere, 0^0 included)
template <Real T> Dual<T> pow(const Dual<T>& a, const T& p) {
  using std::pow;
  if (p == T(0)) return {T(1), T(0)};
  return {pow(a.val, p), p * pow(a.val, p - T(1)) * a.eps};
}
/// The same with the exponent a Dual: d x^p = p x^(p - 1) dx + x^p log(x) dp (the second term only when the
/// exponent carries a derivative: a constant exponent leaves x free to be negative).
template <Real T> Dual<T> pow(const Dual<T>& a, const Dual<T>& p) {
  using std::log;
  Dual<T> r = pow(a, p.val);
  if (p.eps != T(0) && r.val != T(0)) r.eps += r.val * log(a.val) * p.eps; // 0^p: no log term
  return r;
}

template <Real T> bool is_finite(const Dual<T>& a) { return is_finite(a.val) && is_finite(a.eps); }
template <Real T> bool is_nan(const Dual<T>& a) { return is_nan(a.val) || is_nan(a.eps); }

template <Real T> inline constexpr bool runtime_precision<Dual<T>> = runtime_precision<T>;

template <Real T> inline constexpr bool is_dual<Dual<T>> = true; // the primary template is in real.hpp

/// The plain number under any depth of dual numbers (the value of a Dual<Dual<T>> is a Dual<T>); x itself for a
/// plain scalar.
template <Real T> auto plain_value(const T& x) {
  if constexpr (is_dual<T>)
    return plain_value(x.val);
  else
    return x;
}

/// For autodiff/instances.hpp: X(prefix, T, ...) and X(prefix, Dual<T>, ...), the types forward mode runs the
/// same code on (the tape, the ops, the graphs).
#define TAPEGRAD_WITH_DUAL(X, prefix, T, ...)                                                                          \
  X(prefix, T __VA_OPT__(, ) __VA_ARGS__) X(prefix, Dual<T> __VA_OPT__(, ) __VA_ARGS__)

template <Real T> Matrix<T> values(const Matrix<Dual<T>>& m) {
  return m.unaryExpr([](const Dual<T>& x) { return x.val; });
}
template <Real T> Matrix<T> derivatives(const Matrix<Dual<T>>& m) {
  return m.unaryExpr([](const Dual<T>& x) { return x.eps; });
}

} // namespace tapegrad

template <tapegrad::Real T> class std::numeric_limits<tapegrad::Dual<T>> : public std::numeric_limits<T> {
  using D = tapegrad::Dual<T>;

public:
  static D infinity() { return D(std::numeric_limits<T>::infinity()); }
  static D quiet_NaN() { return D(std::numeric_limits<T>::quiet_NaN()); }
  static D epsilon() { return D(tapegrad::epsilon<T>()); }
  static D min() { return D((std::numeric_limits<T>::min)()); }
  static D max() { return D((std::numeric_limits<T>::max)()); }
  static D lowest() { return D(std::numeric_limits<T>::lowest()); }
};

template <tapegrad::Real T> struct Eigen::NumTraits<tapegrad::Dual<T>> : Eigen::GenericNumTraits<tapegrad::Dual<T>> {
  using Real = tapegrad::Dual<T>;
  using NonInteger = tapegrad::Dual<T>;
  using Nested = tapegrad::Dual<T>;
  using Literal = tapegrad::Dual<T>;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = 2,
    AddCost = 4,
    MulCost = 8
  };
  static Real epsilon() { return Real(tapegrad::epsilon<T>()); }
  static Real dummy_precision() { return Real(Eigen::NumTraits<T>::dummy_precision()); }
  static Real highest() { return Real(Eigen::NumTraits<T>::highest()); }
  static Real lowest() { return Real(Eigen::NumTraits<T>::lowest()); }
  static int digits10() { return Eigen::NumTraits<T>::digits10(); }
};
