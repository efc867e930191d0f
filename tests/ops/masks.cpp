#include "../support.hpp"

#include <limits>

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

TEST_CASE("causal_mask: the extreme offsets mask everything or nothing, with no overflow (found by fuzzing)") {
  // j <= i + offset was computed as written and overflowed at offset = LONG_MAX (UBSan, tests/fuzz graph_ops).
  test::RandomMatrices random(5);
  const Matrix<double> s = random.make<double>(3, 4);
  Tape<double> tape;
  const auto all = causal_mask(tape.input(s), std::numeric_limits<long>::max());
  CHECK(all.value() == s);
  const auto none = causal_mask(tape.input(s), std::numeric_limits<long>::min());
  CHECK((none.value().array() == -infinity<double>()).all());
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

TEST_CASE_TEMPLATE("causal_mask: fewer queries than keys (cached positions), query i sees keys 0..i+offset", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(29);
  const Matrix<T> s = random.make<T>(2, 5); // 2 new queries after 3 cached positions
  Tape<T> tape;
  auto x = tape.input(s, "S");
  auto a = softmax_rows(causal_mask(x, 3), "A");
  CHECK(a.value()(0, 4) == T(0));            // query 0 (position 3) does not see key 4
  CHECK(a.value().row(1).minCoeff() > T(0)); // query 1 (position 4) sees all five
  tape.backward(a, random.make<T>(2, 5));
  CHECK(x.grad()(0, 4) == T(0));
  test::check_op_gradient<T>("causal_mask(offset 3) then softmax_rows on 2x5", {s},
                             [](const auto& in) { return softmax_rows(causal_mask(in[0], 3)); });
}

TEST_CASE_TEMPLATE("padding_mask: padded keys get weight exactly 0 and gradient exactly 0", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(31);
  const Matrix<T> s = random.make<T>(3, 4);
  const std::vector<bool> keys{true, false, true, false};
  Tape<T> tape;
  auto x = tape.input(s, "S");
  auto m = padding_mask(x, keys, "M");
  auto a = softmax_rows(m, "A");
  tape.backward(a, random.make<T>(3, 4));
  for (Eigen::Index i = 0; i < 3; ++i)
    for (Eigen::Index j = 0; j < 4; ++j) {
      CHECK((m.value()(i, j) == -infinity<T>()) == !keys[static_cast<std::size_t>(j)]);
      if (!keys[static_cast<std::size_t>(j)]) {
        CHECK(a.value()(i, j) == T(0));
        CHECK(x.grad()(i, j) == T(0));
      }
    }
  test::check_op_gradient<T>("padding_mask then softmax_rows", {s},
                             [keys](const auto& in) { return softmax_rows(padding_mask(in[0], keys)); });
}

TEST_CASE_TEMPLATE("a fully masked row: output 0, every gradient exactly 0, no NaN; strict mode names the row", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(37);
  Tape<T> tape;
  auto s = tape.input(random.make<T>(3, 3), "S");
  auto v = tape.input(random.make<T>(3, 2), "V");
  // query 0 sees only key 2, which is padding: nothing left
  auto m = padding_mask(causal_mask(s, 2, "Mc"), {true, true, false}, "M");
  auto m2 = causal_mask(m, -1, "Mneg"); // and offset -1 hides everything from query 0 as well
  auto a = softmax_rows(m2, "A");
  auto o = matmul(a, v, "O");
  tape.backward(sum(o, "J"));
  CHECK(o.value().row(0) == Matrix<T>::Zero(1, 2));
  CHECK(s.grad().row(0) == Matrix<T>::Zero(1, 3));
  for (const Matrix<T>* g : {&s.grad(), &v.grad(), &o.value(), &a.value()})
    for (Eigen::Index k = 0; k < g->size(); ++k)
      CHECK(is_finite(g->data()[k]));
  CHECK(v.grad().row(2) == Matrix<T>::Zero(1, 2)); // key 2 is padding: no query used its value
  CHECK_THROWS_WITH_AS(softmax_rows(m2, "A", MaskedRows::error),
                       "softmax_rows(Mneg): row 0 of Mneg (3x3) is entirely -inf: every key is masked for that query "
                       "(strict mode, MaskedRows::error)",
                       UsageError);
}

TEST_CASE("padding_mask: a key mask of the wrong length is a ShapeError naming op, operand and shape") {
  Tape<double> tape;
  auto s = tape.input(Matrix<double>::Zero(2, 3), "S");
  CHECK_THROWS_WITH_AS(padding_mask(s, {true, false}),
                       "padding_mask(S): S is 2x3 but the key mask has 2 flags; it needs one per column (key)",
                       ShapeError);
}

TEST_CASE_TEMPLATE("masks act on the last two dims of any rank >= 2, the same on every trailing matrix", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(616);
  const Tensor<T> x = random.tensor<T>({2, 2, 3, 4});
  Tape<T> tape;
  const Var<T> s = tape.input(x, "S");
  const Tensor<T> c = causal_mask(s, 1).tensor(), p = padding_mask(s, {true, false, true, true}).tensor();
  for (Eigen::Index b = 0; b < 2; ++b)
    for (Eigen::Index h = 0; h < 2; ++h)
      for (Eigen::Index i = 0; i < 3; ++i)
        for (Eigen::Index j = 0; j < 4; ++j) {
          CHECK(c.at({b, h, i, j}) == (j <= i + 1 ? x.at({b, h, i, j}) : -infinity<T>()));
          CHECK(p.at({b, h, i, j}) == (j != 1 ? x.at({b, h, i, j}) : -infinity<T>()));
        }
  CHECK_THROWS_WITH_AS(causal_mask(tape.input(Tensor<T>{T(1), T(2)}, "v")),
                       "causal_mask(v): v is [2] (rank 1); a mask acts on the last two dims (queries x keys), so it "
                       "needs rank >= 2",
                       ShapeError);
  using V = std::vector<Var<T>>;
  test::check_tensor_gradient<T>("softmax of a causal mask, rank 4", {x},
                                 [](const V& in) { return softmax(causal_mask(in[0]), -1); });
}
