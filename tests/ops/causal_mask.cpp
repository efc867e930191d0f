#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("causal_mask: entry (i, j) becomes -inf exactly where j > i + offset", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(3);
  const Matrix<T> s = random.make<T>(3, 5);
  for (long offset : {-1L, 0L, 2L}) {
    Tape<T> tape;
    auto m = causal_mask(tape.input(s), offset);
    for (Eigen::Index i = 0; i < s.rows(); ++i)
      for (Eigen::Index j = 0; j < s.cols(); ++j) {
        if (j > i + offset)
          CHECK(m.value()(i, j) == -infinity<T>());
        else
          CHECK(m.value()(i, j) == s(i, j));
      }
  }
}

TEST_CASE_TEMPLATE("causal_mask: gradient against central differences, masked entries get exactly 0", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(5);
  const Matrix<T> s = random.make<T>(3, 4);
  // The mask alone outputs -inf, which no finite upstream can weigh: check it composed with softmax, as used.
  test::check_op_gradient<T>("causal_mask then softmax_rows, offset 1", {s},
                             [](const auto& in) { return softmax_rows(causal_mask(in[0], 1)); });
  Tape<T> tape;
  auto x = tape.input(s);
  auto m = causal_mask(x, 0);
  tape.backward(m, Matrix<T>::Ones(3, 4));
  CHECK(x.grad() == matrix<T>({{T(1), T(0), T(0), T(0)}, {T(1), T(1), T(0), T(0)}, {T(1), T(1), T(1), T(0)}}));
}
