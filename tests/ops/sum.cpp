#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("sum: value is 1x1", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto s = sum(tape.input(matrix<T>({{T(1), T(2), T(3)}, {T(4), T(5), T(-6)}})));
  CHECK(s.rows() == 1);
  CHECK(s.cols() == 1);
  CHECK(s.value()(0, 0) == T(9));
}

TEST_CASE_TEMPLATE("sum: gradient against central differences", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(19);
  test::check_op_gradient<T>("sum", {random.make<T>(2, 5)}, [](const auto& in) { return sum(in[0]); });
}

TEST_CASE_TEMPLATE("sum: down the rows (axis 0, 1 x n) and along each row (axis 1, m x 1)", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(1), T(2), T(3)}, {T(4), T(5), T(-6)}}));
  CHECK(sum(a, 0).value() == matrix<T>({{T(5), T(7), T(-3)}}));
  CHECK(sum(a, 1).value() == matrix<T>({{T(6)}, {T(3)}}));
  test::RandomMatrices random(97);
  const Matrix<T> x = random.make<T>(3, 2);
  test::check_op_gradient<T>("sum axis 0", {x}, [](const auto& in) { return sum(in[0], 0); });
  test::check_op_gradient<T>("sum axis 1", {x}, [](const auto& in) { return sum(in[0], 1); });
}

TEST_CASE("sum: an axis other than 0 and 1 is a ShapeError naming it") {
  Tape<double> tape;
  auto a = tape.input(Matrix<double>::Ones(2, 3), "A");
  CHECK_THROWS_WITH_AS(sum(a, -1),
                       "sum(A, axis -1): axis is 0 (each column summed over the rows) or 1 (each row summed over the "
                       "columns)",
                       ShapeError);
}

TEST_CASE_TEMPLATE("sum and mean over dims, with and without keepdim (torch.sum / torch.mean)", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(31);
  const Tensor<T> x = random.tensor<T>({2, 3, 4});
  Tape<T> tape;
  const Var<T> a = tape.input(x, "A");
  const Tensor<T> s = sum(a, {0, -1}).tensor(), m = mean(a, {1}, true).tensor();
  REQUIRE(s.shape() == Shape{3});
  REQUIRE(m.shape() == Shape{2, 1, 4});
  for (Eigen::Index j = 0; j < 3; ++j) {
    T expected(0);
    for (Eigen::Index i = 0; i < 2; ++i)
      for (Eigen::Index k = 0; k < 4; ++k)
        expected += x.at({i, j, k});
    CHECK(s.at({j}) == expected);
  }
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index k = 0; k < 4; ++k) {
      T total(0);
      for (Eigen::Index j = 0; j < 3; ++j)
        total += x.at({i, j, k});
      CHECK(m.at({i, 0, k}) == T(total / T(3)));
    }
  CHECK(sum(a).shape() == Shape{1, 1, 1}); // no dim: a's rank kept, every size 1
  CHECK(sum(tape.input(Tensor<T>(T(2)))).shape() == Shape{});
  CHECK_THROWS_WITH_AS(sum(a, 0), "sum(A): axis is for matrices, A is 2x3x4 (rank 3); use dim", ShapeError);
  CHECK_THROWS_WITH_AS(sum(a, {1, -2}), "sum(A): dim -2 is named twice", ShapeError);
  CHECK_THROWS_WITH_AS(sum(a, std::vector<long>{}), "sum(A): dim is an empty list", ShapeError);
  CHECK_THROWS_WITH_AS((SumOp::apply<T>(operands(a), Params<T>().set("keepdim", true), {})),
                       "sum(A): keepdim is given without dim", ShapeError);
  CHECK_THROWS_WITH_AS((SumOp::apply<T>(operands(tape.input(Matrix<T>::Ones(2, 2), "M")),
                                        Params<T>().set("axis", 0L).set("dim", std::vector<long>{0}), {})),
                       "sum(M): axis and dim together (axis is a matrix's; dim is any rank's)", ShapeError);

  using V = std::vector<Var<T>>;
  const Tensor<T> r4 = random.tensor<T>({2, 3, 1, 4});
  test::check_tensor_gradient<T>("sum dims 0, 3", {r4}, [](const V& in) { return sum(in[0], {0, 3}); });
  test::check_tensor_gradient<T>("sum dim 1 keepdim", {r4}, [](const V& in) { return sum(in[0], {1}, true); });
  test::check_tensor_gradient<T>("sum dim -1", {r4}, [](const V& in) { return sum(in[0], {-1}); });
  test::check_tensor_gradient<T>("sum all", {r4}, [](const V& in) { return sum(in[0]); });
  test::check_tensor_gradient<T>("mean dims 1, 2", {r4}, [](const V& in) { return mean(in[0], {1, 2}); });
  test::check_tensor_gradient<T>("mean dim 0 keepdim", {r4}, [](const V& in) { return mean(in[0], {0}, true); });
  test::check_tensor_gradient<T>("mean rank 1", {random.tensor<T>({5})}, [](const V& in) { return mean(in[0]); });
}
