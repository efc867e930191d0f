#pragma once
// A compile-time list of ops (ops/ops.hpp names the built-in ones once).

#include "op_info.hpp"

#include <array>
#include <cassert>
#include <cstddef>
#include <string_view>

namespace tapegrad {

/// A list of ops (ops/ops.hpp names the built-in ones once): what graph files, the `tapegrad ops` listing,
/// the random-graph generator and the docs iterate over.
template <class... Ops> struct OpList {
  static constexpr std::size_t size = sizeof...(Ops);
  static constexpr std::array<const OpInfo*, sizeof...(Ops)> infos{&Ops::info...};

  /// f.template operator()<Op>() for every op, in list order.
  template <class F> static void for_each(F&& f) { (f.template operator()<Ops>(), ...); }

  /// f.template operator()<Op>() for the op whose descriptor is `info` (one of the list's).
  template <class R, class F> static R visit(const OpInfo* info, F&& f) {
    R result{};
    [[maybe_unused]] const bool found = ((info == &Ops::info && (result = f.template operator()<Ops>(), true)) || ...);
    assert(found && "visit: the descriptor is one of the list's");
    return result;
  }

  /// The op named `name` in graph files, or null.
  static const OpInfo* find(std::string_view name) {
    for (const OpInfo* info : infos)
      if (info->name == name) return info;
    return nullptr;
  }
};

} // namespace tapegrad
