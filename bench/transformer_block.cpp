// The pre-norm transformer block (graph/models/transformer_block.hpp) forward + backward, double, one thread:
// D = 64, 4 heads of 16, MLP width 256, T = 16, 64, 256 positions. Its elementwise work (layer_norm, gelu,
// softmax) uses the vector kernels of autodiff/vector_math.hpp; bench/elementwise.cpp measures those alone.
#include <tapegrad/graph/models/transformer_block.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

using namespace tapegrad;

namespace {

constexpr int D = 64, heads = 4, width = 256;

/// X and the parameters in the order of transformer_block_names(), entries drawn with `seed`: weights uniform
/// in +-1/sqrt(fan in), gains near 1, biases and X in +-1.
std::vector<Matrix<double>> block_inputs(int T, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto draw = [&](int rows, int cols, double centre, double half_width) {
    std::uniform_real_distribution<double> u(centre - half_width, centre + half_width);
    return Matrix<double>(Matrix<double>::NullaryExpr(rows, cols, [&] { return u(rng); }));
  };
  const double w = 1 / std::sqrt(double(D)), w2 = 1 / std::sqrt(double(width));
  return {draw(T, D, 0, 1),       draw(1, D, 1, 0.1),    draw(1, D, 0, 0.1), draw(D, D, 0, w),   draw(D, D, 0, w),
          draw(D, D, 0, w),       draw(D, D, 0, w),      draw(1, D, 1, 0.1), draw(1, D, 0, 0.1), draw(D, width, 0, w),
          draw(1, width, 0, 0.1), draw(width, D, 0, w2), draw(1, D, 0, 0.1)};
}

/// One tape for every iteration, as a training loop uses it: the inputs are recorded once, and each iteration
/// rewinds to them and records the block again into the buffers of the last one.
void BM_TransformerBlock(benchmark::State& state) {
  const int T = static_cast<int>(state.range(0));
  const std::vector<Matrix<double>> in = block_inputs(T, 42);     // seed 42
  const TransformerBlockLoss loss{heads, block_inputs(T, 43)[0]}; // the probe G: T x D, seed 43
  Tape<double> tape;
  std::vector<Var<double>> vars;
  for (std::size_t k = 0; k < in.size(); ++k)
    vars.push_back(tape.input(in[k], transformer_block_names()[k]));
  for (auto _ : state) {
    tape.rewind(vars.size());
    tape.backward(loss(tape, vars));
    benchmark::DoNotOptimize(vars[0].grad().data());
  }
  state.counters["T"] = T;
  state.counters["nodes"] = static_cast<double>(tape.size());
}

} // namespace

BENCHMARK(BM_TransformerBlock)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
