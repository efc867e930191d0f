#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("log: value at 1, e, 1/e, e^2 and e^-3", T, TAPEGRAD_TEST_TYPES) {
  using std::exp;
  Tape<T> tape;
  const T e = exp(T(1));
  auto l = log(tape.input(matrix<T>({{T(1), e, T(1) / e}, {e * e, T(1) / (e * e * e), T(1)}})));
  const Matrix<T> expected = matrix<T>({{T(0), T(1), T(-1)}, {T(2), T(-3), T(0)}});
  test::check_close<T>("log", l.value(), expected, test::exact_tolerance<T>());
}

TEST_CASE_TEMPLATE("log: an entry <= 0 (or NaN) is a DomainError naming the operand, the node and the entry", T,
                   TAPEGRAD_TEST_TYPES) {
  for (const T& bad : {T(0), T(-1) / T(4), -infinity<T>(), std::numeric_limits<T>::quiet_NaN()}) {
    Tape<T> tape;
    const auto x = tape.input(matrix<T>({{T(1), T(2)}, {bad, T(3)}}), "X");
    CHECK_THROWS_AS(log(x, "L"), DomainError);
    try {
      log(x, "L");
    } catch (const DomainError& e) {
      CHECK(std::string(e.what()).rfind("log(X) for 'L': entry (1, 0) of X is ", 0) == 0);
      CHECK(std::string(e.what()).find("; log needs entries > 0") != std::string::npos);
    }
    CHECK(tape.size() == 1); // nothing recorded
  }
}

TEST_CASE_TEMPLATE("log: gradient against central differences on positive inputs", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(37);
  // Entries in [1, 3]: the tolerance assumes derivatives of order 1, and log^(7)(x) = 720 / x^7.
  test::check_op_gradient<T>("log", {random.make<T>(3, 2, 8, 24)}, [](const auto& in) { return log(in[0]); });
}
