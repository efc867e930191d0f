#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("layer_norm: (x - mean) / sqrt(var + eps) per row, variance divided by n; a constant row is 0", T,
                   TAPEGRAD_TEST_TYPES) {
  using std::sqrt;
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(1), T(2), T(3)}, {T(5), T(5), T(5)}}));
  auto y = layer_norm(a);
  const T eps = from_decimal<T>("1e-5");
  const T s = sqrt(T(2) / T(3) + eps); // mean 2, variance (1 + 0 + 1) / 3
  test::check_close<T>("layer_norm", y.value(), matrix<T>({{T(-1) / s, T(0), T(1) / s}, {T(0), T(0), T(0)}}),
                       test::exact_tolerance<T>());
  tape.backward(sum(y));
  CHECK(is_finite(a.grad().sum()));
  // the gradient of sum(layer_norm(x)) is 0 in truth (each row of the result sums to 0)
  CHECK(a.grad().cwiseAbs().maxCoeff() <= test::exact_tolerance<T>() * T(16));
  // eps = 0 on a constant row: 0 / 0, the NaN the formula gives (graph-format-v2 defines no error there)
  auto c = tape.input(matrix<T>({{T(1), T(2)}, {T(3), T(3)}}), "C");
  const Var<T> n0 = layer_norm(c, T(0), "N");
  CHECK(is_nan(n0.value()(1, 0)));
  CHECK(n0.value()(0, 1) == T(1));
}

TEST_CASE("layer_norm: the default eps is the decimal 1e-5 to every digit, not the double nearest it") {
  const float50 eps = default_eps<float50>().number("eps");
  CHECK(eps == float50("1e-5"));
  CHECK(eps != float50(1e-5));
}

TEST_CASE_TEMPLATE("layer_norm: gradient against central differences, non-square, default and given eps", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(103);
  const Matrix<T> x = random.make<T>(2, 4);
  test::check_op_gradient<T>("layer_norm", {x}, [](const auto& in) { return layer_norm(in[0]); });
  test::check_op_gradient<T>("layer_norm eps 1/4", {x}, [](const auto& in) { return layer_norm(in[0], T(1) / T(4)); });
}
