#include "../support.hpp"

using namespace tapegrad;

TEST_CASE_TEMPLATE(
    "logsumexp: log sum exp over dims, shifted by the maximum; an all -inf slice is -inf with gradient 0", T,
    TAPEGRAD_TEST_TYPES) {
  using std::exp;
  using std::log;
  Tape<T> tape;
  const T ln3 = log(T(3));
  // row 0: (0, ln 3) -> log(1 + 3) = 2 ln 2; row 1: -inf, -inf -> -inf; row 2: 1e4 twice -> 1e4 + ln 2
  const T big(10000);
  const Var<T> a = tape.input(Tensor<T>{{T(0), ln3}, {-infinity<T>(), -infinity<T>()}, {big, big}}, "A");
  const Var<T> r = logsumexp(a, {1});
  CHECK(r.shape() == Shape{3});
  const T ln2 = log(T(2));
  CHECK(abs(T(r.tensor()[0] - T(2) * ln2)) <= test::exact_tolerance<T>());
  CHECK(r.tensor()[1] == -infinity<T>());
  CHECK(abs(T(r.tensor()[2] - big - ln2)) <= big * test::exact_tolerance<T>());
  tape.backward(r, Tensor<T>{T(4), T(1), T(2)});
  const Tensor<T> g = a.grad_tensor();
  // the softmax of each row times its upstream: (1/4, 3/4) 4 = (1, 3); zeros; (1/2, 1/2) 2 = (1, 1)
  const T expected[] = {T(1), T(3), T(0), T(0), T(1), T(1)};
  for (Eigen::Index e = 0; e < 6; ++e)
    CHECK(abs(T(g[e] - expected[e])) <= test::exact_tolerance<T>());
  CHECK(logsumexp(a, {0, 1}, true).shape() == Shape{1, 1});
  const Var<T> p = tape.input(Tensor<T>{T(1), infinity<T>()}, "P");
  CHECK_THROWS_WITH_AS(logsumexp(p, {0}),
                       "logsumexp(P): entry (1) of P is +inf: its logsumexp is undefined (inf - inf)", DomainError);
}

TEST_CASE_TEMPLATE("logsumexp: gradient against central differences, ranks 1 to 4, non-square", T,
                   TAPEGRAD_TEST_TYPES) {
  using V = std::vector<Var<T>>;
  test::RandomMatrices random(211);
  test::check_tensor_gradient<T>("logsumexp rank 1", {random.tensor<T>({5})},
                                 [](const V& in) { return logsumexp(in[0], {0}); });
  test::check_tensor_gradient<T>("logsumexp rank 2 dim 0", {random.tensor<T>({3, 4})},
                                 [](const V& in) { return logsumexp(in[0], {0}); });
  test::check_tensor_gradient<T>("logsumexp rank 3 dims 0 and 2, keepdim", {random.tensor<T>({2, 3, 4})},
                                 [](const V& in) {
                                   return logsumexp(in[0], {0, 2}, true);
                                 });
  test::check_tensor_gradient<T>("logsumexp rank 4 dim -2", {random.tensor<T>({2, 3, 4, 2})},
                                 [](const V& in) { return logsumexp(in[0], {-2}); });
}
