// The vector kernels of autodiff/vector_math.hpp against the scalar function, double, one thread: each of exp,
// log, tanh and erfc over 4096 entries, /0 the scalar loop and /1 the widest vector kernel of this CPU
// (the label names it), side by side in one run. Each iteration first copies the 4096 arguments back (32 KiB);
// BM_Copy times that copy alone, to be taken off both.
#include <tapegrad/autodiff/vector_math.hpp>

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

using namespace tapegrad;

namespace {

template <VectorFunction F> void BM_Array(benchmark::State& state) {
  const VectorKernel kernel = state.range(0) == 0 ? VectorKernel::scalar : default_kernel<F>();
  std::mt19937_64 rng(5); // seed 5
  // Arguments where each function is neither saturated nor outside its domain.
  std::uniform_real_distribution<double> u(F == VectorFunction::log ? 0.01 : -4, 4);
  std::vector<double> x(4096);
  for (double& v : x)
    v = u(rng);
  std::vector<double> y(x.size());
  for (auto _ : state) {
    y = x;
    apply_in_place<F>(y.data(), y.size(), kernel);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(x.size()));
  state.SetLabel(kernel_name(kernel));
}

/// The copy each BM_Array iteration makes, alone.
void BM_Copy(benchmark::State& state) {
  const std::vector<double> x(4096, 0.5);
  std::vector<double> y(x.size());
  for (auto _ : state) {
    y = x;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
}

} // namespace

BENCHMARK(BM_Copy);
BENCHMARK_TEMPLATE(BM_Array, VectorFunction::exp)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_Array, VectorFunction::log)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_Array, VectorFunction::tanh)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_Array, VectorFunction::erfc)->Arg(0)->Arg(1);
BENCHMARK_MAIN();
