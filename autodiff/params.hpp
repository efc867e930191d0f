#pragma once
// The values of an op's parameters on one node (Params<T>), by name, in the order of its descriptor's ParamSpecs
// (autodiff/op_info.hpp).

#include "error.hpp"
#include "op_info.hpp"
#include "real.hpp"
#include "tensor.hpp"

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace tapegrad {

/// A choice parameter's string (ParamType::choice).
struct Choice {
  std::string value;
  friend bool operator==(const Choice&, const Choice&) = default;
};

/// A number parameter: its value in T and, when it came from text (a graph file), the exact decimal.
template <Real T> struct Number {
  T value;
  std::string text; ///< empty when made in C++ from a T
};

/// The parameters of one node, by name, in the order of the op's ParamSpecs. Few (an op has at most
/// `capacity`), so they live inline: recording a node with parameters allocates nothing for them.
template <Real T> class Params {
public:
  static constexpr std::size_t capacity = 4;
  /// A number; an integer; indices, dims or sizes; flags; a bool; a choice; an int or bool constant operand (bools
  /// as 1 and 0), shared: copies of the parameters (replays, other precisions) do not copy its entries.
  using Value = std::variant<std::monostate, Number<T>, long, std::vector<long>, std::vector<bool>, bool, Choice,
                             std::shared_ptr<const Tensor<long>>>;

  Params() = default;
  Params& set(std::string_view name, Value value) {
    for (std::size_t k = 0; k < size_; ++k)
      if (names_[k] == name) {
        values_[k] = std::move(value);
        return *this;
      }
    if (size_ == capacity)
      throw UsageError("Params: more than " + std::to_string(capacity) + " parameters (setting '" + std::string(name) +
                       "')");
    names_[size_] = name;
    values_[size_++] = std::move(value);
    return *this;
  }
  Params& number(std::string_view name, const T& x) { return set(name, Number<T>{x, {}}); }

  std::size_t size() const { return size_; }
  std::string_view name(std::size_t k) const { return names_[k]; }
  const Value& value(std::size_t k) const { return values_[k]; }
  bool has(std::string_view name) const { return find(name) != nullptr; }

  const T& number(std::string_view name) const { return get<Number<T>>(name).value; }
  /// A number's exact decimal text, or T's shortest round-trip decimal when it was made in C++.
  std::string number_text(std::string_view name) const {
    const Number<T>& n = get<Number<T>>(name);
    return n.text.empty() ? to_decimal(n.value) : n.text;
  }
  /// Whether a number came from text (a graph file's exact decimal) rather than from a T made in C++.
  bool number_from_text(std::string_view name) const { return !get<Number<T>>(name).text.empty(); }
  long integer(std::string_view name) const { return get<long>(name); }
  const std::vector<long>& indices(std::string_view name) const { return get<std::vector<long>>(name); }
  /// Dims (ParamType::dims: an integer is a list of one) and integer lists (ParamType::integer_list).
  const std::vector<long>& dims(std::string_view name) const { return get<std::vector<long>>(name); }
  const std::vector<long>& integer_list(std::string_view name) const { return get<std::vector<long>>(name); }
  bool boolean(std::string_view name) const { return get<bool>(name); }
  const std::string& choice(std::string_view name) const { return get<Choice>(name).value; }
  /// An int or bool constant operand (ParamType::constant).
  const Tensor<long>& ints(std::string_view name) const { return *ints_shared(name); }
  const std::shared_ptr<const Tensor<long>>& ints_shared(std::string_view name) const {
    return get<std::shared_ptr<const Tensor<long>>>(name);
  }
  /// A bool parameter, or `otherwise` when it is absent.
  bool boolean_or(std::string_view name, bool otherwise) const { return has(name) ? boolean(name) : otherwise; }
  const std::vector<bool>& flags(std::string_view name) const { return get<std::vector<bool>>(name); }

  /// The same parameters in U, numbers converted by `to` (exactly: U holds T).
  template <Real U, class To> Params<U> converted(const To& to) const {
    Params<U> out;
    for (std::size_t k = 0; k < size_; ++k)
      std::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, Number<T>>)
              out.set(names_[k], Number<U>{to(v.value), v.text});
            else
              out.set(names_[k], v);
          },
          values_[k]);
    return out;
  }

private:
  const Value* find(std::string_view name) const {
    for (std::size_t k = 0; k < size_; ++k)
      if (names_[k] == name) return &values_[k];
    return nullptr;
  }
  template <class V> const V& get(std::string_view name) const {
    const Value* v = find(name);
    if (v == nullptr || !std::holds_alternative<V>(*v))
      throw UsageError("parameter '" + std::string(name) + "' is " + (v == nullptr ? "missing" : "of another type") +
                       " (the op's apply() was called with parameters its descriptor does not describe)");
    return std::get<V>(*v);
  }

  std::array<std::string_view, capacity> names_{};
  std::array<Value, capacity> values_{};
  std::size_t size_ = 0;
};

/// Sets parameter `spec` of p to its default (ParamSpec::default_value), made in T from the text as a graph
/// file's reader makes it: a number rounded once from its decimal (keeping the text), an integer parsed.
/// UsageError for a parameter with no default, or of a type whose defaults are not written as text.
template <Real T> Params<T>& set_default(Params<T>& p, const ParamSpec& spec) {
  const std::string text(spec.default_value);
  if (text.empty()) throw UsageError("set_default: parameter '" + std::string(spec.name) + "' has no default");
  if (spec.type == ParamType::number) return p.set(spec.name, Number<T>{from_decimal<T>(text), text});
  if (spec.type == ParamType::integer) return p.set(spec.name, std::stol(text));
  if (spec.type == ParamType::boolean) return p.set(spec.name, text == "true");
  if (spec.type == ParamType::choice) return p.set(spec.name, Choice{text});
  throw UsageError("set_default: parameter '" + std::string(spec.name) + "' is a list; lists have no default");
}

} // namespace tapegrad
