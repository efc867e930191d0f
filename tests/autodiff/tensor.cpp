// Tensor<T> (autodiff/tensor.hpp) and tensors on the tape: construction from nested lists, a shape and entries,
// an Eigen matrix; printing; the storage view; inputs of any rank and their shapes through a sweep.
#include "../support.hpp"

#include <sstream>

using namespace tapegrad;

TEST_CASE_TEMPLATE("Tensor: nested lists, a shape and entries, a matrix", T, TAPEGRAD_TEST_TYPES) {
  const Tensor<T> m{{T(1), T(2), T(3)}, {T(4), T(5), T(6)}};
  CHECK(m.shape() == Shape{2, 3});
  CHECK(m.at({1, 0}) == T(4));
  const Tensor<T> c{{{T(1), T(2)}}, {{T(3), T(4)}}, {{T(5), T(6)}}};
  CHECK(c.shape() == Shape{3, 1, 2});
  CHECK(c.at({2, 0, 1}) == T(6));
  CHECK(c.matrix().rows() == 3); // the storage view: leading dims folded into the rows
  CHECK(c.matrix().cols() == 2);
  const Tensor<T> v{T(1), T(2)};
  CHECK(v.shape() == Shape{2});
  CHECK(v.matrix().rows() == 1);
  const Tensor<T> s(T(3) / T(4));
  CHECK(s.rank() == 0);
  CHECK(s.numel() == 1);
  const std::vector<T> entries{T(1), T(2), T(3), T(4), T(5), T(6)};
  CHECK(Tensor<T>(Shape{2, 3}, entries) == m);
  CHECK(Tensor<T>(Matrix<T>(m.matrix())) == m); // an Eigen matrix in, a rank-2 tensor out
  CHECK(Tensor<T>(Shape{3, 1, 2}, entries) == c);
  CHECK(m.reshaped({3, 2}).at({2, 1}) == T(6));
  CHECK_THROWS_WITH_AS((Tensor<T>{{T(1), T(2)}, {T(3)}}),
                       "Tensor: ragged nested list (a list of 1 beside one of 2 at depth 1)", ShapeError);
  CHECK_THROWS_WITH_AS(Tensor<T>(Shape{2, 2}, entries), "Tensor: shape 2x2 holds 4 entries but 6 entries were given",
                       ShapeError);
  CHECK_THROWS_WITH_AS(m.at({2, 0}), "Tensor::at: index (2, 0) is outside shape 2x3", ShapeError);
  CHECK_THROWS_WITH_AS(m.at({1}), "Tensor::at: 1 indices for a tensor of rank 2", ShapeError);
}

TEST_CASE("Tensor: printed as nested lists, exact decimals") {
  std::ostringstream os;
  os << Tensor<double>{{{0.5, -2}}, {{3, 0.125}}} << " " << Tensor<double>(0.1) << " " << Tensor<double>{1.0, 2.0};
  // (a list of one entry inside a list, {{x}}, reads as [x] and as [[x]] alike: write its shape then)
  CHECK(os.str() == "[[[0.5, -2]], [[3, 0.125]]] 0.10000000000000001 [1, 2]");
}

TEST_CASE("Shape: ranks 0 to 8, strings, dims from the end, the broadcast rule") {
  CHECK(shape_string(Shape{}) == "[]");
  CHECK(shape_string(Shape{5}) == "[5]");
  CHECK(shape_string(Shape{2, 3}) == "2x3");
  CHECK(Shape{2, 3, 4}.rows() == 6);
  CHECK(Shape{2, 3, 4}.cols() == 4);
  CHECK(Shape{}.numel() == 1);
  CHECK_NOTHROW(Shape{1, 1, 1, 1, 1, 1, 1, 1});
  CHECK_THROWS_WITH_AS((Shape{1, 1, 1, 1, 1, 1, 1, 1, 1}), "a shape of rank 9 (at most 8 dims)", ShapeError);
  CHECK(normalize_dim(-1, 3, "op") == 2);
  CHECK_THROWS_WITH_AS(normalize_dim(3, 3, "op(A)"), "op(A): dim 3 is out of range for rank 3 (dims are -3 to 2)",
                       ShapeError);
  Shape out;
  CHECK(broadcast_shapes(Shape{2, 1, 4}, Shape{3, 1}, out));
  CHECK(out == Shape{2, 3, 4});
  CHECK(broadcast_shapes(Shape{}, Shape{2, 3}, out));
  CHECK(out == Shape{2, 3});
  CHECK_FALSE(broadcast_shapes(Shape{2, 3}, Shape{3, 3}, out));
  CHECK(entry_string(Shape{2, 3, 4}, 23) == "(1, 2, 3)");
}

TEST_CASE_TEMPLATE("a tape holds values of any rank; gradients have their shapes", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  const Var<T> x = tape.input(Tensor<T>{{{T(1), T(2)}}, {{T(3), T(4)}}}, "X"); // 2x1x2
  const Var<T> s = tape.input(Tensor<T>(T(2)), "s");                           // rank 0
  const Var<T> y = sum(hadamard(x, s));
  CHECK(y.shape() == Shape{1, 1, 1});
  tape.backward(y);
  CHECK(x.grad_tensor() == Tensor<T>::constant({2, 1, 2}, T(2)));
  CHECK(s.grad_tensor() == Tensor<T>(T(10)));
  CHECK(x.described() == "X (2x1x2)");
  const Var<T> z = tape.input(Tensor<T>{T(1), T(2)}, "z");
  CHECK_THROWS_WITH_AS(tape.backward(z),
                       "backward(z): output is [2], not one entry; pass a seed of that shape: "
                       "backward(out, seed)",
                       UsageError);
  CHECK_THROWS_WITH_AS(tape.backward(z, Tensor<T>{{T(1), T(2)}}),
                       "backward(z, seed): z is [2] but the seed is 1x2; shapes must match", ShapeError);
}

TEST_CASE("set_input_shape views an unused input as a tensor of as many entries, and only then") {
  Tape<double> tape;
  const Var<double> x = tape.input(Matrix<double>::Ones(6, 4), "X");
  tape.set_input_shape(x, Shape{2, 3, 4});
  CHECK(x.shape() == Shape{2, 3, 4});
  CHECK_THROWS_WITH_AS(tape.set_input_shape(x, Shape{5}),
                       "set_input_shape(X): it holds 24 entries (2x3x4), shape [5] "
                       "holds 5",
                       ShapeError);
  const Var<double> y = sum(x, std::vector<long>{0});
  CHECK_THROWS_WITH_AS(tape.set_input_shape(x, Shape{24}), "set_input_shape(X): node 1 (Sum) already uses it as 2x3x4",
                       UsageError);
  CHECK_THROWS_WITH_AS(tape.set_input_shape(y, Shape{12}), "set_input_shape(node 1 (Sum)): not an input", UsageError);
}

TEST_CASE("a domain error names an entry of a tensor by its multi-index") {
  Tape<double> tape;
  Tensor<double> t = Tensor<double>::constant({2, 2, 3}, 1);
  t.at({1, 0, 2}) = -1;
  const Var<double> x = tape.input(t, "X");
  CHECK_THROWS_WITH_AS(log(x, "L"), "log(X) for 'L': entry (1, 0, 2) of X is -1; log needs entries > 0", DomainError);
}
