#pragma once
// Precision names on the command line -> scalar types: the one run-time dispatch of the program, read from
// the scalar table (autodiff/scalar_types.hpp): each row's spelling (float, double, long-double, float128,
// 50, 100), and any other number N of digits for MPFR.

#include <tapegrad/autodiff/error.hpp>
#include <tapegrad/autodiff/real.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tapegrad::app {

struct Precision {
  std::size_t row = 0; ///< the scalar table's row
  unsigned digits = 0; ///< significant decimal digits
  std::string name;    ///< as given
  /// A number of digits (50, 100, or MPFR's), as the reference precision must be.
  bool is_digits() const;
};

/// Parses a precision name; throws UsageError naming the option and the accepted spellings.
Precision parse_precision(const std::string& option, const std::string& text);

/// The precision to use as a reference for an engine precision when none is given: at least 50 digits and
/// at least twice the engine's.
unsigned default_reference_digits(const Precision& engine);

/// Calls f(std::type_identity<T>{}) with the T of p's row (MPFR's digits set for the call).
template <class F> auto with_precision(const Precision& p, F&& f) {
  std::size_t row = 0;
#define TAPEGRAD_SCALAR(type, spelling, name)                                                                          \
  if (p.row == row++) {                                                                                                \
    if constexpr (runtime_precision<type>) {                                                                           \
      MpfrDigits scope(p.digits);                                                                                      \
      return f(std::type_identity<type>{});                                                                            \
    } else {                                                                                                           \
      return f(std::type_identity<type>{});                                                                            \
    }                                                                                                                  \
  }
#include <tapegrad/autodiff/scalar_types.hpp>
#undef TAPEGRAD_SCALAR
  throw std::logic_error("with_precision: row " + std::to_string(p.row) + " is not in the scalar table");
}

} // namespace tapegrad::app
