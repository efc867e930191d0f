#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("scale: value, with an inexact factor made in T", T, TAPEGRAD_TEST_TYPES) {
  using std::sqrt;
  Tape<T> tape;
  const T c = T(1) / sqrt(T(2));
  auto a = tape.input(matrix<T>({{T(2), T(0), T(-4)}}));
  auto b = scale(a, c);
  CHECK(b.value() == matrix<T>({{T(2) * c, T(0), T(-4) * c}}));
  // 1/sqrt(2) squared is 1/2 to the precision of T: the constant was made in T, not taken from a double.
  using std::abs;
  CHECK(abs(c * c - T(1) / T(2)) <= test::exact_tolerance<T>());
}

TEST_CASE_TEMPLATE("scale: gradient against central differences", T, TAPEGRAD_TEST_TYPES) {
  using std::log;
  test::RandomMatrices random(11);
  const T c = log(T(3));
  test::check_op_gradient<T>("scale", {random.make<T>(3, 2)}, [c](const auto& in) { return scale(in[0], c); });
}
