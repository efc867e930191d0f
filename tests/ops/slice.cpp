#include "../support.hpp"

using namespace tapegrad;

TEST_CASE_TEMPLATE("slice_rows, slice_cols: values are the block, gradients land in it and nowhere else", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(41);
  const Matrix<T> a = random.make<T>(5, 4);
  Tape<T> tape;
  auto x = tape.input(a, "P");
  auto r = slice_rows(x, 1, 3, "rows");
  auto c = slice_cols(x, 2, 2, "cols");
  CHECK(r.value() == a.middleRows(1, 3));
  CHECK(c.value() == a.middleCols(2, 2));
  tape.backward(sum(add(sum(r), sum(c))));
  for (Eigen::Index i = 0; i < 5; ++i)
    for (Eigen::Index j = 0; j < 4; ++j)
      CHECK(x.grad()(i, j) == T((i >= 1 && i <= 3 ? 1 : 0) + (j >= 2 ? 1 : 0)));
  test::check_op_gradient<T>("slice_rows", {a}, [](const auto& in) { return slice_rows(in[0], 2, 3); });
  test::check_op_gradient<T>("slice_cols", {a}, [](const auto& in) { return slice_cols(in[0], 0, 3); });
}

TEST_CASE_TEMPLATE("concat_cols: side by side; each part's gradient is its block of columns", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(43);
  const Matrix<T> a = random.make<T>(3, 2), b = random.make<T>(3, 1), c = random.make<T>(3, 3);
  Tape<T> tape;
  auto va = tape.input(a), vb = tape.input(b), vc = tape.input(c);
  auto y = concat_cols(std::vector<Var<T>>{va, vb, vc}, "C");
  REQUIRE(y.cols() == 6);
  CHECK(y.value().middleCols(0, 2) == a);
  CHECK(y.value().middleCols(2, 1) == b);
  CHECK(y.value().middleCols(3, 3) == c);
  test::check_op_gradient<T>("concat_cols of 3x2, 3x1, 3x3", {a, b, c}, [](const auto& in) { return concat_cols(in); });
  // the same input twice: its gradient is the sum of both blocks
  test::check_op_gradient<T>("concat_cols(a, a)", {a}, [](const auto& in) {
    return concat_cols(std::vector<std::decay_t<decltype(in[0])>>{in[0], in[0]});
  });
}

TEST_CASE_TEMPLATE("concat_rows: stacked top to bottom; each part's gradient is its block of rows", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(47);
  const Matrix<T> a = random.make<T>(2, 3), b = random.make<T>(1, 3), c = random.make<T>(3, 3);
  Tape<T> tape;
  auto va = tape.input(a), vb = tape.input(b), vc = tape.input(c);
  auto y = concat_rows(std::vector<Var<T>>{va, vb, vc}, "R");
  REQUIRE(y.rows() == 6);
  CHECK(y.value().middleRows(0, 2) == a);
  CHECK(y.value().middleRows(2, 1) == b);
  CHECK(y.value().middleRows(3, 3) == c);
  test::check_op_gradient<T>("concat_rows of 2x3, 1x3, 3x3", {a, b, c}, [](const auto& in) { return concat_rows(in); });
  test::check_op_gradient<T>("concat_rows(a, a)", {a}, [](const auto& in) {
    return concat_rows(std::vector<std::decay_t<decltype(in[0])>>{in[0], in[0]});
  });
}

TEST_CASE("slices out of range and concat with unequal rows are ShapeErrors naming op, operand and shape") {
  Tape<double> tape;
  auto p = tape.input(Matrix<double>::Zero(4, 3), "P");
  auto q = tape.input(Matrix<double>::Zero(2, 3), "Q");
  CHECK_THROWS_WITH_AS(
      slice_rows(p, 2, 3),
      "slice_rows(P, begin 2, count 3): P is 4x3; a slice needs count >= 1 and rows begin..begin+count-1 within 0..3",
      ShapeError);
  CHECK_THROWS_WITH_AS(slice_cols(p, -1, 1),
                       "slice_cols(P, begin -1, count 1): P is 4x3; a slice needs count >= 1 and columns "
                       "begin..begin+count-1 within 0..2",
                       ShapeError);
  CHECK_THROWS_AS(slice_cols(p, 0, 0), ShapeError);
  CHECK_THROWS_WITH_AS(concat_cols(std::vector<Var<double>>{p, q}),
                       "concat_cols(P, Q): P is 4x3 but Q is 2x3; every operand needs the same number of rows",
                       ShapeError);
  CHECK_THROWS_AS(concat_cols(std::vector<Var<double>>{}, "C"), ShapeError);
  auto r = tape.input(Matrix<double>::Zero(4, 2), "R");
  CHECK_THROWS_WITH_AS(concat_rows(std::vector<Var<double>>{p, r}),
                       "concat_rows(P, R): P is 4x3 but R is 4x2; every operand needs the same number of columns",
                       ShapeError);
  CHECK_THROWS_AS(concat_rows(std::vector<Var<double>>{}, "C"), ShapeError);
}
