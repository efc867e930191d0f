#include "../support.hpp"

using namespace tapegrad;

namespace {
/// A tensor of `shape` whose entries are distinct (entry k is ((37 k) mod 61 - 30) / 8, for up to 61 entries) and
/// not monotone along any dim: no ties, and the maximum of a slice sits at different positions.
template <Real T> Tensor<T> distinct(const Shape& shape) {
  Tensor<T> t = Tensor<T>::zeros(shape);
  for (Eigen::Index k = 0; k < t.numel(); ++k)
    t[k] = T((37 * static_cast<long>(k)) % 61 - 30) / T(8);
  return t;
}
} // namespace

TEST_CASE_TEMPLATE("amax: the maximum over dims; a tie splits the gradient evenly", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  // 2x3: rows (1, 5, 5) and (-2, 4, 0); columns' maxima 1, 5, 5
  const Var<T> a = tape.input(Tensor<T>{{T(1), T(5), T(5)}, {T(-2), T(4), T(0)}}, "A");
  const Var<T> m = amax(a, {1});
  CHECK(m.shape() == Shape{2});
  CHECK(m.tensor()[0] == T(5));
  CHECK(m.tensor()[1] == T(4));
  CHECK(amax(a, {0}, true).shape() == Shape{1, 3});
  CHECK(amax(a, {0, 1}).shape() == Shape{});
  CHECK(amax(a, {-1, 0}).tensor()[0] == T(5));
  tape.backward(m, Tensor<T>{T(2), T(3)});
  const Tensor<T> g = a.grad_tensor();
  // row 0: the two 5s share 2; row 1: the 4 takes 3
  const T expected[] = {T(0), T(1), T(1), T(0), T(3), T(0)};
  for (Eigen::Index e = 0; e < 6; ++e)
    CHECK(g[e] == expected[e]);
  CHECK_THROWS_AS(amax(a, {2}), ShapeError);
  CHECK_THROWS_AS(amax(tape.input(Tensor<T>(Shape{}, Matrix<T>::Constant(1, 1, T(1))), "S"), {0}), ShapeError);
}

TEST_CASE_TEMPLATE("amax: gradient against central differences, ranks 1 to 4, non-square, no ties", T,
                   TAPEGRAD_TEST_TYPES) {
  using V = std::vector<Var<T>>;
  test::check_tensor_gradient<T>("amax rank 1", {distinct<T>({5})}, [](const V& in) { return amax(in[0], {0}); });
  test::check_tensor_gradient<T>("amax rank 2 dim 0", {distinct<T>({3, 4})},
                                 [](const V& in) { return amax(in[0], {0}); });
  test::check_tensor_gradient<T>("amax rank 3 dims 0 and 2, keepdim", {distinct<T>({2, 3, 4})}, [](const V& in) {
    return amax(in[0], {0, 2}, true);
  });
  test::check_tensor_gradient<T>("amax rank 4 dim 1", {distinct<T>({2, 3, 2, 4})},
                                 [](const V& in) { return amax(in[0], {1}); });
}
