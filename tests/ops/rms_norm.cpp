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

TEST_CASE_TEMPLATE("rms_norm: over the last k dims, times weight; gradients against central differences, ranks 1 to 4",
                   T, TAPEGRAD_TEST_TYPES) {
  using std::sqrt;
  using V = std::vector<Var<T>>;
  Tape<T> tape;
  // (1, 2, 2) over [2, 2]: entries 1, 2, 2, 4, mean square 25/4
  const Var<T> a = tape.input(Tensor<T>{{{T(1), T(2)}, {T(2), T(4)}}}, "A");
  const Var<T> w = tape.input(Tensor<T>{{T(1), T(-1)}, {T(3), T(2)}}, "w");
  const Tensor<T> y = rms_norm(a, w).tensor();
  const T r = sqrt(T(25) / T(4) + from_decimal<T>("1e-5"));
  const T expected[] = {T(1) / r, T(-2) / r, T(6) / r, T(8) / r};
  for (Eigen::Index k = 0; k < 4; ++k)
    CHECK(abs(T(y[k] - expected[k])) <= test::exact_tolerance<T>());
  test::RandomMatrices random(229);
  test::check_tensor_gradient<T>("rms_norm rank 1", {random.tensor<T>({4})},
                                 [](const V& in) { return rms_norm(in[0]); });
  test::check_tensor_gradient<T>("rms_norm rank 3 over [3, 4], weight",
                                 {random.tensor<T>({2, 3, 4}), random.tensor<T>({3, 4})},
                                 [](const V& in) { return rms_norm(in[0], in[1]); });
  test::check_tensor_gradient<T>("rms_norm rank 4 over the last dim", {random.tensor<T>({2, 3, 1, 5})},
                                 [](const V& in) { return rms_norm(in[0], NormOptions<T>{}); });
}
