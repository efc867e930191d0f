// 64 x 64 matrix products in every scalar type: Eigen's GEMM against plain loops (i-k-j order over row-major
// storage), to pick the kernel ops/matmul.hpp uses for each type. Items processed = multiply-adds.
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

struct Mpfr50 {
  Mpfr50() { mpfr_real::default_precision(50); }
} mpfr50;

} // namespace

#define TAPEGRAD_MATMUL_BENCH(T)                                                                                       \
  BENCHMARK_TEMPLATE(BM_MatMulEigen, T)->Arg(64)->Unit(benchmark::kMicrosecond);                                       \
  BENCHMARK_TEMPLATE(BM_MatMulLoops, T)->Arg(64)->Unit(benchmark::kMicrosecond);                                       \
  BENCHMARK_TEMPLATE(BM_MatMulChosen, T)->Arg(64)->Unit(benchmark::kMicrosecond)

TAPEGRAD_MATMUL_BENCH(double);
TAPEGRAD_MATMUL_BENCH(long double);
TAPEGRAD_MATMUL_BENCH(float128);
TAPEGRAD_MATMUL_BENCH(float50);
TAPEGRAD_MATMUL_BENCH(float100);
TAPEGRAD_MATMUL_BENCH(mpfr_real);
BENCHMARK_MAIN();
