#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("neg: value, and -a is the same node type", T, TAPEGRAD_TEST_TYPES) {
  using std::log;
  Tape<T> tape;
  const T l3 = log(T(3));
  auto a = tape.input(matrix<T>({{T(2), T(0), -l3}, {l3, -infinity<T>(), T(-1) / T(8)}}));
  auto b = neg(a);
  CHECK(b.value() == matrix<T>({{T(-2), -T(0), l3}, {-l3, infinity<T>(), T(1) / T(8)}}));
  auto c = -b;
  CHECK(c.value() == a.value());
  CHECK(tape.node(c.index()).op == &NegOp::info);
}

TEST_CASE_TEMPLATE("neg: gradient against central differences, non-square", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(53);
  test::check_op_gradient<T>("neg", {random.make<T>(2, 3)}, [](const auto& in) { return neg(in[0]); });
  test::check_op_gradient<T>("-a", {random.make<T>(3, 1)}, [](const auto& in) { return -in[0]; });
}
