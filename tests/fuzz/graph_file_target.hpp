#pragma once
// The fuzz target: bytes read as a graph file, then evaluated and differentiated on the tape in double, as
// `tapegrad grad` does. A user's mistake must end in a tapegrad::Error; anything else (another exception,
// a crash, a sanitizer report, a hang) is a bug. Shared by the libFuzzer build (tests/fuzz/fuzz_graph_file.cpp)
// and the corpus replay that every ctest run does (tests/fuzz/replay.cpp).
#include <tapegrad/graph/io/graph_build.hpp>
#include <tapegrad/graph/io/graph_file.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tapegrad::fuzz {

/// One input: parse, record, backward, read every gradient. Returns true when the input was a valid graph.
inline bool run_graph_file(const std::uint8_t* data, std::size_t size) {
  try {
    const GraphSpec spec = parse_graph(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    const FileGraph<double> graph(spec);
    Tape<double> tape;
    const std::vector<Var<double>> in = graph.record_inputs(tape);
    const Var<double> out = graph(tape, in);
    tape.backward(out);
    double total = 0;
    for (const Var<double>& v : in)
      total += v.grad().sum(); // NaN and Inf are fine: they are values, not crashes
    (void)total;
    return true;
  } catch (const Error&) {
    return false; // a clear error is the right answer to a bad file
  }
}

} // namespace tapegrad::fuzz
