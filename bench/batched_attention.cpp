// The chapter's causal attention on batched multi-head tensors, forward + backward on the tape: Q, K, V and the
// probe G of shape (batch 4, heads 8, T, d 64), double, one thread, at T = 128 and 512 (T = 2 for the ctest). The
// same code in PyTorch is bench/torch_batched_attention.py; bench/compare prints the two side by side.
#include <tapegrad/tapegrad.hpp>

#include <benchmark/benchmark.h>

#include <random>
#include <string_view>

using namespace tapegrad;

namespace {

constexpr Eigen::Index B = 4, H = 8, d = 64;

/// GEMM flops of one forward + backward: per (batch, head), Q K^T and A V forward, and dA, dV, dQ, dK backward, 6
/// products of T x T x d, 2 flops per multiply-add (the softmax, mask and scale not counted).
benchmark::Counter gflops(const benchmark::State& state) {
  const double T = static_cast<double>(state.range(0));
  return benchmark::Counter(static_cast<double>(B * H) * 6 * 2 * T * T * d,
                            benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void BM_BatchedCausalAttention(benchmark::State& state) {
  const Eigen::Index T = state.range(0);
  const Shape shape{B, H, T, d};
  std::mt19937_64 rng(42); // seed 42
  std::normal_distribution<double> normal;
  Tape<double> tape;
  std::vector<Var<double>> in;
  for (const char* name : {"Q", "K", "V", "G"}) {
    Tensor<double> t = Tensor<double>::zeros(shape);
    for (Eigen::Index e = 0; e < t.numel(); ++e)
      t[e] = normal(rng);
    // the probe G is a constant, as in PyTorch (requires_grad=False): no gradient is computed for it
    in.push_back(std::string_view(name) == "G" ? tape.constant(t, name) : tape.input(t, name));
  }
  const double inv_sqrt_d = 1 / std::sqrt(static_cast<double>(d));
  const auto step = [&] {
    tape.rewind(in.size());
    const Var<double> S = scale(matmul(in[0], transpose(in[1], -2, -1)), inv_sqrt_d);
    const Var<double> A = softmax(causal_mask(S), -1);
    tape.backward(sum(hadamard(matmul(A, in[2]), in[3])));
  };
  step(); // warm: every buffer allocated, as in a training loop
  step();
  for (auto _ : state) {
    step();
    benchmark::DoNotOptimize(in[0].grad().data());
  }
  state.counters["T"] = static_cast<double>(T);
  state.counters["GFLOPS"] = gflops(state);
}
BENCHMARK(BM_BatchedCausalAttention)->Arg(2)->Arg(128)->Arg(512)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
