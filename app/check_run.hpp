#pragma once
// `tapegrad check` for one engine precision T (one translation unit per T, so they compile in parallel).
#include <tapegrad/autodiff/check.hpp>

#include <array>
#include <cstdint>

namespace tapegrad::app {

struct CheckArgs {
  std::uint64_t seed = 1;
  std::array<int, 4> size{4, 3, 3, 2}; ///< T, D, d, r of the random case
  bool directional = false;
  int directions = 3;
};

/// The chapter's examples 1 and 2 and a seeded random asymmetric case, engine T against an MPFR
/// reference of `reference_digits` digits: three ways, dual numbers, per node, saturation guard.
template <Real T> CheckReport run_check(const CheckArgs& args, unsigned reference_digits);

} // namespace tapegrad::app
