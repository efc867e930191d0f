#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("hadamard: value of a hand-computed 2x3 case", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(4), T(-1), T(1)}, {T(1), T(5), T(7)}}), "a");
  auto b = tape.input(matrix<T>({{T(1), T(2), T(3)}, {T(-4), T(2), T(2)}}), "b");
  // the expected entries are a * b, worked out by hand
  CHECK(hadamard(a, b).value() == matrix<T>({{T(4), T(-2), T(3)}, {T(-4), T(10), T(14)}}));
}

TEST_CASE_TEMPLATE("hadamard: gradient against central differences on non-square inputs", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(23);
  test::check_op_gradient<T>("hadamard", {random.make<T>(2, 3), random.make<T>(2, 3)},
                             [](const auto& in) { return hadamard(in[0], in[1]); });
}

TEST_CASE_TEMPLATE("hadamard: a value used twice receives both contributions", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(29);
  test::check_op_gradient<T>("hadamard(x, x)", {random.make<T>(3, 2)},
                             [](const auto& in) { return hadamard(in[0], in[0]); });
}

TEST_CASE("hadamard: shapes must match exactly, and the error says so") {
  Tape<double> tape;
  auto a = tape.input(Matrix<double>::Ones(2, 3), "A");
  auto b = tape.input(Matrix<double>::Ones(3, 2), "B");
  CHECK_THROWS_WITH_AS(hadamard(a, b),
                       "hadamard(A, B): A is 2x3 but B is 3x2; shapes must be equal (tapegrad does not broadcast)",
                       ShapeError);
}
