#pragma once
#include "elementwise.hpp"

#include <algorithm>
#include <string_view>

namespace tapegrad {

/// Whether an exact decimal ("2", "-3.0", "1e2", "2.0000000000000000001", as graph files write numbers)
/// spells a whole number. Read from the text, not from its rounding: "2.0000000000000000001" is not whole
/// although it rounds to 2 in double. inf and nan are not whole.
inline bool decimal_is_whole(std::string_view text) {
  std::string digits;
  long point = -1, exponent = 0;
  std::size_t k = 0;
  if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
  for (; k < text.size() && text[k] != 'e' && text[k] != 'E'; ++k) {
    if (text[k] == '.')
      point = static_cast<long>(digits.size());
    else if (text[k] >= '0' && text[k] <= '9')
      digits += text[k];
    else
      return false; // inf, nan
  }
  if (digits.empty()) return false;
  if (k < text.size()) { // the exponent, saturated: beyond +-10^6 the answer no longer changes
    ++k;
    const bool negative = k < text.size() && text[k] == '-';
    if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
    for (; k < text.size(); ++k)
      exponent = std::min(exponent * 10 + (text[k] - '0'), 1000000L);
    if (negative) exponent = -exponent;
  }
  // digits d0 d1 ... with the point after `point` of them, times 10^exponent: whole when every digit that
  // lands after the point is 0
  const long integer_digits = (point < 0 ? static_cast<long>(digits.size()) : point) + exponent;
  for (long d = std::max(integer_digits, 0L); d < static_cast<long>(digits.size()); ++d)
    if (digits[static_cast<std::size_t>(d)] != '0') return false;
  return true;
}

/// pow(a, p): elementwise power with a constant exponent p ("exponent" in graph files).   a, result: m x n
///   forward  result[i][j] = a[i][j]^p                   (0^0 = 1)
///   VJP      da[i][j] += grad[i][j] p a[i][j]^(p - 1)   (0 when p = 0)
/// Domain: with p a whole number (read from its exact decimal text in graph files: "2.0000000000000000001" is
/// not), any entry, except 0 when p < 0; otherwise entries > 0. Outside it: a DomainError naming the node and
/// the entry.
struct PowOp {
  static constexpr ParamSpec params[] = {
      {"exponent", ParamType::number, {}, "the constant p (an exact decimal; whole numbers allow negative entries)"}};
  static constexpr OpInfo info{.name = "pow",
                               .call = "pow(a, exponent)",
                               .node = "Pow",
                               .file = "pow.hpp",
                               .params = params,
                               .formula = "result[i][j] = a[i][j]^exponent, 0^0 = 1",
                               .shapes = elementwise_shapes,
                               .dual = "pow"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return same_shape_as_first(in);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> PowOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  common_tape(info, in);
  const T e = p.number("exponent");
  const auto plain = [](const T& x) { return plain_value(x); }; // the exponent as a plain number, for its text
  const std::string text =
      p.number_from_text("exponent") ? p.number_text("exponent") : to_decimal(plain(e)); // the value made in C++
  using std::floor;
  // whole, and finite in T (a text such as "1e400" is whole but rounds to inf in double: it counts as inf does)
  const bool whole =
      is_finite(plain(e)) && (p.number_from_text("exponent") ? decimal_is_whole(text) : floor(plain(e)) == plain(e));
  const Domain d = !whole ? Domain::positive : e < T(0) ? Domain::nonzero : Domain::any;
  require_domain(info, in, 0, label, d, "with exponent " + text + (whole ? "" : " (not a whole number)"));
  return record_unary<PowOp>(
      in, p, std::move(label),
      [e](const T& x) {
        using std::pow;
        return pow(x, e);
      },
      [e](const T& x, const T&) {
        using std::pow;
        return e == T(0) ? T(0) : e * pow(x, e - T(1));
      });
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, PowOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> pow(const Var<T>& a, const T& exponent, std::string label = {}) {
  return PowOp::apply<T>(operands(a), Params<T>().number("exponent", exponent), std::move(label));
}

} // namespace tapegrad
