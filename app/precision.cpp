#include "precision.hpp"

#include <algorithm>
#include <cctype>

namespace tapegrad::app {

bool Precision::is_digits() const {
  const std::string_view spelling = scalar_types[row].spelling;
  return spelling.empty() ||
         std::all_of(spelling.begin(), spelling.end(), [](unsigned char c) { return std::isdigit(c); });
}

Precision parse_precision(const std::string& option, const std::string& text) {
  std::size_t row = 0, mpfr_row = 0;
#define TAPEGRAD_SCALAR(type, spelling, name)                                                                          \
  if (std::string_view(spelling).empty())                                                                              \
    mpfr_row = row;                                                                                                    \
  else if (text == spelling)                                                                                           \
    return {row, static_cast<unsigned>(digits10<type>()), text};                                                       \
  ++row;
#include <tapegrad/autodiff/scalar_types.hpp>
#undef TAPEGRAD_SCALAR
  const bool number = !text.empty() && text.size() <= 5 &&
                      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  if (number) {
    const unsigned long digits = std::stoul(text);
    if (digits >= 2 && digits <= 10000) return {mpfr_row, static_cast<unsigned>(digits), text};
  }
  throw UsageError(option + ": '" + text + "' is not a precision; use " + precision_spellings() +
                   ", or a number of decimal digits from 2 to 10000 for MPFR (e.g. 200)");
}

unsigned default_reference_digits(const Precision& engine) { return std::max(50u, 2 * engine.digits); }

} // namespace tapegrad::app
#include "engine.hpp"

#include <sys/resource.h>

std::size_t tapegrad::app::peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::size_t>(usage.ru_maxrss) * 1024; // Linux reports KiB
}
