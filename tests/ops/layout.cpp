// Layout ops (ops/layout.hpp, transpose with dims): values checked entry by entry against each op's index map
// written out here independently, gradients against central differences on non-square shapes of rank 0 to 4,
// and the errors that name the op, the operand and the dim.
#include "../support.hpp"

using namespace tapegrad;

namespace {

/// Entries 0, 1, 2, ... in row-major order: each value tells where it came from.
template <Real T> Tensor<T> iota(const Shape& s) {
  Tensor<T> t = Tensor<T>::zeros(s);
  for (Eigen::Index e = 0; e < t.numel(); ++e)
    t[e] = T(static_cast<long>(e));
  return t;
}

} // namespace

TEST_CASE_TEMPLATE("reshape keeps row-major order; -1 is inferred, [] makes rank 0", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  const Var<T> a = tape.input(iota<T>({2, 3, 4}), "A");
  const Var<T> r = reshape(a, {4, -1});
  CHECK(r.shape() == Shape{4, 6});
  for (Eigen::Index e = 0; e < 24; ++e)
    CHECK(r.tensor()[e] == T(static_cast<long>(e)));
  const Var<T> one = reshape(tape.input(Tensor<T>::constant({1, 1}, T(7))), {});
  CHECK(one.shape() == Shape{});
  CHECK(one.tensor()[0] == T(7));
  CHECK_THROWS_WITH_AS(reshape(a, {5, -1}), "reshape(A): 24 entries (2x3x4) do not fill sizes with product 5 and a -1",
                       ShapeError);
  CHECK_THROWS_WITH_AS(reshape(a, {2, 3}), "reshape(A): A has 24 entries (2x3x4), shape 2x3 holds 6", ShapeError);
  CHECK_THROWS_WITH_AS(reshape(a, {-1, -1}), "reshape(A): size -1 in shape (sizes are >= 1, or one -1)", ShapeError);
  CHECK_THROWS_WITH_AS(reshape(a, {0, 24}), "reshape(A): size 0 in shape (sizes are >= 1, or one -1)", ShapeError);
}

TEST_CASE_TEMPLATE("permute reads a[j] with j[dims[k]] = i[k]", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  const Shape s{2, 3, 4, 5};
  const Var<T> a = tape.input(iota<T>(s), "A");
  const Var<T> p = permute(a, {2, 0, -1, 1});
  REQUIRE(p.shape() == Shape{4, 2, 5, 3});
  const Tensor<T> v = p.tensor();
  for (Eigen::Index i0 = 0; i0 < 4; ++i0)
    for (Eigen::Index i1 = 0; i1 < 2; ++i1)
      for (Eigen::Index i2 = 0; i2 < 5; ++i2)
        for (Eigen::Index i3 = 0; i3 < 3; ++i3) // a[i1][i3][i0][i2]
          CHECK(v.at({i0, i1, i2, i3}) == T(static_cast<long>(((i1 * 3 + i3) * 4 + i0) * 5 + i2)));
  CHECK_THROWS_WITH_AS(permute(a, {0, 1, 2}), "permute(A): dims has 3 entries for A of rank 4 (2x3x4x5)", ShapeError);
  CHECK_THROWS_WITH_AS(permute(a, {0, 1, 2, -4}), "permute(A): dim -4 is named twice", ShapeError);
  CHECK_THROWS_WITH_AS(permute(a, {0, 1, 2, 4}), "permute(A): dim 4 is out of range for rank 4 (dims are -4 to 3)",
                       ShapeError);
}

TEST_CASE_TEMPLATE("transpose swaps the last two dims, or dim0 and dim1", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  const Var<T> a = tape.input(iota<T>({2, 3, 4}), "A");
  const Tensor<T> last = transpose(a).tensor();
  REQUIRE(last.shape() == Shape{2, 4, 3});
  const Tensor<T> outer = transpose(a, 0, -1).tensor();
  REQUIRE(outer.shape() == Shape{4, 3, 2});
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index j = 0; j < 3; ++j)
      for (Eigen::Index k = 0; k < 4; ++k) {
        const T x = T(static_cast<long>((i * 3 + j) * 4 + k));
        CHECK(last.at({i, k, j}) == x);
        CHECK(outer.at({k, j, i}) == x);
      }
  CHECK(transpose(a, 1, 1).tensor() == a.tensor());
  const Var<T> v = tape.input(Tensor<T>{T(1), T(2)}, "v");
  CHECK_THROWS_WITH_AS(transpose(v),
                       "transpose(v): v is [2] (rank 1); without dim0 and dim1 transpose swaps the last two dims, so "
                       "it needs rank >= 2",
                       ShapeError);
  CHECK_THROWS_WITH_AS((TransposeOp::apply<T>(operands(a), Params<T>().set("dim0", 0L), {})),
                       "transpose(A): dim0 and dim1 go together (give both or neither)", ShapeError);
}

