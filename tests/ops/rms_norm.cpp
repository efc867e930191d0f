#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("rms_norm: x / sqrt(mean(x^2) + eps) per row; a zero row stays 0", T, TAPEGRAD_TEST_TYPES) {
  using std::sqrt;
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(3), T(4)}, {T(0), T(0)}}));
  auto y = rms_norm(a);
  const T r = sqrt(T(25) / T(2) + from_decimal<T>("1e-5"));
  test::check_close<T>("rms_norm", y.value(), matrix<T>({{T(3) / r, T(4) / r}, {T(0), T(0)}}),
                       test::exact_tolerance<T>());
}

TEST_CASE_TEMPLATE("rms_norm: gradient against central differences, non-square, default and given eps", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(107);
  const Matrix<T> x = random.make<T>(3, 2);
  test::check_op_gradient<T>("rms_norm", {x}, [](const auto& in) { return rms_norm(in[0]); });
  test::check_op_gradient<T>("rms_norm eps 1/2", {x}, [](const auto& in) { return rms_norm(in[0], T(1) / T(2)); });
}
