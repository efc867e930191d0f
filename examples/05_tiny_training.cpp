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

#include "training.hpp"

#include <iostream>
#include <string>

using namespace tapegrad;

int main(int argc, char** argv) {
  examples::TrainingOptions o{.steps = 300, .max_loss = 0.05};
  if (!examples::parse_options(argc, argv, o,
                               "usage: 05_tiny_training [--steps N] [--max-loss X] [--seed S] [--no-check]\n"))
    return 2;
  const TinyModelShape shape;
  const int batch_size = 16;
  Parameters<double> params = tiny_model_parameters<double>(shape, o.seed);
  std::mt19937_64 data(o.seed + 1000);
  std::cout << "reversal task: " << shape.half << " symbols over a vocabulary of " << shape.vocab
            << ", then the same reversed; width " << shape.width << ", " << shape.heads << " heads, causal\n"
            << "seed " << o.seed << " (parameters), " << o.seed + 1000 << " (data); batch " << batch_size << ", Adam\n";

  // The first step's gradients, checked on one sequence drawn apart from the training data.
  std::mt19937_64 check_rng(o.seed + 2000);
  if (o.check && !examples::check_first_step(TinyModelLoss{shape, reversal_batch(shape, 1, check_rng)}, params.values(),
                                             params.names(), o.seed, "tiny model, first step on one sequence"))
    return 1;

  Adam<double> adam(params, {.learning_rate = 0.02});
  const double loss = examples::train(params, adam, o.steps, 25, [&](int) {
    return TinyModelLoss{shape, reversal_batch(shape, batch_size, data)};
  });

  // Held out: 200 sequences never seen, every reversed symbol predicted by argmax.
  std::mt19937_64 test_rng(o.seed + 3000);
  long right = 0, total = 0;
  for (const std::vector<long>& s : reversal_batch(shape, 200, test_rng)) {
    Tape<double> tape;
    TinyModelLoss{shape, {s}}(tape, params.record(tape));
    const std::span<const long> reversed(s.begin() + shape.half, s.end()); // what the predicting rows predict
    right += examples::argmax_right(tape.find("predicting").value(), reversed);
    total += static_cast<long>(reversed.size());
  }
  std::cout << "held-out sequences: " << right << " of " << total << " reversed symbols right\n";
  return examples::verdict(loss, o.max_loss);
}
