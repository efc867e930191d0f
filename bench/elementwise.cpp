// The vector kernels of autodiff/vector_math.hpp against the scalar function, double, one thread: each of exp,
// log, tanh and erfc over 4096 entries, /0 the scalar loop and /1 the widest vector kernel of this CPU
// (the label names it), side by side in one run. Each iteration first copies the 4096 arguments back (32 KiB);
// BM_Copy times that copy alone, to be taken off both.
// Then two kernels of attention's ops at its shapes (T = 512, d = 64), /0 and /1 side by side: softmax_rows_value
// over 512 x 512, /0 its general path (Eigen's passes and exp_in_place) and /1 softmax_row (one AVX-512 call per
// row); and transpose, /0 Eigen's transposed copy and /1 transpose_tiled, of 512 x 64.
#include <tapegrad/autodiff/vector_math.hpp>
#include <tapegrad/ops/softmax_rows.hpp>
#include <tapegrad/ops/transpose.hpp>

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

/// Attention's scores at T = 512, seed 9: entries in [-4, 4].
Matrix<double> scores(Eigen::Index rows, Eigen::Index cols) {
  std::mt19937_64 rng(9); // seed 9
  std::uniform_real_distribution<double> u(-4, 4);
  return Matrix<double>::NullaryExpr(rows, cols, [&] { return u(rng); });
}

void BM_SoftmaxRows(benchmark::State& state) {
  const SoftmaxPath path = state.range(0) == 0 ? SoftmaxPath::general : SoftmaxPath::fused;
  const bool avx512 = default_kernel<VectorFunction::exp>() == VectorKernel::avx512;
  const Matrix<double> s = scores(512, 512);
  Matrix<double> a(512, 512);
  for (auto _ : state) {
    softmax_rows_value(a, s, path);
    benchmark::DoNotOptimize(a.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * s.size());
  state.SetLabel(path == SoftmaxPath::general ? "general path"
                 : avx512                     ? "softmax_row (AVX-512)"
                                              : "general path (softmax_row needs AVX-512)");
}

void BM_Transpose(benchmark::State& state) {
  const Matrix<double> k = scores(512, 64);
  Matrix<double> kt(64, 512);
  for (auto _ : state) {
    if (state.range(0) == 0)
      kt.noalias() = k.transpose();
    else
      transpose_tiled(kt, k);
    benchmark::DoNotOptimize(kt.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * k.size());
  state.SetLabel(state.range(0) == 0 ? "Eigen" : "transpose_tiled");
}

} // namespace

BENCHMARK(BM_SoftmaxRows)->Arg(0)->Arg(1);
BENCHMARK(BM_Transpose)->Arg(0)->Arg(1);
BENCHMARK(BM_Copy);
BENCHMARK_TEMPLATE(BM_Array, VectorFunction::exp)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_Array, VectorFunction::log)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_Array, VectorFunction::tanh)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_Array, VectorFunction::erfc)->Arg(0)->Arg(1);
BENCHMARK_MAIN();
