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
