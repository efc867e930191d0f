// libFuzzer entry point of the structure-aware target (tests/fuzz/graph_ops_target.hpp; clang
// -fsanitize=fuzzer,address,undefined); built and run by scripts/fuzz. Every 2^k inputs, and at exit, it prints
// to stderr what share of the inputs reached backward.
#include "graph_ops_target.hpp"

#include <cstdio>
#include <cstdlib>

namespace {

void print_stats() {
  const tapegrad::fuzz::GraphOpsStats& s = tapegrad::fuzz::graph_ops_stats();
  std::fprintf(stderr,
               "graph_ops: %zu inputs, %zu reached backward (%.1f%%), %zu node-checked; op steps: %zu recorded, %zu "
               "refused with a tapegrad error, %zu too large\n",
               s.inputs, s.reached_backward, s.inputs ? 100.0 * double(s.reached_backward) / double(s.inputs) : 0.0,
               s.node_checked, s.steps_recorded, s.steps_refused, s.steps_too_large);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::atexit(print_stats);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tapegrad::fuzz::run_graph_ops(data, size);
  const std::size_t n = tapegrad::fuzz::graph_ops_stats().inputs;
  if ((n & (n - 1)) == 0 && n >= 1024) print_stats();
  return 0;
}
