// The pre-norm transformer block (graph/models/transformer_block.hpp) forward + backward, double, one thread:
// D = 256, 4 heads of 64, MLP width 4 D, at T = 16, 128, 512 positions (bench/compare sets these rows beside the
// same block in PyTorch, bench/torch_transformer_block.py), and a tiny T = 2, D = 64 for the ctest. gelu's erfc
// and exp and the softmax's exp use the vector kernels of autodiff/vector_math.hpp (layer_norm runs in long
// double); bench/elementwise.cpp measures the kernels alone.
#include <tapegrad/graph/models/transformer_block.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

using namespace tapegrad;

namespace {

constexpr int heads = 4;

/// X and the parameters in the order of transformer_block_names(), entries drawn with `seed`: weights uniform
/// in +-1/sqrt(fan in), gains near 1, biases and X in +-1. The MLP is 4 D wide.
std::vector<Matrix<double>> block_inputs(int T, int D, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto draw = [&](int rows, int cols, double centre, double half_width) {
    std::uniform_real_distribution<double> u(centre - half_width, centre + half_width);
    return Matrix<double>(Matrix<double>::NullaryExpr(rows, cols, [&] { return u(rng); }));
  };
  const std::vector<std::pair<int, int>> shapes = transformer_block_shapes(T, D, 4 * D);
  std::vector<Matrix<double>> in;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const char kind = k == 0 ? 'X' : transformer_block_names()[k][0];
    const auto [rows, cols] = shapes[k];
    if (kind == 'X')
      in.push_back(draw(rows, cols, 0, 1));
    else if (kind == 'g')
      in.push_back(draw(rows, cols, 1, 0.1));
    else if (kind == 'c' || kind == 'b')
      in.push_back(draw(rows, cols, 0, 0.1));
    else
      in.push_back(draw(rows, cols, 0, 1 / std::sqrt(double(rows))));
  }
  return in;
}

/// The block's GEMM flops, forward + backward, counting every T x T product whole (the causal mask does not
/// shorten them): per matmul of m x k by k x n, 2 m k n forward and twice that backward (both operands'
/// gradients). Forward: Q, K, V and Wo 4 (2 T D^2), the heads' S and O 2 (2 T^2 D) over all heads, the MLP 2
/// (2 T D 4D).
double block_gemm_flops(double T, double D) {
  return 3 * (4 * 2 * T * D * D + 2 * 2 * T * T * D + 2 * 2 * T * D * 4 * D);
}

/// One tape for every iteration, as a training loop uses it: the inputs are recorded once, and each iteration
/// rewinds to them and records the block again into the buffers of the last one.
void BM_TransformerBlock(benchmark::State& state) {
  const int T = static_cast<int>(state.range(0)), D = static_cast<int>(state.range(1));
  const std::vector<Matrix<double>> in = block_inputs(T, D, 42);     // seed 42
  const TransformerBlockLoss loss{heads, block_inputs(T, D, 43)[0]}; // the probe G: T x D, seed 43
  Tape<double> tape;
  std::vector<Var<double>> vars;
  for (std::size_t k = 0; k < in.size(); ++k)
    vars.push_back(tape.input(in[k], transformer_block_names()[k]));
  const auto step = [&] {
    tape.rewind(vars.size());
    tape.backward(loss(tape, vars));
  };
  // Two sweeps before the clock starts, as bench/attention.cpp's run_tape: the timed ones allocate nothing.
  step();
  step();
  for (auto _ : state) {
    step();
    benchmark::DoNotOptimize(vars[0].grad().data());
  }
  state.counters["T"] = T;
  state.counters["D"] = D;
  state.counters["nodes"] = static_cast<double>(tape.size());
  state.counters["GFLOPS"] = benchmark::Counter(block_gemm_flops(T, D), benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

} // namespace

BENCHMARK(BM_TransformerBlock)
    ->Args({2, 64})
    ->Args({16, 256})
    ->Args({128, 256})
    ->Args({512, 256})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