TEST_CASE_TEMPLATE("unsqueeze, squeeze and expand", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  const Var<T> a = tape.input(iota<T>({3, 1}), "A");
  CHECK(unsqueeze(a, 0).shape() == Shape{1, 3, 1});
  CHECK(unsqueeze(a, -1).shape() == Shape{3, 1, 1});
  CHECK(unsqueeze(a, 2).shape() == Shape{3, 1, 1});
  CHECK(squeeze(a, 1).shape() == Shape{3});
  CHECK(squeeze(a, 0).shape() == Shape{3, 1}); // size 3: unchanged, as torch.squeeze(x, dim)
  CHECK_THROWS_WITH_AS(unsqueeze(a, 3), "unsqueeze(A): dim 3 is out of range for rank 3 (dims are -3 to 2)",
                       ShapeError);
  const Tensor<T> e = expand(a, {2, -1, 4}).tensor();
  REQUIRE(e.shape() == Shape{2, 3, 4});
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index j = 0; j < 3; ++j)
      for (Eigen::Index k = 0; k < 4; ++k)
        CHECK(e.at({i, j, k}) == T(static_cast<long>(j)));
  CHECK_THROWS_WITH_AS(expand(a, {2, 4}),
                       "expand(A): dim 0 of size 3 cannot become 2 (only a size 1 grows; -1 keeps it)", ShapeError);
  CHECK_THROWS_WITH_AS(expand(a, {-1, 3, 1}), "expand(A): new leading dim 0 has size -1 (a new dim needs a size >= 1)",
                       ShapeError);
  const Var<T> s = tape.input(Tensor<T>(T(5)), "s");
  CHECK(expand(s, {2, 3}).tensor() == Tensor<T>::constant({2, 3}, T(5)));
  CHECK_THROWS_WITH_AS(squeeze(s, 0), "squeeze(s): dim 0 is out of range for rank 0 (a rank-0 value has no dims)",
                       ShapeError);
}

TEST_CASE_TEMPLATE("layout ops: gradients against central differences, ranks 0 to 4", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(4242);
  const Tensor<T> r4 = random.tensor<T>({2, 3, 1, 4}), r3 = random.tensor<T>({3, 2, 4}), r0 = random.tensor<T>({});
  using V = std::vector<Var<T>>;
  test::check_tensor_gradient<T>("reshape", {r4}, [](const V& in) { return reshape(in[0], {4, 6}); });
  test::check_tensor_gradient<T>("reshape to rank 0", {r0}, [](const V& in) { return reshape(in[0], {1, 1, 1}); });
  test::check_tensor_gradient<T>("permute", {r4}, [](const V& in) { return permute(in[0], {3, 1, 0, 2}); });
  test::check_tensor_gradient<T>("transpose", {r3}, [](const V& in) { return transpose(in[0]); });
  test::check_tensor_gradient<T>("transpose 0 2", {r3}, [](const V& in) { return transpose(in[0], 0, 2); });
  test::check_tensor_gradient<T>("unsqueeze", {r3}, [](const V& in) { return unsqueeze(in[0], 1); });
  test::check_tensor_gradient<T>("squeeze", {r4}, [](const V& in) { return squeeze(in[0], 2); });
  // expand repeats entries: each entry's gradient is the sum over its copies
  test::check_tensor_gradient<T>("expand", {r4}, [](const V& in) { return expand(in[0], {2, 2, 3, 5, 4}); });
  test::check_tensor_gradient<T>("expand rank 0", {r0}, [](const V& in) { return expand(in[0], {3, 2}); });
  // a chain: a view of a permuted tensor, the reshape that is not a transpose
  test::check_tensor_gradient<T>("permute then reshape", {r3}, [](const V& in) {
    return reshape(permute(in[0], {1, 0, 2}), {2, 12});
  });
}

