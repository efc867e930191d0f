// The checker: attention (through X, Wq, Wk, Wv) checked against finite differences, every coordinate, on 1
// and on 2 threads (double against 50 digits, 8 x 8 x 8 x 8: 256 coordinates), and the full three-way check
// at 50 digits against 100 for T = D = d = r = 8 and 16.
#include <tapegrad/graph/verification/attention_check.hpp>

#include <benchmark/benchmark.h>

using namespace tapegrad;

namespace {

void BM_FiniteDifferences(benchmark::State& state) {
  const AttentionInputs<double> in = random_attention<double>(3, 8, 8, 8, 8); // seed 3
  CheckOptions opt;
  opt.threads = static_cast<unsigned>(state.range(0));
  opt.reference_digits = 50;
  opt.wrt = {0, 1, 2, 3};
  for (auto _ : state) {
    const CheckReport r = check_gradient<double, mpfr_real>(FullAttentionGraph{}, {in.X, in.Wq, in.Wk, in.Wv, in.G},
                                                            {"X", "Wq", "Wk", "Wv", "G"}, opt);
    if (!r.passed()) state.SkipWithError("the check failed");
  }
  state.counters["threads"] = static_cast<double>(state.range(0));
  state.counters["coordinates"] = 256;
}

void BM_ThreeWay50vs100(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const AttentionInputs<float50> in = random_attention<float50>(5, n, n, n, n); // seed 5
  CheckOptions opt;
  opt.reference_digits = 100;
  opt.threads = static_cast<unsigned>(state.range(1));
  for (auto _ : state) {
    const CheckReport r = check_attention<float50, mpfr_real>("bench", in, opt);
    if (!r.passed()) state.SkipWithError("the check failed");
  }
  state.counters["threads"] = static_cast<double>(state.range(1));
}

} // namespace

BENCHMARK(BM_FiniteDifferences)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2);
BENCHMARK(BM_ThreeWay50vs100)->Args({8, 1})->Args({8, 2})->Args({16, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
