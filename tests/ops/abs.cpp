#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("abs: value, and the gradient sign(x) with 0 at the kink", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(-2), T(0), T(3) / T(8)}, {T(5), T(-1) / T(4), -infinity<T>()}}));
  auto y = abs(a);
  CHECK(y.value() == matrix<T>({{T(2), T(0), T(3) / T(8)}, {T(5), T(1) / T(4), infinity<T>()}}));
  tape.backward(sum(y));
  CHECK(a.grad() == matrix<T>({{T(-1), T(0), T(1)}, {T(1), T(-1), T(-1)}}));
  CHECK(AbsOp::info.kink);
}

TEST_CASE_TEMPLATE("abs: gradient against central differences away from the kink, non-square", T, TAPEGRAD_TEST_TYPES) {
  // entries k/8 with 1 <= |k| <= 9: every central-difference step stays on one side of 0
  const Matrix<T> x = matrix<T>({{T(-3) / T(8), T(1) / T(8), T(9) / T(8)}, {T(5) / T(8), T(-1) / T(8), T(-7) / T(8)}});
  test::check_op_gradient<T>("abs", {x}, [](const auto& in) { return abs(in[0]); });
}
