// libFuzzer entry point (clang -fsanitize=fuzzer,address,undefined); built and run by scripts/fuzz.
#include "graph_file_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tapegrad::fuzz::run_graph_file(data, size);
  return 0;
}
