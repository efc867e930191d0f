// where and masked_fill: a bool constant chooses entries; the gradient goes only where it chose.
#include "../support.hpp"

using namespace tapegrad;

namespace {
Tensor<bool> pattern(const Shape& s, int period) {
  Tensor<bool> m = Tensor<bool>::zeros(s);
  for (Eigen::Index e = 0; e < m.numel(); ++e)
    m[e] = (e % period) == 1;
  return m;
}
} // namespace

TEST_CASE_TEMPLATE("where(condition, a, b) broadcasts all three; gradients go where each was chosen", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(91);
  const Tensor<T> a = random.tensor<T>({2, 3, 4}), b = random.tensor<T>({4});
  const Tensor<bool> c = pattern({3, 1}, 2); // rows 1 of each 3: true
  Tape<T> tape;
  const Tensor<T> r = where(c, tape.input(a, "a"), tape.input(b, "b")).tensor();
  REQUIRE(r.shape() == Shape{2, 3, 4});
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index j = 0; j < 3; ++j)
      for (Eigen::Index k = 0; k < 4; ++k)
        CHECK(r.at({i, j, k}) == (c.at({j, 0}) ? a.at({i, j, k}) : b.at({k})));
  CHECK_THROWS_WITH_AS(where(pattern({2}, 2), tape.input(a, "a"), tape.input(b, "b")),
                       "where(a, b): the condition is [2] and a is 2x3x4; they must broadcast (aligned at their last "
                       "dims, per dim equal or 1)",
                       ShapeError);
  using V = std::vector<Var<T>>;
  test::check_tensor_gradient<T>("where", {a, b}, [c](const V& in) { return where(c, in[0], in[1]); });
  test::check_tensor_gradient<T>("where, rank-0 operands", {random.tensor<T>({}), random.tensor<T>({2, 2})},
                                 [](const V& in) {
                                   return where(pattern({2, 2}, 3), in[0], in[1]);
                                 });
}

TEST_CASE_TEMPLATE("masked_fill(a, mask, value): the value where the mask is set, a's gradient elsewhere", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(92);
  const Tensor<T> a = random.tensor<T>({2, 4, 3});
  const Tensor<bool> m = pattern({4, 1}, 3);
  Tape<T> tape;
  const Var<T> x = tape.input(a, "a");
  const Tensor<T> r = masked_fill(x, m, -infinity<T>()).tensor();
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index j = 0; j < 4; ++j)
      for (Eigen::Index k = 0; k < 3; ++k)
        CHECK(r.at({i, j, k}) == (m.at({j, 0}) ? -infinity<T>() : a.at({i, j, k})));
  CHECK_THROWS_WITH_AS(masked_fill(tape.input(Tensor<T>{T(1), T(2)}, "v"), pattern({2, 2}, 2), T(0)),
                       "masked_fill(v): the mask is 2x2 and v is [2]; the mask must broadcast to v's shape (the result "
                       "has it)",
                       ShapeError);
  using V = std::vector<Var<T>>;
  test::check_tensor_gradient<T>("masked_fill then softmax", {a},
                                 [m](const V& in) { return softmax(masked_fill(in[0], m, -infinity<T>()), 1); });
  test::check_tensor_gradient<T>("masked_fill with a number", {a},
                                 [m](const V& in) { return masked_fill(in[0], m, T(3) / T(4)); });
}
