#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("sqrt: value of a hand-computed case", T, TAPEGRAD_TEST_TYPES) {
  using std::sqrt;
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(4), T(1) / T(4), T(9) / T(16)}, {T(2), T(81), T(1) / T(100)}}));
  test::check_close<T>("sqrt", sqrt(a).value(),
                       matrix<T>({{T(2), T(1) / T(2), T(3) / T(4)}, {sqrt(T(2)), T(9), T(1) / T(10)}}),
                       test::exact_tolerance<T>());
  CHECK(sqrt(tape.input(matrix<T>({{infinity<T>()}}))).value()(0, 0) == infinity<T>());
}

TEST_CASE_TEMPLATE("sqrt: gradient against central differences, non-square", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(63);
  test::check_op_gradient<T>("sqrt", {random.make<T>(3, 2, 8, 24)}, [](const auto& in) { return sqrt(in[0]); });
}

TEST_CASE_TEMPLATE("sqrt: an entry <= 0 (0 included) is a DomainError naming the node and the entry", T,
                   TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(1), T(0)}}), "A");
  CHECK_THROWS_WITH_AS(sqrt(a, "R"), "sqrt(A) for 'R': entry (0, 1) of A is 0; sqrt needs entries > 0", DomainError);
  auto b = tape.input(matrix<T>({{T(-1)}, {T(4)}}), "B");
  CHECK_THROWS_WITH_AS(sqrt(b), "sqrt(B): entry (0, 0) of B is -1; sqrt needs entries > 0", DomainError);
}
