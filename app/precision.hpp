#pragma once
// Precision names on the command line -> scalar types: the one run-time dispatch of the program.
//   float, double, long-double, float128, 50 (cpp_bin_float<50>), 100 (cpp_bin_float<100>), and any other
//   number N: MPFR with N significant decimal digits.

#include <tapegrad/autodiff/error.hpp>
#include <tapegrad/autodiff/real.hpp>

#include <optional>
#include <string>
#include <type_traits>

namespace tapegrad::app {

struct Precision {
  enum class Kind { float_, double_, long_double, float128, float50, float100, mpfr } kind;
  unsigned digits; ///< significant decimal digits
  std::string name;
};

/// Parses a precision name; throws UsageError naming the option and the accepted spellings.
Precision parse_precision(const std::string& option, const std::string& text);

/// The precision to use as a reference for an engine precision when none is given: at least 50 digits and
/// at least twice the engine's.
unsigned default_reference_digits(const Precision& engine);

/// Calls f(std::type_identity<T>{}) with the T that p names (MPFR's digits set for the call).
template <class F> auto with_precision(const Precision& p, F&& f) {
  switch (p.kind) {
  case Precision::Kind::float_:
    return f(std::type_identity<float>{});
  case Precision::Kind::double_:
    return f(std::type_identity<double>{});
  case Precision::Kind::long_double:
    return f(std::type_identity<long double>{});
  case Precision::Kind::float128:
    return f(std::type_identity<float128>{});
  case Precision::Kind::float50:
    return f(std::type_identity<float50>{});
  case Precision::Kind::float100:
    return f(std::type_identity<float100>{});
  case Precision::Kind::mpfr:
    break;
  }
  MpfrDigits scope(p.digits);
  return f(std::type_identity<mpfr_real>{});
}

} // namespace tapegrad::app
