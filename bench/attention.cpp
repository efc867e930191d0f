// Attention forward + backward, D = d = r = 64, double, one thread: the tape against the hand-written Eigen
// code (bench/hand_attention.hpp), at T = 2, 16, 64, 512, 1024.
#include "hand_attention.hpp"

#include <tapegrad/graph/attention.hpp>
#include <tapegrad/graph/attention_check.hpp>

#include <benchmark/benchmark.h>

using namespace tapegrad;

namespace {

AttentionInputs<double> inputs(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  return random_attention<double>(42, n, 64, 64, 64); // seed 42
}

void BM_TapeAttention(benchmark::State& state) {
  const AttentionInputs<double> in = inputs(state);
  Tape<double> tape; // one tape, cleared each iteration, as a training loop uses it: its buffers are reused
  for (auto _ : state) {
    tape.clear();
    const AttentionProblem<double> p = record_attention(tape, in);
    tape.backward(p.J);
    benchmark::DoNotOptimize(p.nodes.X.grad().data());
  }
  state.counters["T"] = static_cast<double>(state.range(0));
}

void BM_HandAttention(benchmark::State& state) {
  const AttentionInputs<double> in = inputs(state);
  bench::HandAttention h;
  for (auto _ : state) {
    h.run(in.X, in.Wq, in.Wk, in.Wv, in.G);
    benchmark::DoNotOptimize(h.dX.data());
  }
  state.counters["T"] = static_cast<double>(state.range(0));
}

} // namespace

BENCHMARK(BM_HandAttention)->Arg(2)->Arg(16)->Arg(64)->Arg(512)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TapeAttention)->Arg(2)->Arg(16)->Arg(64)->Arg(512)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
