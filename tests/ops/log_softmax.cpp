#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("log_softmax: log(1/4) and log(3/4) by hand; -inf stays -inf with gradient 0", T,
                   TAPEGRAD_TEST_TYPES) {
  using std::log;
  Tape<T> tape;
  const T l3 = log(T(3));
  auto a = tape.input(matrix<T>({{T(0), l3, -infinity<T>()}, {l3, T(0), T(0)}}));
  auto y = log_softmax(a);
  const Matrix<T> expected = matrix<T>(
      {{log(T(1) / T(4)), log(T(3) / T(4)), -infinity<T>()}, {log(T(3) / T(5)), log(T(1) / T(5)), log(T(1) / T(5))}});
  for (Eigen::Index j = 0; j < 3; ++j)
    CHECK(is_finite(y.value()(1, j)));
  CHECK(y.value()(0, 2) == -infinity<T>());
  test::check_close<T>("log_softmax, finite entries", y.value().row(1), expected.row(1), test::exact_tolerance<T>());
  test::check_close<T>("log_softmax, row with -inf", y.value().block(0, 0, 1, 2), expected.block(0, 0, 1, 2),
                       test::exact_tolerance<T>());
  // J = y[0][0] + y[0][1] + y[0][2] reaches the masked entry with weight 1: its gradient stays 0, and the
  // finite entries see only the finite terms: d/dx_j (y_0 + y_1) = 1 - 2 p_j
  Tape<T> t2;
  auto b = t2.input(matrix<T>({{T(0), l3, -infinity<T>()}}));
  auto z = log_softmax(b);
  t2.backward(z, matrix<T>({{T(1), T(1), T(1)}}));
  test::check_close<T>("d log_softmax", b.grad(), matrix<T>({{T(1) / T(2), T(-1) / T(2), T(0)}}),
                       test::exact_tolerance<T>());
}

TEST_CASE_TEMPLATE("log_softmax: stable at +-1e4, finite values and gradients", T, TAPEGRAD_TEST_TYPES) {
  using std::log;
  Tape<T> tape;
  const T big(10000);
  auto a = tape.input(matrix<T>({{big, -big, T(0)}, {-big, -big, -big}}));
  auto y = log_softmax(a);
  tape.backward(sum(y));
  for (Eigen::Index k = 0; k < 6; ++k) {
    CHECK(is_finite(y.value().data()[k]));
    CHECK(is_finite(a.grad().data()[k]));
  }
  CHECK(abs(y.value()(1, 0) + log(T(3))) <= test::exact_tolerance<T>() * T(2));
}

TEST_CASE_TEMPLATE("log_softmax: gradient against central differences, non-square", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(101);
  test::check_op_gradient<T>("log_softmax", {random.make<T>(2, 3)}, [](const auto& in) { return log_softmax(in[0]); });
}

TEST_CASE("log_softmax: a row that is entirely -inf is a DomainError naming the node and the row") {
  Tape<double> tape;
  auto a = tape.input(matrix<double>({{0, 1}, {-INFINITY, -INFINITY}}), "S");
  CHECK_THROWS_WITH_AS(log_softmax(a, "L"),
                       "log_softmax(S) for 'L': row 1 of S is entirely -inf (every entry masked): its "
                       "log-probabilities are undefined",
                       DomainError);
}
