#include "../support.hpp"

using namespace tapegrad;

TEST_CASE_TEMPLATE("embedding: rows looked up for indices of any shape; repeated indices add their gradients", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(93);
  const Tensor<T> w = random.tensor<T>({5, 3});
  const Tensor<long> idx(Shape{2, 3}, std::vector<long>{4, 0, 4, 2, 4, 1}); // 4 three times, 3 never
  Tape<T> tape;
  const Var<T> W = tape.input(w, "W");
  const Var<T> e = embedding(W, idx);
  REQUIRE(e.shape() == Shape{2, 3, 3});
  for (Eigen::Index p = 0; p < 6; ++p)
    for (Eigen::Index j = 0; j < 3; ++j)
      CHECK(e.tensor()[p * 3 + j] == w.at({idx[p], j}));
  tape.backward(sum(e));
  for (Eigen::Index j = 0; j < 3; ++j) {
    CHECK(W.grad_tensor().at({4, j}) == T(3)); // three lookups of row 4 add
    CHECK(W.grad_tensor().at({3, j}) == T(0));
    CHECK(W.grad_tensor().at({0, j}) == T(1));
  }
  CHECK_THROWS_WITH_AS(embedding(W, Tensor<long>(Shape{2}, std::vector<long>{1, 5})),
                       "embedding(W): index 5 at (1) is outside [0, 5) (W has 5 rows)", ShapeError);
  CHECK_THROWS_WITH_AS(embedding(tape.input(random.tensor<T>({5}), "v"), idx),
                       "embedding(v): the weight v is [5]; it is a table of rank 2 (V x D)", ShapeError);
  using V = std::vector<Var<T>>;
  test::check_tensor_gradient<T>("embedding", {w}, [idx](const V& in) { return embedding(in[0], idx); });
  test::check_tensor_gradient<T>("embedding of a rank-0 index", {w}, [](const V& in) {
    return embedding(in[0], Tensor<long>(Shape{}, std::vector<long>{2}));
  });
}
