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
