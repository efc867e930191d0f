#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("gelu: the exact erf form at hand-computed points; gelu(x) - gelu(-x) = x; 0 at -inf", T,
                   TAPEGRAD_TEST_TYPES) {
  using std::erfc;
  using std::sqrt;
  Tape<T> tape;
  const T r2 = sqrt(T(2));
  // gelu(sqrt 2) = sqrt 2 (1 + erf(1)) / 2 = sqrt 2 (2 - erfc(1)) / 2, and gelu(-sqrt 2) = -sqrt 2 erfc(1) / 2
  auto a = tape.input(matrix<T>({{r2, -r2, T(0)}, {T(3) / T(2), T(-3) / T(2), -infinity<T>()}}));
  auto y = gelu(a);
  const T e1 = erfc(T(1));
  test::check_close<T>("gelu", y.value().row(0), matrix<T>({{r2 * (T(2) - e1) / T(2), -r2 * e1 / T(2), T(0)}}),
                       test::exact_tolerance<T>());
  using std::abs;
  CHECK(abs(y.value()(1, 0) - y.value()(1, 1) - T(3) / T(2)) <= test::exact_tolerance<T>());
  CHECK(y.value()(1, 2) == T(0));
  tape.backward(sum(y));
  CHECK(a.grad()(1, 2) == T(0));
  // gelu'(0) = Phi(0) = 1/2
  CHECK(abs(a.grad()(0, 2) - T(1) / T(2)) <= test::exact_tolerance<T>());
}

TEST_CASE("gelu: not the tanh approximation (they differ by about 1e-4 at x = 1)") {
  const double x = 1;
  Tape<double> tape;
  const double exact = gelu(tape.input(Matrix<double>::Constant(1, 1, x))).value()(0, 0);
  const double approx = 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::acos(-1.0)) * (x + 0.044715 * x * x * x)));
  MESSAGE("gelu(1) exact " << exact << ", tanh approximation " << approx);
  CHECK(std::abs(exact - approx) > 1e-5);
  CHECK(std::abs(exact - 0.5 * (1 + std::erf(1 / std::sqrt(2.0)))) < 1e-15);
}

TEST_CASE_TEMPLATE("gelu: gradient against central differences, non-square", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(79);
  test::check_op_gradient<T>("gelu", {random.make<T>(3, 2)}, [](const auto& in) { return gelu(in[0]); });
}

TEST_CASE_TEMPLATE("gelu approximate tanh: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), 0.044715 exact", T,
                   TAPEGRAD_TEST_TYPES) {
  using std::sqrt;
  using std::tanh;
  const T c = sqrt(T(2) / pi<T>()), k = T(44715) / T(1000000);
  test::RandomMatrices random(80);
  const Tensor<T> x = random.tensor<T>({2, 3, 2});
  Tape<T> tape;
  const Tensor<T> y = gelu_tanh(tape.input(x, "X")).tensor();
  for (Eigen::Index e = 0; e < x.numel(); ++e) {
    const T& v = x[e];
    const T expected = v / T(2) * (T(1) + tanh(c * (v + k * v * v * v)));
    CHECK(abs(T(y[e] - expected)) <= test::exact_tolerance<T>() * (T(1) + abs(expected)));
  }
  const Var<T> m = tape.input(Tensor<T>{-infinity<T>(), T(0)}, "M");
  const Var<T> g = gelu_tanh(m);
  CHECK(g.tensor()[0] == T(0));
  tape.backward(sum(g));
  CHECK(m.grad_tensor()[0] == T(0));
  CHECK(abs(T(m.grad_tensor()[1] - T(1) / T(2))) <= test::exact_tolerance<T>()); // gelu'(0) = 1/2
  using V = std::vector<Var<T>>;
  test::check_tensor_gradient<T>("gelu tanh", {x}, [](const V& in) { return gelu_tanh(in[0]); });
}
