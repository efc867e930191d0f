// Broadcasting of any rank (ops/broadcast.hpp) on add, sub, mul and div: shapes aligned at their last dims, a
// size 1 or a missing leading dim repeated. Values against the rule written out entry by entry, gradients (summed
// over the repeated dims: sum_to) against central differences, ranks 0 to 4, both the storage-view fast paths
// (a bias over the last dim, a per-row statistic) and the general case ((B, 1, D) against (B, T, D)).
#include "../support.hpp"

using namespace tapegrad;

TEST_CASE_TEMPLATE("broadcast of any rank: each result entry reads the operands' entries the rule says", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(77);
  Tape<T> tape;
  const Tensor<T> a = random.tensor<T>({2, 1, 4}), b = random.tensor<T>({3, 1});
  const Tensor<T> r = add(tape.input(a, "a"), tape.input(b, "b")).tensor();
  REQUIRE(r.shape() == Shape{2, 3, 4});
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index j = 0; j < 3; ++j)
      for (Eigen::Index k = 0; k < 4; ++k)
        CHECK(r.at({i, j, k}) == T(a.at({i, 0, k}) + b.at({j, 0})));
  CHECK_THROWS_WITH_AS(add(tape.input(random.tensor<T>({2, 3, 4}), "x"), tape.input(random.tensor<T>({3, 3}), "y")),
                       "add(x, y): x is 2x3x4 but y is 3x3; aligned at their last dims, per dim the sizes must be "
                       "equal or one of them 1 (broadcasting)",
                       ShapeError);
}

TEST_CASE_TEMPLATE("broadcast of any rank: gradients against central differences", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(78);
  using V = std::vector<Var<T>>;
  const std::vector<std::pair<Shape, Shape>> pairs = {
      {{2, 3, 4}, {4}},          // a bias over the last dim (a row of the view)
      {{2, 3, 4}, {2, 3, 1}},    // a per-row statistic (a column of the view)
      {{2, 3, 4}, {2, 1, 4}},    // general: repeated along a middle dim
      {{2, 3, 4}, {3, 4}},       // a missing leading dim
      {{3, 1, 2, 5}, {4, 1, 5}}, // both repeated, rank 4 against rank 3
      {{}, {2, 3}},              // rank 0 against a matrix
      {{5}, {2, 1}},             // rank 1 against a column
      {{2, 3, 4}, {2, 3, 4}},
  };
  for (const auto& [sa, sb] : pairs) {
    const std::string shapes = shape_string(sa) + " and " + shape_string(sb);
    const Tensor<T> a = random.tensor<T>(sa), b = random.tensor<T>(sb), d = random.tensor<T>(sb, 6, 9);
    test::check_tensor_gradient<T>("add " + shapes, {a, b}, [](const V& in) { return add(in[0], in[1]); });
    test::check_tensor_gradient<T>("sub " + shapes, {b, a}, [](const V& in) { return sub(in[0], in[1]); });
    test::check_tensor_gradient<T>("mul " + shapes, {a, b}, [](const V& in) { return hadamard(in[0], in[1]); });
    test::check_tensor_gradient<T>("div " + shapes, {a, d}, [](const V& in) { return div(in[0], in[1]); });
  }
}

TEST_CASE_TEMPLATE("unary elementwise ops keep any shape and differentiate entry by entry", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(79);
  using V = std::vector<Var<T>>;
  for (const Shape& s : {Shape{}, Shape{5}, Shape{2, 3, 4}, Shape{2, 1, 3, 2}}) {
    const Tensor<T> x = random.tensor<T>(s), pos = random.tensor<T>(s, 6, 9);
    test::check_tensor_gradient<T>("tanh", {x}, [](const V& in) { return tanh(in[0]); });
    test::check_tensor_gradient<T>("exp", {x}, [](const V& in) { return exp(in[0]); });
    test::check_tensor_gradient<T>("log", {pos}, [](const V& in) { return log(in[0]); });
    test::check_tensor_gradient<T>("scale", {x}, [](const V& in) { return scale(in[0], T(3) / T(4)); });
    test::check_tensor_gradient<T>("neg", {x}, [](const V& in) { return neg(in[0]); });
    test::check_tensor_gradient<T>("gelu", {x}, [](const V& in) { return gelu(in[0]); });
  }
}

TEST_CASE("an op written for matrices refuses a tensor of another rank, naming it") {
  Tape<double> tape;
  const Var<double> x = tape.input(Tensor<double>::zeros({2, 3, 4}), "X");
  CHECK_THROWS_WITH_AS(slice_rows(x, 0, 1), "slice_rows: takes matrices (rank 2); its operand X is 2x3x4 (rank 3)",
                       ShapeError);
}
