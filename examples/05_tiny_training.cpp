// A tiny model trained with checked gradients: one layer of causal multi-head attention with learnable
// positions and an output projection learns to reverse a short sequence (graph/models/tiny_model.hpp).
//
// Before training, the first step's gradients are verified with the checker: every coordinate of every
// parameter against 50-digit finite differences, plus dual numbers and every node's VJP, summarised as
// `tapegrad check` prints it. Then Adam trains on fresh seeded batches, printing the loss every few steps, and
// the model is tested on sequences it has never seen. Exits 1 if the check fails or the final loss is above
// --max-loss.
//
//   05_tiny_training [--steps N] [--max-loss X] [--seed S] [--no-check]
#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/graph/models/tiny_model.hpp>

#include "arguments.hpp"

#include <report.hpp> // app/: the text report of `tapegrad check`

#include <chrono>
#include <iomanip>
#include <iostream>
#include <string>

using namespace tapegrad;

namespace {

std::vector<std::vector<long>> draw_batch(const TinyModelShape& shape, int size, std::mt19937_64& rng) {
  std::vector<std::vector<long>> batch;
  for (int b = 0; b < size; ++b)
    batch.push_back(reversal_sequence(shape, rng));
  return batch;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main(int argc, char** argv) {
  int steps = 300;
  double max_loss = 0.05;
  std::uint64_t seed = 1;
  bool check = true;
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
      std::cerr << "usage: 05_tiny_training [--steps N] [--max-loss X] [--seed S] [--no-check]\n";
      return 2;
    }
  }
  if (steps < 1) {
    std::cerr << "05_tiny_training: --steps must be at least 1\n";
    return 2;
  }
  const TinyModelShape shape;
  const int batch_size = 16;
  Parameters<double> params = tiny_model_parameters<double>(shape, seed);
  std::mt19937_64 data(seed + 1000);
  std::cout << "reversal task: " << shape.half << " symbols over a vocabulary of " << shape.vocab
            << ", then the same reversed; width " << shape.width << ", " << shape.heads << " heads, causal\n"
            << "seed " << seed << " (parameters), " << seed + 1000 << " (data); batch " << batch_size << ", Adam\n";

  if (check) {
    // The first step's gradients, checked on one sequence drawn apart from the training data.
    std::mt19937_64 check_rng(seed + 2000);
    const TinyModelLoss first{shape, draw_batch(shape, 1, check_rng)};
    CheckOptions opt;
    opt.seed = seed;
    opt.reference_digits = 50;
    CheckReport report;
    report.append(check_gradient<double, mpfr_real>(first, params.values(), params.names(), opt),
                  "tiny model, first step");
    std::cout << "first step, checked on one sequence:\n";
    app::print_report(std::cout, report, false);
    if (!report.passed()) {
      std::cout << "the gradients do not check out: not training\n";
      return 1;
    }
  }

  Adam<double> adam(params, {.learning_rate = 0.02});
  const auto t0 = std::chrono::steady_clock::now();
  double loss = 0;
  for (int step = 1; step <= steps; ++step) {
    Tape<double> tape;
    const std::vector<Var<double>> vars = params.record(tape);
    const Var<double> L = TinyModelLoss{shape, draw_batch(shape, batch_size, data)}(tape, vars);
    tape.backward(L);
    adam.step(params, vars);
    loss = L.value()(0, 0);
    if (step == 1 || step % 25 == 0 || step == steps)
      std::cout << "step " << std::setw(4) << step << "  loss " << std::fixed << std::setprecision(5) << loss
                << std::defaultfloat << "\n";
  }
  std::cout << "trained " << steps << " steps in " << std::fixed << std::setprecision(2) << seconds_since(t0) << " s\n"
            << std::defaultfloat;

  // Held out: 200 sequences never seen, every reversed symbol predicted by argmax.
  std::mt19937_64 test_rng(seed + 3000);
  long right = 0, total = 0;
  for (const std::vector<long>& s : draw_batch(shape, 200, test_rng)) {
    Tape<double> tape;
    const std::vector<Var<double>> vars = params.record(tape);
    TinyModelLoss{shape, {s}}(tape, vars);
    const Matrix<double>& logits = tape.find("predicting").value(); // the logits of the rows that predict
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
