// The pre-norm transformer block as a graph (graph/models/transformer_block.hpp): layer_norm with gain and
// bias, 2-head causal attention with Wo, residuals, a GELU MLP with biases. The whole checker passes it, double
// against 50 digits.
#include "../support.hpp"

#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/graph/models/transformer_block.hpp>

using namespace tapegrad;

namespace {

/// T = 3 positions, D = 4, d = r = 4 (2 heads of 2), MLP width 8.
std::vector<Matrix<double>> block_inputs(test::RandomMatrices& random) {
  const int T = 3, D = 4, F = 8;
  return {random.make<double>(T, D), random.make<double>(1, D, 4, 12), random.make<double>(1, D),
          random.make<double>(D, D), random.make<double>(D, D),        random.make<double>(D, D),
          random.make<double>(D, D), random.make<double>(1, D, 4, 12), random.make<double>(1, D),
          random.make<double>(D, F), random.make<double>(1, F),        random.make<double>(F, D),
          random.make<double>(1, D)};
}

} // namespace

TEST_CASE("transformer block: every check passes, double against 50 digits") {
  test::RandomMatrices random(149);
  const std::vector<Matrix<double>> x = block_inputs(random);
  const TransformerBlockLoss loss{2, random.make<double>(3, 4)};
  CheckOptions opt;
  opt.reference_digits = 50;
  const CheckReport r = check_gradient<double, mpfr_real>(loss, x, transformer_block_names(), opt);
  std::size_t failed = 0;
  for (const CheckResult& c : r.checks)
    failed += !c.passed;
  MESSAGE(r.checks.size() << " checks, " << failed << " failed, " << r.warnings.size() << " warnings");
  for (const std::string& w : r.warnings)
    MESSAGE(w);
  CHECK(r.passed());
  CHECK(r.checks.size() >= 2 * transformer_block_names().size());
}

TEST_CASE("transformer block: causal (the first position's output ignores the later ones) and residual") {
  test::RandomMatrices random(151);
  std::vector<Matrix<double>> x = block_inputs(random);
  const auto out_of = [](const std::vector<Matrix<double>>& in) {
    Tape<double> tape;
    std::vector<Var<double>> v;
    for (const Matrix<double>& m : in)
      v.push_back(tape.input(m));
    const TransformerBlockParams<double> p{v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12]};
    return Matrix<double>(transformer_block(v[0], p, 2).value());
  };
  const Matrix<double> before = out_of(x);
  x[0].row(2) *= 3; // change the last position only
  const Matrix<double> after = out_of(x);
  CHECK(after.row(0) == before.row(0));
  CHECK(after.row(1) == before.row(1));
  CHECK(after.row(2) != before.row(2));
}
