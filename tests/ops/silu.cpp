#include "../support.hpp"

using namespace tapegrad;

TEST_CASE_TEMPLATE("silu: x sigmoid(x), any rank; 0 with gradient 0 at -inf", T, TAPEGRAD_TEST_TYPES) {
  using std::exp;
  test::RandomMatrices random(81);
  const Tensor<T> x = random.tensor<T>({3, 1, 2});
  Tape<T> tape;
  const Tensor<T> y = silu(tape.input(x, "X")).tensor();
  for (Eigen::Index e = 0; e < x.numel(); ++e)
    CHECK(abs(T(y[e] - x[e] / (T(1) + exp(-x[e])))) <= test::exact_tolerance<T>());
  const Var<T> m = tape.input(Tensor<T>{-infinity<T>(), T(0)}, "M");
  const Var<T> s = silu(m);
  CHECK(s.tensor()[0] == T(0));
  tape.backward(sum(s));
  CHECK(m.grad_tensor()[0] == T(0));
  CHECK(m.grad_tensor()[1] == T(1) / T(2)); // s (1 + x (1 - s)) at 0: 1/2
  using V = std::vector<Var<T>>;
  test::check_tensor_gradient<T>("silu", {x}, [](const V& in) { return silu(in[0]); });
  test::check_tensor_gradient<T>("silu rank 0", {random.tensor<T>({})}, [](const V& in) { return silu(in[0]); });
}
