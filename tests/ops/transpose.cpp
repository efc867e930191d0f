#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("transpose: value of a 2x3", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(1), T(2), T(3)}, {T(4), T(5), T(6)}}));
  CHECK(transpose(a).value() == matrix<T>({{T(1), T(4)}, {T(2), T(5)}, {T(3), T(6)}}));
}

TEST_CASE_TEMPLATE("transpose: gradient against central differences on a non-square input", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(7);
  test::check_op_gradient<T>("transpose", {random.make<T>(2, 3)}, [](const auto& in) { return transpose(in[0]); });
}

TEST_CASE_TEMPLATE("transpose: tiles of 16 cover every shape, partial tiles included, forward and backward", T, double,
                   tapegrad::float50) {
  // shapes below, at and across the tile's 16 in each direction; entries k / 8, exact in every T
  for (const auto& shape : {std::pair{1, 1}, {3, 17}, {16, 16}, {37, 21}, {64, 5}}) {
    const int rows = shape.first, cols = shape.second; // not a structured binding: clang 14 cannot capture one
    CAPTURE(rows);
    CAPTURE(cols);
    const Matrix<T> a = test::exact_entries<T>(rows, cols, 61, 8), seed = test::exact_entries<T>(cols, rows, 29, 8);
    Tape<T> tape;
    auto x = tape.input(a, "a");
    auto t = transpose(x);
    CHECK(t.value() == Matrix<T>(a.transpose()));
    tape.backward(t, seed);
    CHECK(x.grad() == Matrix<T>(seed.transpose()));
  }
}

TEST_CASE_TEMPLATE("transpose: a value also used directly gets both contributions (the tiles added, not assigned)", T,
                   double, tapegrad::float50) {
  // y = x^T + x on a 19 x 19 x: add's VJP reaches x first, so transpose's contribution is the second one
  const Eigen::Index n = 19;
  const Matrix<T> a = test::exact_entries<T>(n, n, 23, 4), seed = test::exact_entries<T>(n, n, 31, 4);
  Tape<T> tape;
  auto x = tape.input(a, "x");
  tape.backward(add(transpose(x), x), seed);
  CHECK(x.grad() == Matrix<T>(seed.transpose() + seed));
}
