// A two-layer MLP with biases learns which of three rings a point of the plane lies in (graph/models/mlp.hpp):
// logits = act(X W1 + b1) W2 + b2, the biases broadcast over the batch, mean cross-entropy against the ring.
//
// Before training, the first step's gradients are verified with the checker: every coordinate of every input
// (the batch and each parameter) against 50-digit finite differences, plus dual numbers and every node's VJP;
// the summary is printed as `tapegrad check` prints it. Then Adam trains on the whole seeded training set,
// printing the loss every few steps, and the model is tested on points it has never seen. Exits 1 if the check
// fails or the final loss is above --max-loss.
//
//   06_mlp [--activation tanh|gelu|relu] [--steps N] [--max-loss X] [--seed S] [--no-check]
#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/graph/models/mlp.hpp>
#include <tapegrad/optim/optimizers.hpp>

#include "training.hpp"

#include <cmath>
#include <iostream>
#include <optional>
#include <random>
#include <string>

using namespace tapegrad;

namespace {

constexpr int features = 2, hidden = 16, classes = 3;

/// `n` points uniform in the square [-1, 1]^2 and, for each, its ring: radius below 1/2, below 4/5, or beyond.
struct Rings {
  Matrix<double> X;
  std::vector<long> ring;
};

Rings draw_rings(int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  Rings data{Matrix<double>(n, features), {}};
  for (int i = 0; i < n; ++i) {
    data.X(i, 0) = u(rng);
    data.X(i, 1) = u(rng);
    const double r = std::hypot(data.X(i, 0), data.X(i, 1));
    data.ring.push_back(r < 0.5 ? 0 : r < 0.8 ? 1 : 2);
  }
  return data;
}

/// W1, b1, W2, b2: weights uniform in +-1/sqrt(fan in), biases 0.
Parameters<double> mlp_parameters(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto weights = [&](int rows, int cols) {
    std::uniform_real_distribution<double> u(-1 / std::sqrt(double(rows)), 1 / std::sqrt(double(rows)));
    return Matrix<double>(Matrix<double>::NullaryExpr(rows, cols, [&] { return u(rng); }));
  };
  Parameters<double> p;
  p.add("W1", weights(features, hidden));
  p.add("b1", Matrix<double>::Zero(1, hidden));
  p.add("W2", weights(hidden, classes));
  p.add("b2", Matrix<double>::Zero(1, classes));
  return p;
}

/// The inputs MlpLoss takes: the batch X first, then the parameters.
std::vector<Var<double>> record(Tape<double>& tape, const Matrix<double>& X, const std::vector<Var<double>>& params) {
  std::vector<Var<double>> in{tape.input(X, "X")};
  in.insert(in.end(), params.begin(), params.end());
  return in;
}

std::optional<Activation> parse_activation(const std::string& s) {
  for (const Activation a : {Activation::tanh, Activation::gelu, Activation::relu})
    if (s == activation_name(a)) return a;
  return std::nullopt;
}

} // namespace

int main(int argc, char** argv) {
  examples::TrainingOptions o{.steps = 400, .max_loss = 0.15};
  Activation activation = Activation::tanh;
  const auto activation_option = [&](std::string_view a, const char* next) {
    if (a != "--activation" || next == nullptr || !parse_activation(next)) return 0;
    activation = *parse_activation(next);
    return 2;
  };
  if (!examples::parse_options(
          argc, argv, o,
          "usage: 06_mlp [--activation tanh|gelu|relu] [--steps N] [--max-loss X] [--seed S] [--no-check]\n",
          activation_option))
    return 2;
  const int train_size = 256;
  Parameters<double> params = mlp_parameters(o.seed);
  std::mt19937_64 data_rng(o.seed + 1000);
  const Rings train = draw_rings(train_size, data_rng);
  std::cout << "three rings: points of [-1, 1]^2 by radius (< 1/2, < 4/5, beyond); MLP " << features << " -> " << hidden
            << " (" << activation_name(activation) << ") -> " << classes << ", biases broadcast\n"
            << "seed " << o.seed << " (parameters), " << o.seed + 1000 << " (data); " << train_size
            << " training points, full batch, Adam\n";

  if (o.check) {
    // The first step's gradients, checked on 12 points drawn apart from the training data: the batch X is an
    // input of the check too.
    std::mt19937_64 check_rng(o.seed + 2000);
    const Rings first = draw_rings(12, check_rng);
    std::vector<Matrix<double>> inputs{first.X};
    inputs.insert(inputs.end(), params.values().begin(), params.values().end());
    std::vector<std::string> names{"X"};
    names.insert(names.end(), params.names().begin(), params.names().end());
    if (!examples::check_first_step(MlpLoss{first.ring, activation}, inputs, names, o.seed,
                                    "MLP, first step on 12 points"))
      return 1;
  }

  Adam<double> adam(params, {.learning_rate = 0.05});
  const MlpLoss loss_of{train.ring, activation};
  const double loss = examples::train(params, adam, o.steps, 50, [&](int) {
    return [&](Tape<double>& tape, const std::vector<Var<double>>& vars) {
      return loss_of(tape, record(tape, train.X, vars));
    };
  });

  // Held out: 1000 points never seen, each ring predicted by the argmax of its logits.
  std::mt19937_64 test_rng(o.seed + 3000);
  const Rings test = draw_rings(1000, test_rng);
  Tape<double> tape;
  MlpLoss{test.ring, activation}(tape, record(tape, test.X, params.record(tape))); // the logits; loss unused
  const long right = examples::argmax_right(tape.find("logits").value(), test.ring);
  std::cout << "held-out points: " << right << " of " << test.ring.size() << " in the right ring\n";
  return examples::verdict(loss, o.max_loss);
}
