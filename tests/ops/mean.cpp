#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("mean: over everything, down the rows (axis 0) and along each row (axis 1)", T,
                   TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(1), T(2), T(4)}, {T(4), T(5), T(-6)}}));
  CHECK(mean(a).value() == matrix<T>({{T(10) / T(6)}}));
  CHECK(mean(a, 0).value() == matrix<T>({{T(5) / T(2), T(7) / T(2), T(-1)}}));
  CHECK(mean(a, 1).value() == matrix<T>({{T(7) / T(3)}, {T(1)}}));
  tape.backward(sum(mean(a, 0)));
  CHECK(a.grad() == Matrix<T>::Constant(2, 3, T(1) / T(2)));
}

TEST_CASE_TEMPLATE("mean: gradient against central differences, every axis, non-square", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(89);
  const Matrix<T> x = random.make<T>(2, 3);
  test::check_op_gradient<T>("mean", {x}, [](const auto& in) { return mean(in[0]); });
  test::check_op_gradient<T>("mean axis 0", {x}, [](const auto& in) { return mean(in[0], 0); });
  test::check_op_gradient<T>("mean axis 1", {x}, [](const auto& in) { return mean(in[0], 1); });
}

TEST_CASE("mean: an axis other than 0 and 1 is a ShapeError naming it") {
  Tape<double> tape;
  auto a = tape.input(Matrix<double>::Ones(2, 3), "A");
  CHECK_THROWS_WITH_AS(mean(a, 2),
                       "mean(A, axis 2): axis is 0 (each column summed over the rows) or 1 (each row summed over the "
                       "columns)",
                       ShapeError);
}
