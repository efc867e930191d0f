#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("sigmoid: sigmoid(ln 3) = 3/4, sigmoid(-ln 3) = 1/4; finite at +-1e4; 0 with gradient 0 at -inf", T,
                   TAPEGRAD_TEST_TYPES) {
  using std::exp;
  using std::log;
  Tape<T> tape;
  const T l3 = log(T(3)), big(10000);
  auto a = tape.input(matrix<T>({{l3, -l3, T(0)}, {big, -big, -infinity<T>()}}));
  auto y = sigmoid(a);
  // sigmoid(-1e4) = e^-1e4 / (1 + e^-1e4): 0 in double (underflow), a tiny positive number in 50 digits
  const T tiny = exp(-big) / (T(1) + exp(-big));
  test::check_close<T>("sigmoid", y.value(), matrix<T>({{T(3) / T(4), T(1) / T(4), T(1) / T(2)}, {T(1), tiny, T(0)}}),
                       test::exact_tolerance<T>());
  tape.backward(sum(y));
  CHECK(is_finite(a.grad().sum()));
  test::check_close<T>("d sigmoid", a.grad().row(0), matrix<T>({{T(3) / T(16), T(3) / T(16), T(1) / T(4)}}),
                       test::exact_tolerance<T>());
  CHECK(a.grad()(1, 2) == T(0));
}

TEST_CASE_TEMPLATE("sigmoid: gradient against central differences, non-square", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(71);
  test::check_op_gradient<T>("sigmoid", {random.make<T>(3, 2)}, [](const auto& in) { return sigmoid(in[0]); });
}

TEST_CASE_TEMPLATE("sigmoid: at +-50 the value and the derivative keep every digit (no threshold, no 1 - s rounding)",
                   T, TAPEGRAD_TEST_TYPES) {
  using std::abs;
  using std::exp;
  Tape<T> tape;
  const T x(50);
  auto a = tape.input(matrix<T>({{-x, x}}));
  auto y = sigmoid(a);
  tape.backward(sum(y));
  const T e = exp(-x); // sigmoid(-x) = e / (1 + e); sigmoid'(+-x) = e / (1 + e)^2
  const T tol = test::exact_tolerance<T>();
  CHECK(abs(y.value()(0, 0) / (e / (T(1) + e)) - T(1)) <= tol);
  CHECK(abs(a.grad()(0, 0) / (e / ((T(1) + e) * (T(1) + e))) - T(1)) <= tol);
  CHECK(abs(a.grad()(0, 1) / (e / ((T(1) + e) * (T(1) + e))) - T(1)) <= tol);
}
