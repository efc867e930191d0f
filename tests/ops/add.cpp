#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("add: value of a hand-computed 2x3 case, and + is the same op", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(4), T(-1), T(1)}, {T(1), T(5), T(7)}}), "a");
  auto b = tape.input(matrix<T>({{T(1), T(2), T(4)}, {T(-4), T(2), T(2)}}), "b");
  // the expected entries worked out by hand
  CHECK(add(a, b).value() == matrix<T>({{T(5), T(1), T(5)}, {T(-3), T(7), T(9)}}));
  CHECK((a + b).value() == add(a, b).value());
}

TEST_CASE_TEMPLATE("add: broadcasting a row, a column and a scalar, worked out by hand", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(4), T(-1), T(1)}, {T(1), T(5), T(7)}}), "a");
  auto r = tape.input(matrix<T>({{T(1), T(2), T(4)}}), "r");
  auto c = tape.input(matrix<T>({{T(2)}, {T(-1)}}), "c");
  auto s = tape.input(matrix<T>({{T(2)}}), "s");
  CHECK(add(a, r).value() == matrix<T>({{T(5), T(1), T(5)}, {T(2), T(7), T(11)}}));
  CHECK(add(a, c).value() == matrix<T>({{T(6), T(1), T(3)}, {T(0), T(4), T(6)}}));
  CHECK(add(a, s).value() == matrix<T>({{T(6), T(1), T(3)}, {T(3), T(7), T(9)}}));
  CHECK(add(c, r).rows() == 2);
  CHECK(add(c, r).cols() == 3);
}

TEST_CASE_TEMPLATE("add: gradient against central differences on every broadcast pattern", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(23);
  test::check_broadcast_gradients<T>("add", random, [](const auto& in) { return add(in[0], in[1]); });
}

TEST_CASE_TEMPLATE("add: a value used twice receives both contributions", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(29);
  test::check_op_gradient<T>("add(x, x)", {random.make<T>(3, 2)}, [](const auto& in) { return add(in[0], in[0]); });
}

TEST_CASE("add: shapes that do not broadcast are a ShapeError naming both operands and shapes") {
  Tape<double> tape;
  auto a = tape.input(Matrix<double>::Ones(2, 3), "A");
  auto b = tape.input(Matrix<double>::Ones(3, 2), "B");
  auto c = tape.input(Matrix<double>::Ones(2, 2), "C");
  CHECK_THROWS_WITH_AS(add(a, b),
                       "add(A, B): A is 2x3 but B is 3x2; aligned at their last dims, per dim the sizes must be equal "
                       "or one of them 1 (broadcasting)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(add(c, a),
                       "add(C, A): C is 2x2 but A is 2x3; aligned at their last dims, per dim the sizes must be equal "
                       "or one of them 1 (broadcasting)",
                       ShapeError);
}
