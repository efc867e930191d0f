// Attention forward + backward, D = d = r = 64, double, one thread: the tape against the hand-written Eigen
// code (bench/hand_attention.hpp), at T = 2, 16, 64, 512, 1024.
#include "hand_attention.hpp"

#include <tapegrad/graph/models/attention.hpp>
#include <tapegrad/graph/verification/attention_check.hpp>

#include <benchmark/benchmark.h>

#include <random>

using namespace tapegrad;

namespace {

/// Floating-point operations of one forward + backward (D = d = r = 64): 9 products of T x 64 by 64 x 64
/// (Q, K, V; dWq, dWk, dWv; the three terms of dX) and 6 of T x T size (S, O; dA, dV, dQ, dK), 2 flops per
/// multiply-add; the softmax and elementwise work is not counted.
benchmark::Counter gflops(const benchmark::State& state) {
  const double T = static_cast<double>(state.range(0));
  return benchmark::Counter(9 * 2 * T * 64 * 64 + 6 * 2 * T * T * 64, benchmark::Counter::kIsIterationInvariantRate,
                            benchmark::Counter::kIs1000);
}

AttentionInputs<double> inputs(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  return random_attention<double>(42, n, 64, 64, 64); // seed 42
}

/// The tape's forward + backward with `options`. One tape for every iteration, as a training loop uses it: the
/// inputs are recorded once, and each iteration rewinds to them and records the graph again into the buffers
/// of the last one.
void run_tape(benchmark::State& state, const TapeOptions& options) {
  const AttentionInputs<double> in = inputs(state);
  Tape<double> tape(options);
  const std::vector<Var<double>> vars{tape.input(in.X, "X"), tape.input(in.Wq, "Wq"), tape.input(in.Wk, "Wk"),
                                      tape.input(in.Wv, "Wv"), tape.input(in.G, "G")};
  const auto step = [&] {
    tape.rewind(vars.size());
    tape.backward(FullAttentionGraph{}(tape, vars));
  };
  // Warm, as the hand-written code is: two sweeps before the clock starts give every value, adjoint and
  // gradient its buffer (a sweep's adjoints become the gradients, and the next sweep's adjoints take the
  // buffers of the last gradients), so the timed iterations allocate nothing, as in a training loop.
  step();
  step();
  for (auto _ : state) {
    step();
    benchmark::DoNotOptimize(vars[0].grad().data());
  }
  state.counters["T"] = static_cast<double>(state.range(0));
  state.counters["GFLOPS"] = gflops(state);
}

void BM_TapeAttention(benchmark::State& state) { run_tape(state, {}); }

// The same with the tape in anomaly mode (every value and gradient scanned for NaN and infinities): what the
// mode costs when on; BM_TapeAttention is the cost when off.
void BM_TapeAttentionAnomaly(benchmark::State& state) { run_tape(state, TapeOptions{.detect_anomaly = true}); }

void run_hand(benchmark::State& state, bench::Work work) {
  const AttentionInputs<double> in = inputs(state);
  bench::HandAttention h;
  h.run(in.X, in.Wq, in.Wk, in.Wv, in.G); // every matrix shaped and filled
  for (auto _ : state) {
    h.run(in.X, in.Wq, in.Wk, in.Wv, in.G, work);
    benchmark::DoNotOptimize(h.dX.data());
  }
  state.counters["T"] = static_cast<double>(state.range(0));
  state.counters["GFLOPS"] = gflops(state);
}

void BM_HandAttention(benchmark::State& state) { run_hand(state, bench::Work::all); }

// The hand-written code's 15 products alone, same shapes and kernels: the ceiling of the GFLOPS counter of
// either attention benchmark (no softmax, no elementwise work at all).
void BM_AttentionProducts(benchmark::State& state) { run_hand(state, bench::Work::products_only); }

// The yardstick for the products' speed: one 512 x 512 x 512 double GEMM (C += A B, no zeroing), through
// Eigen, which hands it to OpenBLAS's dgemm when the build uses BLAS (label "OpenBLAS dgemm").
void BM_Gemm512(benchmark::State& state) {
  std::mt19937_64 rng(7); // seed 7
  std::uniform_real_distribution<double> u(-1, 1);
  const Matrix<double> a = Matrix<double>::NullaryExpr(512, 512, [&] { return u(rng); });
  const Matrix<double> b = Matrix<double>::NullaryExpr(512, 512, [&] { return u(rng); });
  Matrix<double> c = Matrix<double>::Zero(512, 512);
  for (auto _ : state) {
    c.noalias() += a * b;
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * 512 * 512 * 512, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
#ifdef EIGEN_USE_BLAS
  state.SetLabel("OpenBLAS dgemm");
#else
  state.SetLabel("Eigen GEMM");
#endif
}

} // namespace

BENCHMARK(BM_Gemm512)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttentionProducts)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HandAttention)->Arg(2)->Arg(16)->Arg(64)->Arg(512)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TapeAttentionAnomaly)->Arg(2)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TapeAttention)->Arg(2)->Arg(16)->Arg(64)->Arg(512)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
