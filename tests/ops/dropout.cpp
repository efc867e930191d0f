#include "../support.hpp"

using namespace tapegrad;

TEST_CASE_TEMPLATE("dropout: kept entries scaled by 1/(1-p), dropped ones 0, the VJP uses the same mask", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(53);
  const Matrix<T> a = random.make<T>(4, 6);
  std::mt19937_64 rng(59);
  MESSAGE("dropout pattern seed 59");
  const DropoutMask mask = dropout_mask(4, 6, 0.25, rng);
  Tape<T> tape;
  auto x = tape.input(a, "A");
  auto y = dropout(x, mask, "Ad");
  const T factor = T(4) / T(3); // 1 / (1 - 1/4)
  for (Eigen::Index i = 0; i < 4; ++i)
    for (Eigen::Index j = 0; j < 6; ++j)
      CHECK(y.value()(i, j) == (mask.keep(i, j) ? T(a(i, j) * factor) : T(0)));
  test::check_op_gradient<T>("dropout p = 1/4", {a}, [mask](const auto& in) { return dropout(in[0], mask); });
}

TEST_CASE("dropout_mask: the same seed gives the same pattern; the kept fraction is near 1 - p") {
  std::mt19937_64 a(61), b(61);
  MESSAGE("seed 61");
  const DropoutMask m1 = dropout_mask(100, 100, 0.3, a), m2 = dropout_mask(100, 100, 0.3, b);
  CHECK(m1.keep == m2.keep);
  const double kept = static_cast<double>(m1.keep.count()) / 10000;
  // binomial: sd = sqrt(0.21 / 10000) = 0.0046; 5 sd
  CHECK(kept > 0.7 - 0.023);
  CHECK(kept < 0.7 + 0.023);
  CHECK_THROWS_AS(dropout_mask(2, 2, 1.0, a), UsageError);
  CHECK_THROWS_AS(dropout_mask(2, 2, -0.5, a), UsageError);
}
