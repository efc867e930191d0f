#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("hadamard: value of a hand-computed 2x3 case", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(4), T(-1), T(1)}, {T(1), T(5), T(7)}}), "a");
  auto b = tape.input(matrix<T>({{T(1), T(2), T(4)}, {T(-4), T(2), T(2)}}), "b");
  // the expected entries worked out by hand
  CHECK(hadamard(a, b).value() == matrix<T>({{T(4), T(-2), T(4)}, {T(-4), T(10), T(14)}}));
  // a * b on two Vars is deleted (matmul or hadamard: say which); a * c with c a T scales
}

TEST_CASE_TEMPLATE("hadamard: broadcasting a row, a column and a scalar, worked out by hand", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(4), T(-1), T(1)}, {T(1), T(5), T(7)}}), "a");
  auto r = tape.input(matrix<T>({{T(1), T(2), T(4)}}), "r");
  auto c = tape.input(matrix<T>({{T(2)}, {T(-1)}}), "c");
  auto s = tape.input(matrix<T>({{T(2)}}), "s");
  CHECK(hadamard(a, r).value() == matrix<T>({{T(4), T(-2), T(4)}, {T(1), T(10), T(28)}}));
  CHECK(hadamard(a, c).value() == matrix<T>({{T(8), T(-2), T(2)}, {T(-1), T(-5), T(-7)}}));
  CHECK(hadamard(a, s).value() == matrix<T>({{T(8), T(-2), T(2)}, {T(2), T(10), T(14)}}));
  CHECK(hadamard(c, r).rows() == 2);
  CHECK(hadamard(c, r).cols() == 3);
}

TEST_CASE_TEMPLATE("hadamard: gradient against central differences on every broadcast pattern", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(27);
  test::check_broadcast_gradients<T>("hadamard", random, [](const auto& in) { return hadamard(in[0], in[1]); });
}

TEST_CASE_TEMPLATE("hadamard: a value used twice receives both contributions", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(33);
  test::check_op_gradient<T>("hadamard(x, x)", {random.make<T>(3, 2)},
                             [](const auto& in) { return hadamard(in[0], in[0]); });
}

TEST_CASE("hadamard: shapes that do not broadcast are a ShapeError naming both operands and shapes") {
  Tape<double> tape;
  auto a = tape.input(Matrix<double>::Ones(2, 3), "A");
  auto b = tape.input(Matrix<double>::Ones(3, 2), "B");
  auto c = tape.input(Matrix<double>::Ones(2, 2), "C");
  CHECK_THROWS_WITH_AS(hadamard(a, b),
                       "hadamard(A, B): A is 2x3 but B is 3x2; aligned at their last dims, per dim the sizes must be "
                       "equal or one of them 1 (broadcasting)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(hadamard(c, a),
                       "hadamard(C, A): C is 2x2 but A is 2x3; aligned at their last dims, per dim the sizes must be "
                       "equal or one of them 1 (broadcasting)",
                       ShapeError);
}

TEST_CASE_TEMPLATE("hadamard and div: a broadcast operand over masked (-inf) entries gets 0 from them, not NaN", T,
                   TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto s = tape.input(matrix<T>({{T(1), T(2)}, {T(3), T(4)}}), "S");
  auto tau = tape.input(matrix<T>({{T(2)}}), "tau");
  // causal_mask puts -inf above the diagonal; softmax gives those entries gradient 0
  auto m = causal_mask(s);
  tape.backward(sum(softmax_rows(hadamard(m, tau))) + sum(softmax_rows(div(m, tau))));
  CHECK(is_finite(tau.grad()(0, 0)));
  CHECK(is_finite(s.grad().sum()));
}

TEST_CASE_TEMPLATE("hadamard: the backward's zero-safe product, entry by entry, in whole packets and a tail", T, float,
                   double, long double, tapegrad::float50) {
  // 3 x 5 = 15 entries: float and double go through Eigen's packets (ZeroSafeProduct::packetOp) and then a
  // scalar tail; the others entry by entry. Where the seed is 0 and w is infinite the product is 0; w NaN
  // gives NaN; everything else is seed w.
  const T inf = infinity<T>(), nan = std::numeric_limits<T>::quiet_NaN();
  const Matrix<T> w =
      matrix<T>({{inf, -inf, nan, T(3), T(-2)}, {T(1), inf, -inf, nan, T(5)}, {T(7), T(-1), T(2), inf, -inf}});
  const Matrix<T> seed =
      matrix<T>({{T(0), T(0), T(0), T(0), T(2)}, {T(0), T(3), T(-1), T(4), T(0)}, {T(1), T(2), T(0), T(0), T(0)}});
  Tape<T> tape;
  auto a = tape.input(Matrix<T>(Matrix<T>::Ones(3, 5)), "a");
  auto b = tape.input(w, "w");
  tape.backward(hadamard(a, b), seed);
  for (Eigen::Index i = 0; i < w.rows(); ++i)
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      CAPTURE(i);
      CAPTURE(j);
      const T got = a.grad()(i, j);
      if (is_nan(w(i, j)))
        CHECK(is_nan(got));
      else if (seed(i, j) == T(0))
        CHECK(got == T(0)); // 0 times an infinite entry too
      else
        CHECK(got == seed(i, j) * w(i, j)); // infinite where w is
    }
  CHECK(b.grad() == seed); // times a = 1 everywhere
}
