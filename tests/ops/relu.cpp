#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("relu: value, and the gradient 1 for x > 0 and 0 for x <= 0 (the kink and -inf too)", T,
                   TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(-2), T(0), T(3) / T(8)}, {T(5), T(-1) / T(4), -infinity<T>()}}));
  auto y = relu(a);
  CHECK(y.value() == matrix<T>({{T(0), T(0), T(3) / T(8)}, {T(5), T(0), T(0)}}));
  tape.backward(sum(y));
  CHECK(a.grad() == matrix<T>({{T(0), T(0), T(1)}, {T(1), T(0), T(0)}}));
  CHECK(ReluOp::info.kink);
}

TEST_CASE_TEMPLATE("relu: gradient against central differences away from the kink, non-square", T,
                   TAPEGRAD_TEST_TYPES) {
  const Matrix<T> x = matrix<T>({{T(-3) / T(8), T(1) / T(8)}, {T(9) / T(8), T(5) / T(8)}, {T(-1) / T(8), T(7) / T(8)}});
  test::check_op_gradient<T>("relu", {x}, [](const auto& in) { return relu(in[0]); });
}
