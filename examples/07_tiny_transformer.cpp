// One pre-norm transformer block (graph/models/transformer_block.hpp) learns the reversal task of
// 05_tiny_training: a sequence a_0 .. a_(h-1) followed by the same reversed, each row predicting the next token.
//
//   X = onehot(tokens) E + P                    token embedding E, learnable absolute positions P
//   Out = transformer_block(X)                  layer_norm (gain, bias), 2-head causal attention with Wo,
//                                               residual, layer_norm, GELU MLP with biases, residual
//   logits = Out Wu,   loss = cross_entropy(logits[rows h-1 .. 2h-2], the reversed half)
//
// Before training, the first step's gradients are verified with the checker on one sequence: every coordinate
// of every parameter against 50-digit finite differences, plus dual numbers and every node's VJP, summarised as
// `tapegrad check` prints it. Then Adam trains on fresh seeded batches, and the model is tested on sequences
// it has never seen. Exits 1 if the check fails or the final loss is above --max-loss.
//
//   07_tiny_transformer [--steps N] [--max-loss X] [--seed S] [--no-check]
#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/graph/models/tiny_model.hpp>
#include <tapegrad/graph/models/transformer_block.hpp>

#include "training.hpp"

#include <cmath>
#include <iostream>
#include <random>
#include <string>

using namespace tapegrad;

namespace {

const TinyModelShape shape;   // the task of 05: 4 symbols of 8, then reversed; width 8, 2 heads
constexpr int mlp_width = 16; // the block's MLP: 2 D

/// The parameters: E, P, the block's (transformer_block_names() after X) and Wu. Matrices uniform in
/// +-1/sqrt(fan in), gains 1, biases 0, drawn from the seed.
Parameters<double> block_model_parameters(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int rows, int cols, int fan_in) {
    std::uniform_real_distribution<double> u(-1 / std::sqrt(double(fan_in)), 1 / std::sqrt(double(fan_in)));
    return Matrix<double>(Matrix<double>::NullaryExpr(rows, cols, [&] { return u(rng); }));
  };
  const int V = shape.vocab, L = shape.length(), D = shape.width, F = mlp_width;
  Parameters<double> p;
  p.add("E", uniform(V, D, 1));
  p.add("P", uniform(L, D, 1));
  const std::vector<std::pair<int, int>> shapes = transformer_block_shapes(L, D, F);
  for (std::size_t k = 1; k < shapes.size(); ++k) { // after X
    const std::string& name = transformer_block_names()[k];
    const auto [rows, cols] = shapes[k];
    const bool gain = name[0] == 'g', bias = name[0] == 'c' || name[0] == 'b';
    p.add(name, gain   ? Matrix<double>::Ones(rows, cols)
                : bias ? Matrix<double>::Zero(rows, cols)
                       : uniform(rows, cols, rows));
  }
  p.add("Wu", uniform(D, V, D));
  return p;
}

/// The mean loss over a batch of sequences, a graph of the parameters in the order of block_model_parameters.
struct BlockModelLoss {
  std::vector<std::vector<long>> batch;
  template <Real U> Var<U> operator()(Tape<U>& tape, const std::vector<Var<U>>& p) const {
    const TransformerBlockParams<U> block = transformer_block_params(std::span<const Var<U>>(p).subspan(2, 12));
    return reversal_loss(tape, shape, batch, [&](const Var<U>& tokens) {
      const Var<U> X = add(matmul(tokens, p[0], "tokens E"), p[1], "X");
      return matmul(transformer_block(X, block, shape.heads), p[14], "logits");
    });
  }
};

} // namespace

int main(int argc, char** argv) {
  examples::TrainingOptions o{.steps = 300, .max_loss = 0.05};
  if (!examples::parse_options(argc, argv, o,
                               "usage: 07_tiny_transformer [--steps N] [--max-loss X] [--seed S] [--no-check]\n"))
    return 2;
  const int batch_size = 16;
  Parameters<double> params = block_model_parameters(o.seed);
  std::mt19937_64 data(o.seed + 1000);
  std::cout << "reversal task: " << shape.half << " symbols over a vocabulary of " << shape.vocab
            << ", then the same reversed; one pre-norm transformer block, width " << shape.width << ", " << shape.heads
            << " causal heads, MLP width " << mlp_width << " (GELU)\n"
            << "seed " << o.seed << " (parameters), " << o.seed + 1000 << " (data); batch " << batch_size << ", Adam\n";

  std::mt19937_64 check_rng(o.seed + 2000);
  if (o.check &&
      !examples::check_first_step(BlockModelLoss{reversal_batch(shape, 1, check_rng)}, params.values(), params.names(),
                                  o.seed, "transformer block model, first step on one sequence"))
    return 1;

  Adam<double> adam(params, {.learning_rate = 0.02});
  const double loss = examples::train(params, adam, o.steps, 25,
                                      [&](int) { return BlockModelLoss{reversal_batch(shape, batch_size, data)}; });

  // Held out: 200 sequences never seen, every reversed symbol predicted by argmax.
  std::mt19937_64 test_rng(o.seed + 3000);
  long right = 0, total = 0;
  for (const std::vector<long>& s : reversal_batch(shape, 200, test_rng)) {
    Tape<double> tape;
    BlockModelLoss{{s}}(tape, params.record(tape));
    const std::span<const long> reversed(s.begin() + shape.half, s.end()); // what the predicting rows predict
    right += examples::argmax_right(tape.find("predicting").value(), reversed);
    total += static_cast<long>(reversed.size());
  }
  std::cout << "held-out sequences: " << right << " of " << total << " reversed symbols right\n";
  return examples::verdict(loss, o.max_loss);
}
