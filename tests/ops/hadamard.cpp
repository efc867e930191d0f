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
  CHECK_THROWS_WITH_AS(
      hadamard(a, b),
      "hadamard(A, B): A is 2x3 but B is 3x2; per axis the sizes must be equal or one of them 1 (broadcasting)",
      ShapeError);
  CHECK_THROWS_WITH_AS(
      hadamard(c, a),
      "hadamard(C, A): C is 2x2 but A is 2x3; per axis the sizes must be equal or one of them 1 (broadcasting)",
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