TEST_CASE_TEMPLATE("slice, select, cat and stack", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  const Var<T> a = tape.input(iota<T>({2, 5, 3}), "A");
  const Tensor<T> s = slice(a, 1, -4, 100, 2).tensor(); // indices 1, 3 of dim 1 (start -4 is 1; end clamped to 5)
  REQUIRE(s.shape() == Shape{2, 2, 3});
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index j = 0; j < 2; ++j)
      for (Eigen::Index k = 0; k < 3; ++k)
        CHECK(s.at({i, j, k}) == T(static_cast<long>((i * 5 + 1 + 2 * j) * 3 + k)));
  CHECK_THROWS_WITH_AS(slice(a, 1, 3, 3),
                       "slice(A): start 3, end 3 along dim 1 of size 5 select nothing (an empty result)", ShapeError);
  CHECK_THROWS_WITH_AS(slice(a, 1, 0, 3, 0), "slice(A): step 0 (a step is >= 1)", ShapeError);
  const Tensor<T> one = slice(a, 2, 1, 3, std::numeric_limits<long>::max()).tensor(); // one entry: any step
  REQUIRE(one.shape() == Shape{2, 5, 1});
  CHECK(one.at({1, 4, 0}) == a.tensor().at({1, 4, 1}));
  const Tensor<T> e = select(a, -1, -1).tensor(); // a[..., 2]
  REQUIRE(e.shape() == Shape{2, 5});
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index j = 0; j < 5; ++j)
      CHECK(e.at({i, j}) == T(static_cast<long>((i * 5 + j) * 3 + 2)));
  CHECK_THROWS_WITH_AS(select(a, 0, 2), "select(A): index 2 is out of range for dim 0 of size 2", ShapeError);

  const Var<T> b = tape.input(iota<T>({2, 1, 3}), "B");
  const Tensor<T> c = cat(std::vector<Var<T>>{a, b, a}, 1).tensor();
  REQUIRE(c.shape() == Shape{2, 11, 3});
  CHECK(c.at({1, 5, 2}) == b.tensor().at({1, 0, 2}));
  CHECK(c.at({1, 7, 0}) == a.tensor().at({1, 1, 0}));
  CHECK_THROWS_WITH_AS(cat(std::vector<Var<T>>{a, tape.input(iota<T>({2, 5, 2}), "C")}, 1),
                       "cat(A, C): A is 2x5x3 but C is 2x5x2; every operand needs the same shape except along dim 1",
                       ShapeError);
  const Tensor<T> st = stack(std::vector<Var<T>>{b, b}, -1).tensor();
  REQUIRE(st.shape() == Shape{2, 1, 3, 2});
  CHECK(st.at({1, 0, 2, 1}) == b.tensor().at({1, 0, 2}));
  CHECK_THROWS_WITH_AS(stack(std::vector<Var<T>>{a, b}, 0),
                       "stack(A, B): A is 2x5x3 but B is 2x1x3; every operand "
                       "needs the same shape",
                       ShapeError);

  test::RandomMatrices random(4343);
  using V = std::vector<Var<T>>;
  const Tensor<T> r3 = random.tensor<T>({2, 5, 3}), q3 = random.tensor<T>({2, 2, 3});
  test::check_tensor_gradient<T>("slice", {r3}, [](const V& in) { return slice(in[0], 1, 1, 5, 3); });
  test::check_tensor_gradient<T>("slice, a step past the end", {r3},
                                 [](const V& in) { return slice(in[0], 0, -1, 2, std::numeric_limits<long>::max()); });
  test::check_tensor_gradient<T>("select", {r3}, [](const V& in) { return select(in[0], 0, 1); });
  test::check_tensor_gradient<T>("select to rank 0", {random.tensor<T>({4})},
                                 [](const V& in) { return select(in[0], 0, -2); });
  test::check_tensor_gradient<T>("cat, an operand twice", {r3, q3}, [](const V& in) {
    return cat(V{in[0], in[1], in[0]}, -2);
  });
  test::check_tensor_gradient<T>("stack", {q3, q3}, [](const V& in) { return stack(V{in[1], in[0]}, 1); });
  test::check_tensor_gradient<T>("stack of rank 0", {random.tensor<T>({}), random.tensor<T>({})}, [](const V& in) {
    return stack(V{in[0], in[1], in[0]}, 0);
  });
}
