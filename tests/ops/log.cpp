#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("log: value at 1, e, 1/e and 0", T, TAPEGRAD_TEST_TYPES) {
  using std::exp;
  Tape<T> tape;
  const T e = exp(T(1));
  auto l = log(tape.input(matrix<T>({{T(1), e, T(1) / e}, {e * e, T(1) / (e * e * e), T(0)}})));
  const Matrix<T> expected = matrix<T>({{T(0), T(1), T(-1)}, {T(2), T(-3), -infinity<T>()}});
  CHECK(l.value()(1, 2) == -infinity<T>());
  Matrix<T> finite_part = l.value(), expected_part = expected;
  finite_part(1, 2) = expected_part(1, 2) = T(0);
  test::check_close<T>("log", finite_part, expected_part, test::exact_tolerance<T>());
}

TEST_CASE_TEMPLATE("log: gradient against central differences on positive inputs", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(37);
  // Entries in [1, 3]: the tolerance assumes derivatives of order 1, and log^(7)(x) = 720 / x^7.
  test::check_op_gradient<T>("log", {random.make<T>(3, 2, 8, 24)}, [](const auto& in) { return log(in[0]); });
}
