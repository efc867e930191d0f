#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("exp: value at 0, ln 2, ln 3, -ln 2", T, TAPEGRAD_TEST_TYPES) {
  using std::log;
  Tape<T> tape;
  const T l2 = log(T(2)), l3 = log(T(3));
  auto e = exp(tape.input(matrix<T>({{T(0), l2, l3}, {-l2, l2 + l3, -infinity<T>()}})));
  test::check_close<T>("exp", e.value(), matrix<T>({{T(1), T(2), T(3)}, {T(1) / T(2), T(6), T(0)}}),
                       test::exact_tolerance<T>());
}

TEST_CASE_TEMPLATE("exp: gradient against central differences", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(31);
  test::check_op_gradient<T>("exp", {random.make<T>(2, 3)}, [](const auto& in) { return exp(in[0]); });
}
