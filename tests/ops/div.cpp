#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("div: value of a hand-computed 2x3 case, and / is the same op", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(4), T(-1), T(1)}, {T(1), T(5), T(7)}}), "a");
  auto b = tape.input(matrix<T>({{T(1), T(2), T(4)}, {T(-4), T(2), T(2)}}), "b");
  // the expected entries worked out by hand
  CHECK(div(a, b).value() == matrix<T>({{T(4), T(-1) / T(2), T(1) / T(4)}, {T(-1) / T(4), T(5) / T(2), T(7) / T(2)}}));
  CHECK((a / b).value() == div(a, b).value());
}

TEST_CASE_TEMPLATE("div: broadcasting a row, a column and a scalar, worked out by hand", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(4), T(-1), T(1)}, {T(1), T(5), T(7)}}), "a");
  auto r = tape.input(matrix<T>({{T(1), T(2), T(4)}}), "r");
  auto c = tape.input(matrix<T>({{T(2)}, {T(-1)}}), "c");
  auto s = tape.input(matrix<T>({{T(2)}}), "s");
  CHECK(div(a, r).value() == matrix<T>({{T(4), T(-1) / T(2), T(1) / T(4)}, {T(1), T(5) / T(2), T(7) / T(4)}}));
  CHECK(div(a, c).value() == matrix<T>({{T(2), T(-1) / T(2), T(1) / T(2)}, {T(-1), T(-5), T(-7)}}));
  CHECK(div(a, s).value() == matrix<T>({{T(2), T(-1) / T(2), T(1) / T(2)}, {T(1) / T(2), T(5) / T(2), T(7) / T(2)}}));
  CHECK(div(c, r).rows() == 2);
  CHECK(div(c, r).cols() == 3);
}

TEST_CASE_TEMPLATE("div: gradient against central differences on every broadcast pattern", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(31);
  test::check_broadcast_gradients<T>(
      "div", random, [](const auto& in) { return div(in[0], in[1]); }, 8, 24);
}

TEST_CASE_TEMPLATE("div: a value used twice receives both contributions", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(37);
  test::check_op_gradient<T>("div(x, x)", {random.make<T>(3, 2, 8, 24)},
                             [](const auto& in) { return div(in[0], in[0]); });
}

TEST_CASE("div: shapes that do not broadcast are a ShapeError naming both operands and shapes") {
  Tape<double> tape;
  auto a = tape.input(Matrix<double>::Ones(2, 3), "A");
  auto b = tape.input(Matrix<double>::Ones(3, 2), "B");
  auto c = tape.input(Matrix<double>::Ones(2, 2), "C");
  CHECK_THROWS_WITH_AS(div(a, b),
                       "div(A, B): A is 2x3 but B is 3x2; aligned at their last dims, per dim the sizes must be equal "
                       "or one of them 1 (broadcasting)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(div(c, a),
                       "div(C, A): C is 2x2 but A is 2x3; aligned at their last dims, per dim the sizes must be equal "
                       "or one of them 1 (broadcasting)",
                       ShapeError);
}

TEST_CASE_TEMPLATE("div: a zero divisor is a DomainError naming the node, the divisor and the entry", T,
                   TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(1), T(2)}}), "A");
  auto b = tape.input(matrix<T>({{T(3), T(0)}}), "B");
  CHECK_THROWS_WITH_AS(div(a, b, "Q"), "div(A, B) for 'Q': entry (0, 1) of B is 0; div needs entries != 0",
                       DomainError);
  auto z = tape.input(matrix<T>({{T(0)}}), "Z");
  CHECK_THROWS_WITH_AS(a / z, "div(A, Z): entry (0, 0) of Z is 0; div needs entries != 0", DomainError);
  CHECK(div(b, a).value() == matrix<T>({{T(3), T(0)}})); // a zero numerator is fine
}
