#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("sub: value of a hand-computed 2x3 case, and - is the same op", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(4), T(-1), T(1)}, {T(1), T(5), T(7)}}), "a");
  auto b = tape.input(matrix<T>({{T(1), T(2), T(4)}, {T(-4), T(2), T(2)}}), "b");
  // the expected entries worked out by hand
  CHECK(sub(a, b).value() == matrix<T>({{T(3), T(-3), T(-3)}, {T(5), T(3), T(5)}}));
  CHECK((a - b).value() == sub(a, b).value());
}

TEST_CASE_TEMPLATE("sub: broadcasting a row, a column and a scalar, worked out by hand", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(4), T(-1), T(1)}, {T(1), T(5), T(7)}}), "a");
  auto r = tape.input(matrix<T>({{T(1), T(2), T(4)}}), "r");
  auto c = tape.input(matrix<T>({{T(2)}, {T(-1)}}), "c");
  auto s = tape.input(matrix<T>({{T(2)}}), "s");
  CHECK(sub(a, r).value() == matrix<T>({{T(3), T(-3), T(-3)}, {T(0), T(3), T(3)}}));
  CHECK(sub(a, c).value() == matrix<T>({{T(2), T(-3), T(-1)}, {T(2), T(6), T(8)}}));
  CHECK(sub(a, s).value() == matrix<T>({{T(2), T(-3), T(-1)}, {T(-1), T(3), T(5)}}));
  CHECK(sub(c, r).rows() == 2);
  CHECK(sub(c, r).cols() == 3);
}

TEST_CASE_TEMPLATE("sub: gradient against central differences on every broadcast pattern", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(25);
  test::check_broadcast_gradients<T>("sub", random, [](const auto& in) { return sub(in[0], in[1]); });
}

TEST_CASE_TEMPLATE("sub: a value used twice receives both contributions", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(31);
  test::check_op_gradient<T>("sub(x, x)", {random.make<T>(3, 2)}, [](const auto& in) { return sub(in[0], in[0]); });
}

TEST_CASE("sub: shapes that do not broadcast are a ShapeError naming both operands and shapes") {
  Tape<double> tape;
  auto a = tape.input(Matrix<double>::Ones(2, 3), "A");
  auto b = tape.input(Matrix<double>::Ones(3, 2), "B");
  auto c = tape.input(Matrix<double>::Ones(2, 2), "C");
  CHECK_THROWS_WITH_AS(sub(a, b),
                       "sub(A, B): A is 2x3 but B is 3x2; aligned at their last dims, per dim the sizes must be equal "
                       "or one of them 1 (broadcasting)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(sub(c, a),
                       "sub(C, A): C is 2x2 but A is 2x3; aligned at their last dims, per dim the sizes must be equal "
                       "or one of them 1 (broadcasting)",
                       ShapeError);
}
