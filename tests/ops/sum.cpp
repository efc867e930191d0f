#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("sum: value is 1x1", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto s = sum(tape.input(matrix<T>({{T(1), T(2), T(3)}, {T(4), T(5), T(-6)}})));
  CHECK(s.rows() == 1);
  CHECK(s.cols() == 1);
  CHECK(s.value()(0, 0) == T(9));
}

TEST_CASE_TEMPLATE("sum: gradient against central differences", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(19);
  test::check_op_gradient<T>("sum", {random.make<T>(2, 5)}, [](const auto& in) { return sum(in[0]); });
}

TEST_CASE_TEMPLATE("sum: down the rows (axis 0, 1 x n) and along each row (axis 1, m x 1)", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(1), T(2), T(3)}, {T(4), T(5), T(-6)}}));
  CHECK(sum(a, 0).value() == matrix<T>({{T(5), T(7), T(-3)}}));
  CHECK(sum(a, 1).value() == matrix<T>({{T(6)}, {T(3)}}));
  test::RandomMatrices random(97);
  const Matrix<T> x = random.make<T>(3, 2);
  test::check_op_gradient<T>("sum axis 0", {x}, [](const auto& in) { return sum(in[0], 0); });
  test::check_op_gradient<T>("sum axis 1", {x}, [](const auto& in) { return sum(in[0], 1); });
}

TEST_CASE("sum: an axis other than 0 and 1 is a ShapeError naming it") {
  Tape<double> tape;
  auto a = tape.input(Matrix<double>::Ones(2, 3), "A");
  CHECK_THROWS_WITH_AS(sum(a, -1),
                       "sum(A, axis -1): axis is 0 (each column summed over the rows) or 1 (each row summed over the "
                       "columns)",
                       ShapeError);
}
