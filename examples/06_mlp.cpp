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

#include "arguments.hpp"

#include <report.hpp> // app/: the text report of `tapegrad check`

#include <cmath>
#include <iomanip>
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
  int steps = 400;
  double max_loss = 0.15;
  std::uint64_t seed = 1;
  bool check = true;
  Activation activation = Activation::tanh;
  const std::string usage =
      "usage: 06_mlp [--activation tanh|gelu|relu] [--steps N] [--max-loss X] [--seed S] [--no-check]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--steps" && has_value && examples::parse(argv[i + 1], steps))
      ++i;
    else if (a == "--max-loss" && has_value && examples::parse(argv[i + 1], max_loss))
      ++i;
    else if (a == "--seed" && has_value && examples::parse(argv[i + 1], seed))
      ++i;
    else if (a == "--activation" && has_value && parse_activation(argv[i + 1]))
      activation = *parse_activation(argv[++i]);
    else if (a == "--no-check")
      check = false;
    else {
      std::cerr << usage;
      return 2;
    }
  }
  if (steps < 1) {
    std::cerr << "06_mlp: --steps must be at least 1\n" << usage;
    return 2;
  }
  const int train_size = 256;
  Parameters<double> params = mlp_parameters(seed);
  std::mt19937_64 data_rng(seed + 1000);
  const Rings train = draw_rings(train_size, data_rng);
  std::cout << "three rings: points of [-1, 1]^2 by radius (< 1/2, < 4/5, beyond); MLP " << features << " -> " << hidden
            << " (" << activation_name(activation) << ") -> " << classes << ", biases broadcast\n"
            << "seed " << seed << " (parameters), " << seed + 1000 << " (data); " << train_size
            << " training points, full batch, Adam\n";

  if (check) {
    // The first step's gradients, checked on 12 points drawn apart from the training data.
    std::mt19937_64 check_rng(seed + 2000);
    const Rings first = draw_rings(12, check_rng);
    std::vector<Matrix<double>> inputs{first.X};
    inputs.insert(inputs.end(), params.values().begin(), params.values().end());
    std::vector<std::string> names{"X"};
    names.insert(names.end(), params.names().begin(), params.names().end());
    CheckOptions opt;
    opt.seed = seed;
    opt.reference_digits = 50;
    CheckReport report;
    report.append(check_gradient<double, mpfr_real>(MlpLoss{first.ring, activation}, inputs, names, opt),
                  "MLP, first step");
    std::cout << "first step, checked on 12 points:\n";
    app::print_report(std::cout, report, false);
    if (!report.passed()) {
      std::cout << "the gradients do not check out: not training\n";
      return 1;
    }
  }

  Adam<double> adam(params, {.learning_rate = 0.05});
  const MlpLoss loss_of{train.ring, activation};
  double loss = 0;
  for (int step = 1; step <= steps; ++step) {
    Tape<double> tape;
    const std::vector<Var<double>> vars = params.record(tape);
    const Var<double> L = loss_of(tape, record(tape, train.X, vars));
    tape.backward(L);
    adam.step(params, vars);
    loss = L.value()(0, 0);
    if (step == 1 || step % 50 == 0 || step == steps)
      std::cout << "step " << std::setw(4) << step << "  loss " << std::fixed << std::setprecision(5) << loss
                << std::defaultfloat << "\n";
  }

  // Held out: 1000 points never seen, each ring predicted by the argmax of its logits.
  std::mt19937_64 test_rng(seed + 3000);
  const Rings test = draw_rings(1000, test_rng);
  Tape<double> tape;
  const std::vector<Var<double>> vars = params.record(tape);
  MlpLoss{test.ring, activation}(tape, record(tape, test.X, vars)); // records the logits; the loss is not used
  const Matrix<double>& logits = tape.find("logits").value();
  long right = 0;
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    Eigen::Index best = 0;
    logits.row(i).maxCoeff(&best);
    right += best == test.ring[static_cast<std::size_t>(i)];
  }
  std::cout << "held-out points: " << right << " of " << logits.rows() << " in the right ring\n"
            << "final training loss " << loss << (loss <= max_loss ? " <= " : " > ") << max_loss << "\n";
  return loss <= max_loss ? 0 : 1;
}
