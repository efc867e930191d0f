#pragma once
// Scalar types: the Real concept, the seven instantiated precisions, and helpers that work for all of them.
//
// Math goes through ADL (`using std::exp; exp(x)`) so Boost.Multiprecision's overloads are found.
// Inexact constants are made in T (sqrt(T(2)), log(T(3))), never taken from a double literal.

#include <boost/math/special_functions/fpclassify.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/cpp_int.hpp>
#include <boost/multiprecision/eigen.hpp>
#include <boost/multiprecision/float128.hpp>
#include <boost/multiprecision/mpfr.hpp>

#include <Eigen/Core>

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>

namespace tapegrad {

/// True for MPFR with run-time precision, whose numeric_limits are not specialised because its precision
/// is a run-time setting (epsilon() follows the current default precision).
template <class T> inline constexpr bool runtime_precision = false;

/// A real scalar: ordered field arithmetic closed over T, with numeric_limits. Deliberately not
/// std::is_floating_point, so multiprecision types qualify.
template <class T>
concept Real = (std::numeric_limits<T>::is_specialized || runtime_precision<T>)&&!std::numeric_limits<T>::is_integer
               && std::regular<T> && requires(T a, T b) {
  { a + b } -> std::convertible_to<T>;
  { a - b } -> std::convertible_to<T>;
  { a* b } -> std::convertible_to<T>;
  { a / b } -> std::convertible_to<T>;
  { -a } -> std::convertible_to<T>;
  { a < b } -> std::convertible_to<bool>;
};

namespace mp = boost::multiprecision;

/// 50 and 100 significant decimal digits, expression templates off (no `auto` surprises).
using float50 = mp::number<mp::cpp_bin_float<50>, mp::et_off>;
using float100 = mp::number<mp::cpp_bin_float<100>, mp::et_off>;
/// IEEE quadruple precision (113-bit significand), via libquadmath.
using float128 = mp::float128;
/// The 16-bit types (Eigen's): IEEE binary16 (11-bit significand, largest 65504) and bfloat16 (8-bit significand,
/// float's exponent range). Arithmetic is in the type: each operation is computed in float and rounded once to
/// it. Every value converts to float exactly.
using float16 = Eigen::half;
using bfloat16 = Eigen::bfloat16;
template <class T> inline constexpr bool is_16_bit = std::same_as<T, float16> || std::same_as<T, bfloat16>;

/// MPFR with the number of decimal digits chosen at run time: see MpfrDigits.
using mpfr_real = mp::number<mp::mpfr_float_backend<0>, mp::et_off>;
template <> inline constexpr bool runtime_precision<mpfr_real> = true;

/// Sets the precision of mpfr_real values created from now on (process wide: MPFR's default), and
/// restores the previous precision when it goes out of scope.
class MpfrDigits {
public:
  explicit MpfrDigits(unsigned digits10) : previous_(mpfr_real::default_precision()) {
    mpfr_real::default_precision(digits10);
  }
  ~MpfrDigits() { mpfr_real::default_precision(previous_); }
  MpfrDigits(const MpfrDigits&) = delete;
  MpfrDigits& operator=(const MpfrDigits&) = delete;

private:
  unsigned previous_;
};

/// A dense matrix in row-major storage. Every value on a tape is one of these; a scalar is 1 x 1.
template <class T> using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <Real T> bool is_finite(const T& x) {
  if constexpr (is_16_bit<T>)
    return std::isfinite(static_cast<float>(x));
  else
    return boost::math::isfinite(x);
}
template <Real T> bool is_nan(const T& x) {
  if constexpr (is_16_bit<T>)
    return std::isnan(static_cast<float>(x));
  else
    return boost::math::isnan(x);
}

template <Real T> T infinity() { return std::numeric_limits<T>::infinity(); }
/// The distance from 1 to the next T, 2^(1 - digits). For the 16-bit types it is made from their digits: Eigen
/// 3.4's numeric_limits<Eigen::half>::epsilon() is 2^-13, not binary16's 2^-10.
template <Real T> T epsilon() {
  if constexpr (is_16_bit<T>)
    return T(std::ldexp(1.0f, 1 - std::numeric_limits<T>::digits));
  else
    return std::numeric_limits<T>::epsilon();
}

/// Significant decimal digits that T carries (run-time for mpfr_real).
/// x exactly, as an R that holds it (R at least as precise as T). An mpfr_real result always has the
/// current default precision: Boost 1.74 gives a number converted from another multiprecision type that
/// type's precision, and any later operation on such numbers alone switches the process-wide default
/// precision while it runs (scoped_default_precision), which races with the checker's threads. So the
/// value goes through its integer mantissa, x = m 2^e, and an MPFR x is re-made at the default precision.
template <Real R, Real T> R exact_convert(const T& x) {
  if constexpr (is_16_bit<T> && !std::same_as<R, T>) {
    return exact_convert<R>(static_cast<float>(x)); // exact: float holds every 16-bit value
  } else if constexpr (std::same_as<R, T> && !runtime_precision<R>) {
    return x;
  } else if constexpr (std::same_as<R, T>) {
    return R(x, R::default_precision());
  } else if constexpr (runtime_precision<R>) {
    if (!boost::math::isfinite(x))
      return boost::math::isnan(x) ? R(std::numeric_limits<double>::quiet_NaN())
             : x > T(0)            ? R(std::numeric_limits<double>::infinity())
                                   : R(-std::numeric_limits<double>::infinity());
    using std::frexp;
    using std::ldexp;
    int e = 0;
    const int bits = std::numeric_limits<T>::digits;
    const T m = ldexp(frexp(x, &e), bits); // an integer of at most `bits` bits, exactly
    const boost::multiprecision::cpp_int mantissa(m);
    return ldexp(R(mantissa.str()), e - bits);
  } else {
    return static_cast<R>(x);
  }
}

/// Significand bits of T (for MPFR, or a Dual of it, those of a number made now: its default precision).
template <Real T> int digits() {
  if constexpr (runtime_precision<T>)
    return static_cast<int>(mpfr_get_prec(mpfr_real(0).backend().data()));
  else
    return std::numeric_limits<T>::digits;
}

template <Real T> int digits10() {
  if constexpr (runtime_precision<T>) // MPFR, or Dual of it
    return static_cast<int>(mpfr_real::default_precision());
  else
    return static_cast<int>(std::numeric_limits<T>::digits10);
}

/// One row of the scalar table (autodiff/scalar_types.hpp): the `--precision` spelling (empty for MPFR, which
/// any other number of digits selects) and the name reports use.
struct ScalarType {
  std::string_view spelling, name;
};

/// T's row of the table; {"", ""} for a type not in it (Dual<T>, a user's type).
template <class T> constexpr ScalarType scalar_type() {
#define TAPEGRAD_SCALAR(type, spelling, name)                                                                          \
  if constexpr (std::is_same_v<T, type>)                                                                               \
    return ScalarType{spelling, name};                                                                                 \
  else
#include "scalar_types.hpp"
#undef TAPEGRAD_SCALAR
  return ScalarType{"", ""};
}

/// Every row of the table, in its order.
inline constexpr ScalarType scalar_types[] = {
#define TAPEGRAD_SCALAR(type, spelling, name) ScalarType{spelling, name},
#include "scalar_types.hpp"
#undef TAPEGRAD_SCALAR
};

/// The table's rules, checked where it is read: spellings unique, and exactly one row without a spelling (MPFR,
/// which any other number of digits selects).
constexpr bool scalar_table_is_well_formed() {
  int unspelled = 0;
  for (std::size_t i = 0; i < std::size(scalar_types); ++i) {
    unspelled += scalar_types[i].spelling.empty();
    for (std::size_t j = 0; j < i; ++j)
      if (!scalar_types[i].spelling.empty() && scalar_types[i].spelling == scalar_types[j].spelling) return false;
  }
  return unspelled == 1;
}
static_assert(scalar_table_is_well_formed(), "autodiff/scalar_types.hpp: spellings must be unique, one row unspelled");
static_assert(scalar_type<mpfr_real>().spelling.empty(), "autodiff/scalar_types.hpp: MPFR is the unspelled row");

/// "float, double, long-double, float128, 50, 100": the fixed `--precision` spellings, for help and messages.
inline std::string precision_spellings() {
  std::string list;
  for (const ScalarType& s : scalar_types)
    if (!s.spelling.empty()) list += (list.empty() ? "" : ", ") + std::string(s.spelling);
  return list;
}

/// A readable name of the scalar type, as used in reports: the table's, with MPFR's digits.
template <Real T> std::string scalar_name() {
  constexpr ScalarType row = scalar_type<T>();
  if constexpr (std::same_as<T, mpfr_real>)
    return std::string(row.name) + "<" + std::to_string(digits10<T>()) + ">";
  else if constexpr (!row.name.empty())
    return std::string(row.name);
  else
    return "scalar with " + std::to_string(digits10<T>()) + " digits";
}

/// The name `--precision` takes for T (the table's spelling), or MPFR's digits.
template <Real T> std::string precision_name() {
  constexpr ScalarType row = scalar_type<T>();
  if constexpr (!row.spelling.empty())
    return std::string(row.spelling);
  else
    return std::to_string(digits10<T>());
}

/// Significant decimal digits that identify every value of T (round trip): float 9, double 17, long double
/// 21 (x86-64), float128 36, cpp_bin_float<50> 53; for MPFR, from the precision in bits.
template <Real T> int max_digits10() {
  if constexpr (runtime_precision<T>) {
    using std::ceil;
    const long bits = static_cast<long>(mpfr_get_prec(mpfr_real(0).backend().data())); // MPFR, or Dual of it
    return static_cast<int>(std::ceil(static_cast<double>(bits) * 0.30102999566398120)) + 1;
  } else {
    return std::numeric_limits<T>::max_digits10;
  }
}

/// x as a decimal that reads back to the same value (max_digits10 significant digits), with the graph
/// format's spellings for the special values: "inf", "-inf", "nan".
template <Real T> std::string to_decimal(const T& x) {
  if (is_nan(x)) return "nan";
  if (!is_finite(x)) return x > T(0) ? "inf" : "-inf";
  std::ostringstream out;
  out.precision(max_digits10<T>());
  out << x;
  return out.str();
}

/// Whether T is a dual number (autodiff/dual.hpp specialises it for Dual<U>).
template <class T> inline constexpr bool is_dual = false;

/// The decimal `s` rounded once to a 16-bit type, to nearest (ties to even), subnormals and overflow as IEEE
/// rounds them: MPFR rounds the decimal itself to T's significand within T's exponent range. Through float
/// or double it would be rounded twice, which differs at some ties.
template <Real T> T round_16_bit(const std::string& s) {
  static_assert(is_16_bit<T>);
  using L = std::numeric_limits<T>;
  // MPFR's exponents are those of 0.1xxx (binary) times 2^e: T's normal range [2^(min_exponent - 1), 2^max_exponent)
  // is e in [min_exponent, max_exponent]; subnormals reach digits - 1 binary places below.
  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(L::min_exponent - L::digits + 1);
  mpfr_set_emax(L::max_exponent);
  mpfr_t v;
  mpfr_init2(v, L::digits);
  const int ternary = mpfr_strtofr(v, s.c_str(), nullptr, 10, MPFR_RNDN);
  mpfr_subnormalize(v, ternary, MPFR_RNDN);
  const float f = mpfr_get_flt(v, MPFR_RNDN); // exact: T's values are floats
  mpfr_clear(v);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  return T(f);
}

/// The exact decimal `text` (as the format allows it) rounded once to T.
/// A Dual<T> gets the decimal as its value, with derivative 0.
template <Real T> T from_decimal(const std::string& text) {
  if constexpr (is_dual<T>)
    return T(from_decimal<decltype(T::val)>(text));
  else {
    const std::string s = !text.empty() && text[0] == '+' ? text.substr(1) : text;
    if (s == "inf") return infinity<T>();
    if (s == "-inf") return -infinity<T>();
    if (s == "nan") return std::numeric_limits<T>::quiet_NaN();
    if constexpr (is_16_bit<T>)
      return round_16_bit<T>(s);
    else if constexpr (std::same_as<T, float>)
      return std::strtof(s.c_str(), nullptr);
    else if constexpr (std::same_as<T, double>)
      return std::strtod(s.c_str(), nullptr);
    else if constexpr (std::same_as<T, long double>)
      return std::strtold(s.c_str(), nullptr);
    else
      return T(s); // Boost.Multiprecision: correctly rounded from the decimal string
  }
}

/// pi made in T, to T's precision (MPFR: at the current default digits): 4 atan(1).
template <Real T> T pi() {
  using std::atan;
  if constexpr (is_dual<T>)
    return T(pi<decltype(T::val)>()); // a constant: derivative 0
  else
    return T(4) * T(atan(T(1))); // T(): atan of a 16-bit type is float's, rounded here
}

/// x as the nearest double (for numbers in reports; NaN stays NaN, overflow gives an infinity).
template <Real T> double to_double(const T& x) {
  if constexpr (is_16_bit<T>)
    return static_cast<double>(static_cast<float>(x));
  else if constexpr (std::is_arithmetic_v<T>)
    return static_cast<double>(x);
  else
    return x.template convert_to<double>();
}

/// x written with `digits` significant digits (all of T's digits when 0).
template <Real T> std::string to_string(const T& x, int digits = 0) {
  std::ostringstream out;
  out.precision(digits > 0 ? digits : digits10<T>());
  out << x;
  return out.str();
}

} // namespace tapegrad
