// The pre-norm transformer block as a graph (graph/models/transformer_block.hpp): layer_norm with gain and
// bias, 2-head causal attention with Wo, residuals, a GELU MLP with biases. The whole checker passes it, double
// against 50 digits.
#include "../support.hpp"

#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/graph/models/transformer_block.hpp>

using namespace tapegrad;

namespace {

/// T = 3 positions, D = 4, d = r = 4 (2 heads of 2), MLP width 8; gains in [1/2, 3/2].
std::vector<Matrix<double>> block_inputs(test::RandomMatrices& random) {
  std::vector<Matrix<double>> in;
  const std::vector<std::pair<int, int>> shapes = transformer_block_shapes(3, 4, 8);
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const bool gain = transformer_block_names()[k][0] == 'g';
    in.push_back(gain ? random.make<double>(shapes[k].first, shapes[k].second, 4, 12)
                      : random.make<double>(shapes[k].first, shapes[k].second));
  }
  return in;
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
    const TransformerBlockParams<double> p = transformer_block_params(std::span<const Var<double>>(v).subspan(1));
    return Matrix<double>(transformer_block(v[0], p, 2).value());
  };
  const Matrix<double> before = out_of(x);
  x[0].row(2) *= 3; // change the last position only
  const Matrix<double> after = out_of(x);
  CHECK(after.row(0) == before.row(0));
  CHECK(after.row(1) == before.row(1));
  CHECK(after.row(2) != before.row(2));
}
