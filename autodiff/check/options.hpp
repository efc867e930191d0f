#pragma once
// The options of a whole check, and its units of work for sharding.

#include "../tape.hpp"
#include "report.hpp"

#include <cstdint>
#include <vector>

namespace tapegrad {

struct CheckOptions {
  std::vector<std::size_t> wrt;  ///< inputs to check; empty means all (others are held constant)
  bool directional = false;      ///< random projections instead of every coordinate (weaker)
  int directions = 3;            ///< for directional mode and for dual numbers
  std::uint64_t seed = 1;        ///< for every random draw; printed in the notes
  unsigned reference_digits = 0; ///< MPFR digits for the reference when R is mpfr_real (0: as set)
  TapeOptions tape_options;      ///< for the engine's tapes (fault injection in `tapegrad bugs`)
  unsigned threads = 0;          ///< for the finite-difference coordinates; 0: every core
  bool progress = false;         ///< a progress bar on stderr (only if a terminal, only after ~1 s)
  bool strict = false;           ///< a node the per-node check cannot replay is a failure, not a warning
  Shard* shard = nullptr;        ///< when set, only this run's units of work (and they are numbered)
};

/// Runs `unit` if it is this run's share (always without a shard), tagging what it adds to `report` with
/// the unit's number.
template <class Unit> void shard_unit(const CheckOptions& opt, CheckReport& report, Unit&& unit) {
  const std::size_t task = opt.shard ? opt.shard->next : 0;
  if (opt.shard && !opt.shard->take()) return;
  const std::size_t first = report.checks.size();
  unit();
  for (std::size_t i = first; i < report.checks.size(); ++i)
    report.checks[i].task = task;
}

} // namespace tapegrad
