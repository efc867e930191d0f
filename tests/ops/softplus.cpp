#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("softplus: softplus(ln 3) = ln 4, softplus(-ln 3) = ln 4/3, exact at +-1e4, 0 at -inf", T,
                   TAPEGRAD_TEST_TYPES) {
  using std::exp;
  using std::log;
  Tape<T> tape;
  const T l3 = log(T(3)), big(10000);
  auto a = tape.input(matrix<T>({{l3, -l3, T(0)}, {big, -big, -infinity<T>()}}));
  auto y = softplus(a);
  // log(1 + e^x) exactly: 1e4 + log(1 + e^-1e4) (1e4 to every digit of double), and about e^-1e4 at -1e4
  const T at_minus_big = exp(-big) - exp(-T(2) * big) / T(2); // the series log(1 + u) = u - u^2/2 + ..., u = e^-1e4
  test::check_close<T>("softplus", y.value(),
                       matrix<T>({{log(T(4)), log(T(4) / T(3)), log(T(2))}, {big, at_minus_big, T(0)}}),
                       test::exact_tolerance<T>());
  tape.backward(sum(y));
  // the derivative is sigmoid(x): 3/4, 1/4, 1/2; 1 and about 0 at +-1e4; 0 at -inf
  test::check_close<T>("d softplus", a.grad().row(0), matrix<T>({{T(3) / T(4), T(1) / T(4), T(1) / T(2)}}),
                       test::exact_tolerance<T>());
  CHECK(a.grad()(1, 0) == T(1));
  CHECK(is_finite(a.grad()(1, 1)));
  CHECK(a.grad()(1, 2) == T(0));
}

TEST_CASE_TEMPLATE("softplus: gradient against central differences, non-square", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(73);
  test::check_op_gradient<T>("softplus", {random.make<T>(2, 3)}, [](const auto& in) { return softplus(in[0]); });
}

TEST_CASE_TEMPLATE("softplus: at -50 the value is log1p(e^-50) to every digit, not 0 or a thresholded copy of x", T,
                   TAPEGRAD_TEST_TYPES) {
  using std::abs;
  using std::exp;
  Tape<T> tape;
  const T x(50);
  auto y = softplus(tape.input(matrix<T>({{-x, x}})));
  const T e = exp(-x);
  const T series = e - e * e / T(2) + e * e * e / T(3); // log(1 + e), the rest below 1e-86 relative
  const T tol = test::exact_tolerance<T>();
  CHECK(abs(y.value()(0, 0) / series - T(1)) <= tol);
  CHECK(abs(y.value()(0, 1) - (x + series)) <= tol * x); // x + log(1 + e^-x), not x
  if (digits10<T>() > 30) CHECK(y.value()(0, 1) != x);   // e^-50 is below double's resolution of 50
}
