// 64 x 64 matrix products in every scalar type: Eigen's GEMM against plain loops (i-k-j order over row-major
// storage), to pick the kernel ops/matmul.hpp uses for each type. Items processed = multiply-adds. And wide
// double products (few rows, many columns) as they are against made transposed: transposed_is_faster's rule.
#include <tapegrad/ops/matmul.hpp>

#include <benchmark/benchmark.h>

using namespace tapegrad;

namespace {

template <class T> Matrix<T> filled(int n, int salt) {
  Matrix<T> m(n, n);
  for (Eigen::Index i = 0; i < m.size(); ++i)
    m.data()[i] = T(static_cast<long>((i * 7 + salt) % 17) - 8) / T(8);
  return m;
}

template <class T> void BM_MatMulEigen(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Matrix<T> a = filled<T>(n, 1), b = filled<T>(n, 2);
  Matrix<T> c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  state.SetItemsProcessed(state.iterations() * n * n * n);
}

template <class T> void BM_MatMulLoops(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Matrix<T> a = filled<T>(n, 1), b = filled<T>(n, 2);
  for (auto _ : state) {
    Matrix<T> c = matmul_loops(a, b);
    benchmark::DoNotOptimize(c.data());
  }
  state.SetItemsProcessed(state.iterations() * n * n * n);
}

template <class T> void BM_MatMulChosen(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Matrix<T> a = filled<T>(n, 1), b = filled<T>(n, 2);
  for (auto _ : state) {
    Matrix<T> c = product(a, b);
    benchmark::DoNotOptimize(c.data());
  }
  state.SetItemsProcessed(state.iterations() * n * n * n);
}

/// c (rows x cols) = a^T b with a: inner x rows, b: inner x cols, double: attention's d(loss)/d(K^T) at
/// 64 x 512 x 512. `transposed` false: product() as Eigen hands it to BLAS; true: product() with a work
/// matrix, which makes c^T and transposes it where transposed_is_faster says so (the label says which).
void BM_WideProduct(benchmark::State& state, bool transposed) {
  const Eigen::Index rows = state.range(0), cols = state.range(1), inner = state.range(2);
  const Matrix<double> a = Matrix<double>::Random(inner, rows), b = Matrix<double>::Random(inner, cols);
  Matrix<double> c(rows, cols), work;
  for (auto _ : state) {
    if (transposed)
      product(c, a, Transposed::yes, b, Transposed::no, work);
    else
      product(c, a, Transposed::yes, b, Transposed::no);
    benchmark::DoNotOptimize(c.data());
  }
  state.SetLabel(transposed && transposed_is_faster<double>(rows, cols, inner) ? "made transposed" : "as it is");
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * static_cast<double>(rows * cols * inner), benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

struct Mpfr50 {
  Mpfr50() { mpfr_real::default_precision(50); }
} mpfr50;

} // namespace

#define TAPEGRAD_MATMUL_BENCH(T)                                                                                       \
  BENCHMARK_TEMPLATE(BM_MatMulEigen, T)->Arg(64)->Unit(benchmark::kMicrosecond);                                       \
  BENCHMARK_TEMPLATE(BM_MatMulLoops, T)->Arg(64)->Unit(benchmark::kMicrosecond);                                       \
  BENCHMARK_TEMPLATE(BM_MatMulChosen, T)->Arg(64)->Unit(benchmark::kMicrosecond)

// rows x cols x inner: attention's d/dK^T at T = 512 and 1024, the block's d/dX at T = 16, and shapes the
// rule leaves alone (128 rows; inner 64)
#define TAPEGRAD_WIDE_BENCH(name, transposed)                                                                          \
  BENCHMARK_CAPTURE(BM_WideProduct, name, transposed)                                                                  \
      ->Args({64, 512, 512})                                                                                           \
      ->Args({64, 1024, 1024})                                                                                         \
      ->Args({16, 256, 256})                                                                                           \
      ->Args({128, 512, 512})                                                                                          \
      ->Args({64, 512, 64})                                                                                            \
      ->Unit(benchmark::kMicrosecond)
TAPEGRAD_WIDE_BENCH(direct, false);
TAPEGRAD_WIDE_BENCH(chosen, true);

TAPEGRAD_MATMUL_BENCH(double);
TAPEGRAD_MATMUL_BENCH(long double);
TAPEGRAD_MATMUL_BENCH(float128);
TAPEGRAD_MATMUL_BENCH(float50);
TAPEGRAD_MATMUL_BENCH(float100);
TAPEGRAD_MATMUL_BENCH(mpfr_real);
BENCHMARK_MAIN();
