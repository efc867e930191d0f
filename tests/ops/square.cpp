#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("square: value of a hand-computed case", T, TAPEGRAD_TEST_TYPES) {
  using std::sqrt;
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(-3), T(0), T(1) / T(4)}, {sqrt(T(2)), T(5), T(-7) / T(8)}}));
  test::check_close<T>("square", square(a).value(),
                       matrix<T>({{T(9), T(0), T(1) / T(16)}, {T(2), T(25), T(49) / T(64)}}),
                       test::exact_tolerance<T>());
  CHECK(square(tape.input(matrix<T>({{-infinity<T>()}}))).value()(0, 0) == infinity<T>());
}

TEST_CASE_TEMPLATE("square: gradient against central differences, non-square", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(61);
  test::check_op_gradient<T>("square", {random.make<T>(2, 3)}, [](const auto& in) { return square(in[0]); });
}
