#include "precision.hpp"

#include <algorithm>
#include <cctype>

namespace tapegrad::app {

Precision parse_precision(const std::string& option, const std::string& text) {
  using K = Precision::Kind;
  if (text == "float") return {K::float_, static_cast<unsigned>(digits10<float>()), text};
  if (text == "double") return {K::double_, static_cast<unsigned>(digits10<double>()), text};
  if (text == "long-double") return {K::long_double, static_cast<unsigned>(digits10<long double>()), text};
  if (text == "float128") return {K::float128, static_cast<unsigned>(digits10<float128>()), text};
  if (text == "50") return {K::float50, 50, text};
  if (text == "100") return {K::float100, 100, text};
  const bool number = !text.empty() && text.size() <= 5 &&
                      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  if (number) {
    const unsigned long digits = std::stoul(text);
    if (digits >= 2 && digits <= 10000) return {K::mpfr, static_cast<unsigned>(digits), text};
  }
  throw UsageError(option + ": '" + text +
                   "' is not a precision; use float, double, long-double, float128, 50, 100, or a number of decimal "
                   "digits from 2 to 10000 for MPFR (e.g. 200)");
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
