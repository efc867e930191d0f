#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("tanh: tanh(ln 2) = 3/5, tanh(-ln 3) = -4/5, and +-1e4 saturate with finite gradients", T,
                   TAPEGRAD_TEST_TYPES) {
  using std::log;
  Tape<T> tape;
  const T l2 = log(T(2)), l3 = log(T(3)), big(10000);
  auto a = tape.input(matrix<T>({{l2, -l3, T(0)}, {big, -big, -infinity<T>()}}));
  auto y = tanh(a);
  test::check_close<T>("tanh", y.value(), matrix<T>({{T(3) / T(5), T(-4) / T(5), T(0)}, {T(1), T(-1), T(-1)}}),
                       test::exact_tolerance<T>());
  tape.backward(sum(y));
  // 1 - tanh^2: 16/25 and 9/25; 0 where saturated
  test::check_close<T>("d tanh", a.grad(), matrix<T>({{T(16) / T(25), T(9) / T(25), T(1)}, {T(0), T(0), T(0)}}),
                       test::exact_tolerance<T>());
}

TEST_CASE_TEMPLATE("tanh: gradient against central differences, non-square", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(67);
  test::check_op_gradient<T>("tanh", {random.make<T>(2, 3)}, [](const auto& in) { return tanh(in[0]); });
}

TEST_CASE_TEMPLATE("tanh: the derivative at 30 keeps every digit where tanh rounds to 1", T, TAPEGRAD_TEST_TYPES) {
  using std::abs;
  using std::exp;
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(30), T(-30)}}));
  tape.backward(sum(tanh(a)));
  const T e = exp(T(-60)); // 1 - tanh(30)^2 = 4 e / (1 + e)^2, e = e^-60
  const T expected = T(4) * e / ((T(1) + e) * (T(1) + e));
  CHECK(abs(a.grad()(0, 0) / expected - T(1)) <= test::exact_tolerance<T>());
  CHECK(abs(a.grad()(0, 1) / expected - T(1)) <= test::exact_tolerance<T>());
}
