// The MLP as a graph (graph/models/mlp.hpp): broadcast biases, every activation, cross-entropy; the whole
// checker passes it, double against 50 digits, and its bias gradients are the batch sums.
#include "../support.hpp"

#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/graph/models/mlp.hpp>

using namespace tapegrad;

namespace {

/// X (4 x 3), W1 (3 x 5), b1 (1 x 5), W2 (5 x 2), b2 (1 x 2).
std::vector<Matrix<double>> mlp_inputs(test::RandomMatrices& random) {
  return {random.make<double>(4, 3), random.make<double>(3, 5), random.make<double>(1, 5), random.make<double>(5, 2),
          random.make<double>(1, 2)};
}
const std::vector<std::string> mlp_names{"X", "W1", "b1", "W2", "b2"};

} // namespace

TEST_CASE("MLP with tanh, GELU and relu: every check passes, double against 50 digits") {
  for (const Activation act : {Activation::tanh, Activation::gelu, Activation::relu}) {
    CAPTURE(activation_name(act));
    test::RandomMatrices random(131);
    CheckOptions opt;
    opt.reference_digits = 50;
    const CheckReport r =
        check_gradient<double, mpfr_real>(MlpLoss{{0, 1, 1, 0}, act}, mlp_inputs(random), mlp_names, opt);
    std::size_t failed = 0;
    for (const CheckResult& c : r.checks)
      failed += !c.passed;
    MESSAGE(activation_name(act) << ": " << r.checks.size() << " checks, " << failed << " failed, " << r.warnings.size()
                                 << " warnings");
    CHECK(r.passed());
    CHECK(r.checks.size() >= 10);
  }
}

TEST_CASE("MLP: a bias's gradient is the upstream gradient summed over the batch rows") {
  test::RandomMatrices random(137);
  const std::vector<Matrix<double>> x = mlp_inputs(random);
  Tape<double> tape;
  std::vector<Var<double>> in;
  for (std::size_t k = 0; k < x.size(); ++k)
    in.push_back(tape.input(x[k], mlp_names[k]));
  const Var<double> J = MlpLoss{{0, 1, 1, 0}, Activation::tanh}(tape, in);
  tape.backward(J);
  const Var<double> logits = tape.var(tape.size() - 2); // cross_entropy's operand
  REQUIRE(tape.node_name(logits.index()) == "logits");
  const Matrix<double> upstream = logits.grad();
  test::check_close<double>("db2 = column sums of dlogits", in[4].grad(), upstream.colwise().sum(),
                            test::exact_tolerance<double>());
}

TEST_CASE("mlp: weights and biases must pair up") {
  Tape<double> tape;
  const Var<double> x = tape.input(Matrix<double>::Ones(2, 2), "X");
  const std::vector<Var<double>> w{tape.input(Matrix<double>::Ones(2, 2), "W1")};
  CHECK_THROWS_WITH_AS(mlp<double>(x, w, {}, Activation::relu),
                       "mlp: 1 weights and 0 biases; give one of each per layer, at least one layer", UsageError);
}
