#include "../support.hpp"

#include <array>

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

namespace {
/// Entries j / 8 for j in -9 ... 9: the products and sums below stay multiples of 1/64 of magnitude under
/// 2^10, exact in double, so BLAS, the transposed product and the loops agree bit for bit. A period dividing
/// a square matrix's width minus 1 would make it symmetric (the entry a function of i + j), hiding a missing
/// transpose: 19 divides none of 255, 127, 63, 15, 129 and 199.
Matrix<double> exact_entries(Eigen::Index rows, Eigen::Index cols, long salt) {
  return test::exact_entries<double>(rows, cols, 19, 8, salt);
}
} // namespace

TEST_CASE("matmul: a product made transposed (few rows, many columns) equals the direct one in all four forms") {
  CHECK(transposed_is_faster<double>(64, 256, 128) == products_use_blas);
  CHECK(transposed_is_faster<double>(16, 256, 256) == products_use_blas);
  CHECK(transposed_is_faster<double>(8, 130, 200) == products_use_blas);
  CHECK_FALSE(transposed_is_faster<double>(128, 256, 128));     // too many rows
  CHECK_FALSE(transposed_is_faster<double>(64, 64, 256));       // square
  CHECK_FALSE(transposed_is_faster<double>(64, 256, 64));       // too short a product for the copy to pay
  CHECK_FALSE(transposed_is_faster<double>(1, 256, 256));       // fewer rows than measured
  CHECK_FALSE(transposed_is_faster<float>(64, 256, 128));       // not measured
  CHECK_FALSE(transposed_is_faster<long double>(64, 256, 128)); // Eigen's own GEMM
  CHECK_FALSE(transposed_is_faster<tapegrad::float50>(64, 256, 128));
  constexpr Transposed N = Transposed::no, Tr = Transposed::yes;
  for (const auto& [rows, cols, inner] : {std::array<Eigen::Index, 3>{64, 256, 128},
                                          {16, 256, 256},
                                          {128, 256, 128},
                                          {64, 64, 256},
                                          {8, 130, 200},
                                          {1, 130, 200}})
    for (const Transposed ta : {N, Tr})
      for (const Transposed tb : {N, Tr}) {
        const std::string form = std::to_string(rows) + " x " + std::to_string(cols) + ", inner " +
                                 std::to_string(inner) + (ta == Tr ? ", a^T" : ", a") + (tb == Tr ? " b^T" : " b");
        CAPTURE(form);
        // a and b stored as the form reads them
        const Matrix<double> a = ta == N ? exact_entries(rows, inner, 1) : exact_entries(inner, rows, 1);
        const Matrix<double> b = tb == N ? exact_entries(inner, cols, 2) : exact_entries(cols, inner, 2);
        const Matrix<double> opa = ta == N ? a : Matrix<double>(a.transpose());
        const Matrix<double> opb = tb == N ? b : Matrix<double>(b.transpose());
        const Matrix<double> expected = matmul_loops(opa, opb);
        Matrix<double> c(rows, cols), work = Matrix<double>::Constant(3, 5, 99); // a work matrix of another shape
        product(c, a, ta, b, tb, work);
        CHECK(c == expected);
      }
  Matrix<double> a = exact_entries(16, 256, 1), b = exact_entries(256, 256, 2), c(16, 256);
  CHECK_THROWS_WITH_AS(product(c, a, N, b, N, b), "product: the work matrix is also the result or an operand",
                       UsageError);
  CHECK_THROWS_AS(product(c, a, N, b, N, c), UsageError);
}

