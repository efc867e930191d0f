// Optimisers and the tiny model: each update rule against its formula, and training that converges
// deterministically (the same seed gives bit-identical losses).
#include "../support.hpp"

#include <tapegrad/graph/models/tiny_model.hpp>

using namespace tapegrad;

namespace {

/// J = sum((W - C) hadamard (W - C)): gradient 2 (W - C).
struct Quadratic {
  Matrix<double> C;
  template <Real U> Var<U> operator()(Tape<U>& tape, const std::vector<Var<U>>& p) const {
    const Var<U> d = sub(p[0], tape.input(C.cast<U>(), "C"));
    return sum(hadamard(d, d));
  }
};

template <class Optimizer>
double train_quadratic(Parameters<double>& params, Optimizer& opt, const Quadratic& f, int steps) {
  double J = 0;
  for (int s = 0; s < steps; ++s) {
    Tape<double> tape;
    const auto vars = params.record(tape);
    const Var<double> out = f(tape, vars);
    tape.backward(out);
    opt.step(params, vars);
    J = out.value()(0, 0);
  }
  return J;
}

} // namespace

TEST_CASE("Sgd with momentum: one step is p - lr (momentum v + g), and it converges on a quadratic") {
  test::RandomMatrices random(71);
  const Quadratic f{random.make<double>(3, 2)};
  Parameters<double> params;
  params.add("W", random.make<double>(3, 2));
  const Matrix<double> w0 = params.values()[0];
  Sgd<double> sgd(params, {.learning_rate = 0.125, .momentum = 0.5});
  train_quadratic(params, sgd, f, 1);
  // v = g = 2 (W - C); W1 = W0 - lr g, exactly representable here (entries k/8, lr 1/8)
  CHECK(params.values()[0] == w0 - 0.125 * (2 * (w0 - f.C)));
  const double J = train_quadratic(params, sgd, f, 200);
  MESSAGE("Sgd after 201 steps: J = " << J);
  CHECK(J < 1e-20);
}

TEST_CASE("Adam: the first step moves each coordinate by lr g / (|g| + eps); it converges on a quadratic") {
  test::RandomMatrices random(73);
  const Quadratic f{random.make<double>(2, 3)};
  Parameters<double> params;
  params.add("W", random.make<double>(2, 3));
  const Matrix<double> w0 = params.values()[0];
  Adam<double> adam(params, {.learning_rate = 0.01});
  train_quadratic(params, adam, f, 1);
  const Matrix<double> g = 2 * (w0 - f.C);
  for (Eigen::Index k = 0; k < g.size(); ++k) {
    const double expected = w0.data()[k] - 0.01 * g.data()[k] / (std::abs(g.data()[k]) + 1e-8);
    CHECK(std::abs(params.values()[0].data()[k] - expected) <= 4 * epsilon<double>() * std::abs(expected) + 1e-300);
  }
  const double J = train_quadratic(params, adam, f, 2000);
  MESSAGE("Adam after 2001 steps: J = " << J);
  CHECK(J < 1e-6);
}

TEST_CASE("optimiser misuse: Vars that do not match the parameters are errors") {
  Parameters<double> params;
  params.add("W", Matrix<double>::Zero(2, 2));
  CHECK_THROWS_AS(params.add("W", Matrix<double>::Zero(1, 1)), UsageError);
  Sgd<double> sgd(params, {.learning_rate = 0.1});
  Tape<double> tape;
  const auto wrong = tape.input(Matrix<double>::Zero(3, 1), "V");
  CHECK_THROWS_WITH_AS(sgd.step(params, {wrong}), "Sgd::step: parameter W is 2x2 but the gradient of V is 3x1",
                       ShapeError);
  CHECK_THROWS_AS(sgd.step(params, {}), UsageError);
}

TEST_CASE("the tiny model trains deterministically and its loss falls below 0.01 in 150 steps") {
  const TinyModelShape shape;
  const auto run = [&](int steps) {
    Parameters<double> params = tiny_model_parameters<double>(shape, 5);
    Adam<double> adam(params, {.learning_rate = 0.02});
    std::mt19937_64 data(6);
    std::vector<double> losses;
    for (int s = 0; s < steps; ++s) {
      std::vector<std::vector<long>> batch;
      for (int b = 0; b < 16; ++b)
        batch.push_back(reversal_sequence(shape, data));
      Tape<double> tape;
      const auto vars = params.record(tape);
      const Var<double> L = TinyModelLoss{shape, batch}(tape, vars);
      tape.backward(L);
      adam.step(params, vars);
      losses.push_back(L.value()(0, 0));
    }
    return losses;
  };
  MESSAGE("seeds 5 (parameters) and 6 (data)");
  const std::vector<double> a = run(150), b = run(150);
  CHECK(a == b); // bit for bit
  MESSAGE("loss: first " << a.front() << ", after 150 steps " << a.back());
  CHECK(a.front() > 1.5); // near ln 8 = 2.08 at the start
  CHECK(a.back() < 0.01);
}
