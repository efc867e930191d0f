#pragma once
// What a tape can be asked to do besides recording and sweeping: refuse stale gradients, check every value
// (anomaly mode), inject the overwrite fault, cap a value's size.

#include <cstddef>
#include <limits>

namespace tapegrad {

/// Options of a tape.
struct TapeOptions {
  /// backward() on a tape still holding gradients from an earlier backward (no zero_grad() between) adds to
  /// them, which is rarely meant (stale gradients: everything doubles). By default that logs a warning
  /// (spdlog); with this set it throws UsageError instead.
  bool stale_gradients_are_errors = false;
  /// FAULT INJECTION, for demonstrations only (`tapegrad bugs`): every VJP ASSIGNS into its parents' adjoints
  /// instead of adding, so a value used by several nodes keeps only the last contribution.
  bool inject_overwrite_fault = false;
  /// FAULT INJECTION, the same for one node only (`tapegrad bugs FILE`): the VJPs ASSIGN into the adjoint of the
  /// node at this tape index, add into every other. Off (the default) when no node has this index.
  std::size_t overwrite_fault_node = std::numeric_limits<std::size_t>::max();
  /// Anomaly mode: every value is checked as it is recorded and every gradient as a VJP makes it; the first
  /// NaN or infinity throws AnomalyError naming the node (op, label, shape), its parents and the coordinate.
  /// -inf is allowed only in values of nodes recorded as masks (their -inf is the point). Off by default;
  /// when off it costs one test of this flag per node.
  bool detect_anomaly = false;
  /// The most entries one value may hold (the default, 2^26, is 512 MiB of doubles). A larger value (a
  /// product of long vectors, say) is refused with LimitError before anything is allocated.
  std::size_t max_entries = std::size_t{1} << 26;
};

} // namespace tapegrad
