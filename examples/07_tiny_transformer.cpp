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

#include "arguments.hpp"

#include <report.hpp> // app/: the text report of `tapegrad check`

#include <cmath>
#include <iomanip>
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
    const int h = shape.half;
    Var<U> total;
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const std::vector<long>& s = batch[b];
      Matrix<U> onehot = Matrix<U>::Zero(shape.length(), shape.vocab);
      for (std::size_t i = 0; i < s.size(); ++i)
        onehot(static_cast<Eigen::Index>(i), s[i]) = U(1);
      const Var<U> X = add(matmul(tape.input(onehot, "tokens"), p[0], "tokens E"), p[1], "X");
      const Var<U> logits = matmul(transformer_block(X, block, shape.heads), p[14], "logits");
      const std::vector<long> next(s.begin() + h, s.end()); // rows h-1 .. 2h-2 predict positions h .. 2h-1
      const Var<U> loss = cross_entropy(slice_rows(logits, h - 1, h, "predicting"), next, "loss");
      total = b == 0 ? loss : add(total, loss);
    }
    return scale(total, U(1) / U(static_cast<long>(batch.size())), "mean loss");
  }
};

std::vector<std::vector<long>> draw_batch(int size, std::mt19937_64& rng) {
  std::vector<std::vector<long>> batch;
  for (int b = 0; b < size; ++b)
    batch.push_back(reversal_sequence(shape, rng));
  return batch;
}

} // namespace

int main(int argc, char** argv) {
  int steps = 300;
  double max_loss = 0.05;
  std::uint64_t seed = 1;
  bool check = true;
  const std::string usage = "usage: 07_tiny_transformer [--steps N] [--max-loss X] [--seed S] [--no-check]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--steps" && has_value && examples::parse(argv[i + 1], steps))
      ++i;
    else if (a == "--max-loss" && has_value && examples::parse(argv[i + 1], max_loss))
      ++i;
    else if (a == "--seed" && has_value && examples::parse(argv[i + 1], seed))
      ++i;
    else if (a == "--no-check")
      check = false;
    else {
      std::cerr << usage;
      return 2;
    }
  }
  if (steps < 1) {
    std::cerr << "07_tiny_transformer: --steps must be at least 1\n" << usage;
    return 2;
  }
  const int batch_size = 16;
  Parameters<double> params = block_model_parameters(seed);
  std::mt19937_64 data(seed + 1000);
  std::cout << "reversal task: " << shape.half << " symbols over a vocabulary of " << shape.vocab
            << ", then the same reversed; one pre-norm transformer block, width " << shape.width << ", " << shape.heads
            << " causal heads, MLP width " << mlp_width << " (GELU)\n"
            << "seed " << seed << " (parameters), " << seed + 1000 << " (data); batch " << batch_size << ", Adam\n";

  if (check) {
    std::mt19937_64 check_rng(seed + 2000);
    const BlockModelLoss first{draw_batch(1, check_rng)};
    CheckOptions opt;
    opt.seed = seed;
    opt.reference_digits = 50;
    CheckReport report;
    report.append(check_gradient<double, mpfr_real>(first, params.values(), params.names(), opt),
                  "transformer block model, first step");
    std::cout << "first step, checked on one sequence:\n";
    app::print_report(std::cout, report, false);
    if (!report.passed()) {
      std::cout << "the gradients do not check out: not training\n";
      return 1;
    }
  }

  Adam<double> adam(params, {.learning_rate = 0.02});
  double loss = 0;
  for (int step = 1; step <= steps; ++step) {
    Tape<double> tape;
    const std::vector<Var<double>> vars = params.record(tape);
    const Var<double> L = BlockModelLoss{draw_batch(batch_size, data)}(tape, vars);
    tape.backward(L);
    adam.step(params, vars);
    loss = L.value()(0, 0);
    if (step == 1 || step % 25 == 0 || step == steps)
      std::cout << "step " << std::setw(4) << step << "  loss " << std::fixed << std::setprecision(5) << loss
                << std::defaultfloat << "\n";
  }

  // Held out: 200 sequences never seen, every reversed symbol predicted by argmax.
  std::mt19937_64 test_rng(seed + 3000);
  long right = 0, total = 0;
  for (const std::vector<long>& s : draw_batch(200, test_rng)) {
    Tape<double> tape;
    BlockModelLoss{{s}}(tape, params.record(tape));
    const Matrix<double>& logits = tape.find("predicting").value();
    for (Eigen::Index i = 0; i < logits.rows(); ++i, ++total) {
      Eigen::Index best = 0;
      logits.row(i).maxCoeff(&best);
      right += best == s[static_cast<std::size_t>(shape.half + i)];
    }
  }
  std::cout << "held-out sequences: " << right << " of " << total << " reversed symbols right\n"
            << "final training loss " << loss << (loss <= max_loss ? " <= " : " > ") << max_loss << "\n";
  return loss <= max_loss ? 0 : 1;
}