TEST_CASE("matmul: gradients through products made transposed, as the first contribution and as the second") {
  // a1 (16 x 256) feeds a1 b1 and a1 b3 (by 256 x 256): the values and both d/da1 (16 x 256, inner 256) are
  // wide, the second added to the first. b2 (64 x 256) feeds a2 b2 and a3 b2 (128 x 64 by 64 x 256): d/db2
  // (64 x 256, inner 128) is wide in both. y = sum over the four products P of sum(P (*) G_P): d/dP = G_P.
  REQUIRE(transposed_is_faster<double>(16, 256, 256) == products_use_blas);
  REQUIRE(transposed_is_faster<double>(64, 256, 128) == products_use_blas);
  const Matrix<double> A1 = exact_entries(16, 256, 1), B1 = exact_entries(256, 256, 2), B3 = exact_entries(256, 256, 9);
  const Matrix<double> A2 = exact_entries(128, 64, 4), A3 = exact_entries(128, 64, 5), B2 = exact_entries(64, 256, 6);
  const Matrix<double> G1 = exact_entries(16, 256, 3), G4 = exact_entries(16, 256, 10);
  const Matrix<double> G2 = exact_entries(128, 256, 7), G3 = exact_entries(128, 256, 8);
  REQUIRE(B1 != Matrix<double>(B1.transpose())); // a missing transpose would show
  const auto t = [](const Matrix<double>& m) { return Matrix<double>(m.transpose()); };
  Tape<double> tape;
  auto a1 = tape.input(A1, "a1"), b1 = tape.input(B1, "b1"), b3 = tape.input(B3, "b3"), a2 = tape.input(A2, "a2"),
       a3 = tape.input(A3, "a3"), b2 = tape.input(B2, "b2"), g1 = tape.input(G1, "G1"), g4 = tape.input(G4, "G4"),
       g2 = tape.input(G2, "G2"), g3 = tape.input(G3, "G3");
  auto c1 = matmul(a1, b1);
  CHECK(c1.value() == matmul_loops(A1, B1));
  auto y = add(add(sum(hadamard(c1, g1)), sum(hadamard(matmul(a1, b3), g4))),
               add(sum(hadamard(matmul(a2, b2), g2)), sum(hadamard(matmul(a3, b2), g3))));
  tape.backward(y);
  CHECK(a1.grad() == Matrix<double>(matmul_loops(G1, t(B1)) + matmul_loops(G4, t(B3))));
  CHECK(b1.grad() == matmul_loops(t(A1), G1));
  CHECK(b2.grad() == Matrix<double>(matmul_loops(t(A2), G2) + matmul_loops(t(A3), G3)));
  CHECK(a2.grad() == matmul_loops(G2, t(B2)));
}

TEST_CASE_TEMPLATE("matmul as torch.matmul: batches broadcast, rank-1 operands", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(2024);
  // values against the definition, entry by entry: a (2, 1, 3, 4) times b (5, 4, 2) -> (2, 5, 3, 2)
  const Tensor<T> a = random.tensor<T>({2, 1, 3, 4}), b = random.tensor<T>({5, 4, 2});
  Tape<T> tape;
  const Tensor<T> c = matmul(tape.input(a, "a"), tape.input(b, "b")).tensor();
  REQUIRE(c.shape() == Shape{2, 5, 3, 2});
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index h = 0; h < 5; ++h)
      for (Eigen::Index r = 0; r < 3; ++r)
        for (Eigen::Index q = 0; q < 2; ++q) {
          T expected(0);
          for (Eigen::Index k = 0; k < 4; ++k)
            expected += a.at({i, 0, r, k}) * b.at({h, k, q});
          CHECK(c.at({i, h, r, q}) == expected);
        }
  const Tensor<T> u = random.tensor<T>({4}), v = random.tensor<T>({4});
  const Var<T> dot = matmul(tape.input(u, "u"), tape.input(v, "v"));
  CHECK(dot.shape() == Shape{});
  T expected(0);
  for (Eigen::Index k = 0; k < 4; ++k)
    expected += u[k] * v[k];
  CHECK(dot.tensor()[0] == expected);
  CHECK(matmul(tape.input(u, "u"), tape.input(b, "b")).shape() == Shape{5, 2});
  CHECK(matmul(tape.input(a, "a"), tape.input(v, "v")).shape() == Shape{2, 1, 3});
  CHECK_THROWS_WITH_AS(matmul(tape.input(a, "a"), tape.input(random.tensor<T>({3, 3, 2}), "w")),
                       "matmul(a, w): a is 2x1x3x4 but w is 3x3x2; the left's last dim must equal the right's "
                       "second to last (its only one, for rank 1)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(
      matmul(tape.input(random.tensor<T>({2, 3, 4}), "x"), tape.input(random.tensor<T>({3, 4, 2}), "y")),
      "matmul(x, y): x is 2x3x4 but y is 3x4x2; the batch dims (all but the last two) must broadcast", ShapeError);
  CHECK_THROWS_WITH_AS(matmul(tape.input(Tensor<T>(T(2)), "s"), tape.input(v, "v")),
                       "matmul(s, v): s is [] but v is [4]; both operands need rank >= 1 (a rank-0 value is a scale: "
                       "use scale or mul)",
                       ShapeError);

  using V = std::vector<Var<T>>;
  const auto mm = [](const V& in) { return matmul(in[0], in[1]); };
  test::check_tensor_gradient<T>("batched, both repeated", {a, b}, mm);
  test::check_tensor_gradient<T>("batch of 3 times a matrix", {random.tensor<T>({3, 2, 4}), random.tensor<T>({4, 5})},
                                 mm);
  test::check_tensor_gradient<T>("vector times batch", {random.tensor<T>({4}), b}, mm);
  test::check_tensor_gradient<T>("batch times vector", {a, random.tensor<T>({4})}, mm);
  test::check_tensor_gradient<T>("dot", {u, v}, mm);
  test::check_tensor_gradient<T>("rank 4 attention scores",
                                 {random.tensor<T>({2, 2, 3, 4}), random.tensor<T>({2, 2, 4, 3})}, mm);
}
