#pragma once
// Command-line numbers for the training examples (05-07): the whole argument must be the number, in range, or
// the example prints its usage and exits 2 (std::atoi would read "1x" as 1 and "abc" as 0).
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>

namespace examples {

/// The number `text` spells, all of it, or nothing.
template <class N> std::optional<N> number(std::string_view text) {
  N value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if constexpr (std::is_floating_point_v<N>)
    if (!std::isfinite(value)) return std::nullopt;
  return value;
}

/// Sets `out` to the number `text` spells and returns true; false (out unchanged) when it spells none.
template <class N> bool parse(std::string_view text, N& out) {
  const std::optional<N> v = number<N>(text);
  if (v) out = *v;
  return v.has_value();
}

} // namespace examples
