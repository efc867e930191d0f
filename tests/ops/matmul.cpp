#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("matmul: value of a hand-computed 2x3 by 3x2 product", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(1), T(2), T(3)}, {T(4), T(5), T(6)}}), "a");
  auto b = tape.input(matrix<T>({{T(1), T(0)}, {T(0), T(1)}, {T(1), T(-1)}}), "b");
  auto c = matmul(a, b);
  CHECK(c.value() == matrix<T>({{T(4), T(-1)}, {T(10), T(-1)}}));
  CHECK(tape.node(c.index()).op == &MatMulOp::info);
  CHECK(tape.node(c.index()).op->node == "MatMul");
}

TEST_CASE_TEMPLATE("matmul: gradient against central differences on non-square inputs", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(20261129);
  test::check_op_gradient<T>("matmul", {random.make<T>(2, 3), random.make<T>(3, 4)},
                             [](const auto& in) { return matmul(in[0], in[1]); });
}

TEST_CASE_TEMPLATE("matmul: the transpose trap's pair gives Q K^T != Q K", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto Q = tape.input(chapter::trap_Q<T>(), "Q");
  auto K = tape.input(chapter::trap_K<T>(), "K");
  CHECK(matmul(Q, transpose(K)).value() == matrix<T>({{T(1), T(4)}, {T(0), T(1)}}));
  CHECK(matmul(Q, K).value() == matrix<T>({{T(5), T(2)}, {T(2), T(1)}}));
}

TEST_CASE("matmul: a shape mismatch names the op, both labels and both shapes") {
  Tape<double> tape;
  auto Q = tape.input(Matrix<double>::Ones(3, 4), "Q");
  auto Kt = tape.input(Matrix<double>::Ones(3, 3), "Kt");
  CHECK_THROWS_WITH_AS(matmul(Q, Kt),
                       "matmul(Q, Kt): Q is 3x4 but Kt is 3x3; columns of the left must equal rows of the right",
                       ShapeError);
  auto unnamed = tape.input(Matrix<double>::Ones(2, 2));
  CHECK_THROWS_WITH_AS(matmul(Q, unnamed),
                       "matmul(Q, node 2 (Input)): Q is 3x4 but node 2 (Input) is 2x2; columns of the left must "
                       "equal rows of the right",
                       ShapeError);
  CHECK(tape.size() == 3); // nothing recorded by the failed calls
}
