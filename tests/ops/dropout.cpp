#include "../support.hpp"

using namespace tapegrad;

TEST_CASE_TEMPLATE("dropout: kept entries scaled by 1/(1-p), dropped ones 0, the VJP uses the same mask", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(53);
  const Matrix<T> a = random.make<T>(4, 6);
  MESSAGE("dropout pattern seed 59");
  const DropoutMask mask = dropout_mask(4, 6, 0.25, 59);
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
  MESSAGE("seed 61");
  const DropoutMask m1 = dropout_mask(100, 100, 0.3, 61), m2 = dropout_mask(100, 100, 0.3, 61);
  CHECK(m1.keep == m2.keep);
  const double kept = static_cast<double>(m1.keep.count()) / 10000;
  // binomial: sd = sqrt(0.21 / 10000) = 0.0046; 5 sd
  CHECK(kept > 0.7 - 0.023);
  CHECK(kept < 0.7 + 0.023);
  CHECK(dropout_mask(100, 100, 0.3, 62).keep != m1.keep);
  CHECK_THROWS_AS(dropout_mask(2, 2, 1.0, 61), UsageError);
  CHECK_THROWS_AS(dropout_mask(2, 2, -0.5, 61), UsageError);
}

TEST_CASE("dropout from p and seed: a mask that is not that pattern is refused, and a node replays its pattern") {
  Tape<double> tape;
  const auto x = tape.input(Matrix<double>::Constant(3, 4, 1.0), "X");
  DropoutMask mask = dropout_mask(3, 4, 0.5, 7);
  const auto y = dropout(x, mask, "Y");
  CHECK(y.value() == dropout(x, 0.5, 7).value());
  // The node keeps p and seed; its replay on another tape draws the same pattern.
  Tape<double> other;
  const std::array<Var<double>, 1> in{other.input(Matrix<double>::Constant(3, 4, 1.0))};
  CHECK(tape.replay(y.index(), in).value() == y.value());
  CHECK(tape.node(y.index()).params.integer("seed") == 7);
  mask.keep(0, 0) = !mask.keep(0, 0);
  CHECK_THROWS_AS(dropout(x, mask), UsageError);
  CHECK_THROWS_AS(dropout(x, 1.0, 7), UsageError);
  CHECK_THROWS_AS(dropout(x, dropout_mask(2, 4, 0.5, 7)), ShapeError);
}

TEST_CASE_TEMPLATE("dropout on any rank: the pattern of the entries in row-major order, the shape kept", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(233);
  const Tensor<T> x = random.tensor<T>({2, 3, 4});
  MESSAGE("dropout pattern seed 9");
  Tape<T> tape;
  const Var<T> y = dropout(tape.input(x, "X"), 0.5, 9);
  CHECK(y.shape() == Shape{2, 3, 4});
  const DropoutMask mask = dropout_mask(6, 4, 0.5, 9); // the same entries as a 6 x 4 matrix
  for (Eigen::Index k = 0; k < x.numel(); ++k)
    CHECK(y.tensor()[k] == (mask.keep.data()[k] ? T(x[k] * T(2)) : T(0)));
  using V = std::vector<Var<T>>;
  test::check_tensor_gradient<T>("dropout rank 3", {x}, [](const V& in) { return dropout(in[0], 0.5, 9); });
  test::check_tensor_gradient<T>("dropout rank 0", {random.tensor<T>({})},
                                 [](const V& in) { return dropout(in[0], 0.25, 3); });
}
