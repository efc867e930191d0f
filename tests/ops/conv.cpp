#include "../support.hpp"

#include <limits>
#include <vector>

using namespace tapegrad;

namespace {
/// The entries 1, 2, 3, ... of `shape`, row-major.
template <Real T> Tensor<T> counting(const Shape& shape) {
  Tensor<T> t = Tensor<T>::zeros(shape);
  for (Eigen::Index k = 0; k < t.numel(); ++k)
    t[k] = T(static_cast<long>(k + 1));
  return t;
}
template <Real T> void check_entries(const Tensor<T>& t, std::initializer_list<long> expected) {
  REQUIRE(t.numel() == static_cast<Eigen::Index>(expected.size()));
  Eigen::Index k = 0;
  for (long e : expected)
    CHECK(t[k++] == T(e));
}
} // namespace

TEST_CASE_TEMPLATE("conv1d: by hand, with padding, stride, dilation and a bias", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  const Var<T> x = tape.input(counting<T>({1, 4}), "X"); // (C = 1, L = 4): 1 2 3 4, unbatched
  const Var<T> w = tape.input(Tensor<T>(Shape{1, 1, 2}, Matrix<T>{{T(2), T(1)}}), "W");
  const Var<T> b = tape.input(Tensor<T>(Shape{1}, Matrix<T>::Constant(1, 1, T(10))), "b");
  check_entries(conv1d(x, w).tensor(), {4, 7, 10}); // 2 x[z] + x[z + 1]
  CHECK(conv1d(x, w).shape() == Shape{1, 3});
  check_entries(conv1d(x, w, {.padding = {1}}).tensor(), {1, 4, 7, 10, 8});
  check_entries(conv1d(x, w, {.stride = {2}, .padding = {1}}).tensor(), {1, 7, 8});
  check_entries(conv1d(x, w, {.dilation = {2}}).tensor(), {5, 8}); // 2 x[z] + x[z + 2]
  const Var<T> y = conv1d(x, w, b);
  check_entries(y.tensor(), {14, 17, 20});
  tape.backward(sum(y));
  check_entries(x.grad_tensor(), {2, 3, 3, 1}); // each x[l] times the weights that reach it
  check_entries(w.grad_tensor(), {6, 9});       // 1 + 2 + 3 and 2 + 3 + 4
  check_entries(b.grad_tensor(), {3});
}

TEST_CASE_TEMPLATE("conv2d: by hand, two output channels", T, TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  const Var<T> x = tape.input(counting<T>({1, 1, 3, 3}), "X"); // 1 .. 9
  Tensor<T> wt = Tensor<T>::zeros({2, 1, 2, 2});
  wt[0] = T(1); // [[1, 0], [0, -1]]: x[y][z] - x[y + 1][z + 1]
  wt[3] = T(-1);
  wt[5] = T(1); // [[0, 1], [2, 0]]: x[y][z + 1] + 2 x[y + 1][z]
  wt[6] = T(2);
  const Var<T> w = tape.input(wt, "W");
  const Var<T> y = conv2d(x, w);
  CHECK(y.shape() == Shape{1, 2, 2, 2});
  check_entries(y.tensor(), {-4, -4, -4, -4, 10, 13, 19, 22});
  check_entries(conv2d(x, w, {.stride = {2}, .padding = {1}}).tensor(), {-1, -3, -7, -4, 0, 4, 4, 22});
}

TEST_CASE("conv2d: two channels, H != W, kh != kw, per-axis stride, padding and dilation, against explicit padding") {
  // The reference pads x with zeros into a (N, C, H + 2 p0, W + 2 p1) array first and then reads each window at
  // (y s0 + i d0, z s1 + j d1) of the padded array: another formulation than the op's skipped padding positions.
  const long N = 2, C = 2, H = 4, W = 5, O = 3, kh = 2, kw = 3, s0 = 1, s1 = 2, p0 = 1, p1 = 0, d0 = 2, d1 = 1;
  Tensor<double> x = Tensor<double>::zeros({N, C, H, W}), w = Tensor<double>::zeros({O, C, kh, kw}),
                 b = Tensor<double>::zeros({O});
  for (Eigen::Index k = 0; k < x.numel(); ++k)
    x[k] = static_cast<double>((7 * k) % 11) - 5; // small integers: every sum below is exact
  for (Eigen::Index k = 0; k < w.numel(); ++k)
    w[k] = static_cast<double>((5 * k) % 7) - 3;
  for (Eigen::Index k = 0; k < b.numel(); ++k)
    b[k] = static_cast<double>(10 * (k + 1));
  const long Hp = H + 2 * p0, Wp = W + 2 * p1;
  std::vector<double> padded(static_cast<std::size_t>(N * C * Hp * Wp), 0.0);
  for (long n = 0; n < N; ++n)
    for (long c = 0; c < C; ++c)
      for (long h = 0; h < H; ++h)
        for (long v = 0; v < W; ++v)
          padded[static_cast<std::size_t>(((n * C + c) * Hp + h + p0) * Wp + v + p1)] =
              x[((n * C + c) * H + h) * W + v];
  const long OH = (Hp - d0 * (kh - 1) - 1) / s0 + 1, OW = (Wp - d1 * (kw - 1) - 1) / s1 + 1;
  Tape<double> tape;
  const Var<double> y = conv2d(tape.input(x, "X"), tape.input(w, "W"), tape.input(b, "b"),
                               {.stride = {s0, s1}, .padding = {p0, p1}, .dilation = {d0, d1}});
  REQUIRE(y.shape() == Shape{N, O, OH, OW});
  MESSAGE("conv2d result " << shape_string(y.shape()) << " (H' = " << OH << ", W' = " << OW << ")");
  const Tensor<double> got = y.tensor();
  for (long n = 0; n < N; ++n)
    for (long o = 0; o < O; ++o)
      for (long r = 0; r < OH; ++r)
        for (long q = 0; q < OW; ++q) {
          double expected = b[o];
          for (long c = 0; c < C; ++c)
            for (long i = 0; i < kh; ++i)
              for (long j = 0; j < kw; ++j)
                expected +=
                    w[((o * C + c) * kh + i) * kw + j] *
                    padded[static_cast<std::size_t>(((n * C + c) * Hp + r * s0 + i * d0) * Wp + q * s1 + j * d1)];
          CHECK(got[((n * O + o) * OH + r) * OW + q] == expected);
        }
}

TEST_CASE_TEMPLATE("conv1d and conv2d: gradients against central differences, batched and not, every option", T,
                   TAPEGRAD_TEST_TYPES) {
  using V = std::vector<Var<T>>;
  test::RandomMatrices random(223);
  test::check_tensor_gradient<T>(
      "conv2d batched, stride (1, 2), padding (1, 0), dilation (2, 1), bias",
      {random.tensor<T>({2, 2, 4, 5}), random.tensor<T>({3, 2, 2, 3}), random.tensor<T>({3})}, [](const V& in) {
        return conv2d(in[0], in[1], in[2], {.stride = {1, 2}, .padding = {1, 0}, .dilation = {2, 1}});
      });
  test::check_tensor_gradient<T>("conv2d unbatched, no bias",
                                 {random.tensor<T>({2, 3, 4}), random.tensor<T>({1, 2, 2, 3})},
                                 [](const V& in) { return conv2d(in[0], in[1]); });
  test::check_tensor_gradient<T>(
      "conv1d unbatched, stride 2, padding 1, dilation 2, bias",
      {random.tensor<T>({2, 7}), random.tensor<T>({3, 2, 3}), random.tensor<T>({3})},
      [](const V& in) { return conv1d(in[0], in[1], in[2], {.stride = {2}, .padding = {1}, .dilation = {2}}); });
  test::check_tensor_gradient<T>("conv1d batched", {random.tensor<T>({3, 2, 5}), random.tensor<T>({2, 2, 2})},
                                 [](const V& in) { return conv1d(in[0], in[1]); });
}

TEST_CASE("conv1d and conv2d: shapes and options that do not fit name the op, the operands and the problem") {
  Tape<double> tape;
  const Var<double> x = tape.input(Tensor<double>::zeros({2, 3, 5}), "X");
  const Var<double> w = tape.input(Tensor<double>::zeros({4, 2, 2}), "W");
  const Var<double> w3 = tape.input(Tensor<double>::zeros({4, 3, 2}), "W3");
  CHECK_THROWS_WITH_AS(conv1d(x, w), "conv1d(X, W): X 2x3x5 has 3 channels but the weight W 4x2x2 takes 2", ShapeError);
  CHECK_THROWS_WITH_AS(conv1d(x, w3, {.dilation = {5}}),
                       "conv1d(X, W3): the kernel spans 6 entries (dilation included) but X 2x3x5 has 5 along spatial "
                       "dim 0 with padding 0: the result would be empty",
                       ShapeError);
  CHECK_THROWS_WITH_AS(conv1d(x, w3, {.stride = {0}}), "conv1d(X, W3): stride 0; it must be >= 1", ShapeError);
  CHECK_THROWS_WITH_AS(conv1d(x, w3, {.stride = {1, 1}}),
                       "conv1d(X, W3): stride has 2 entries; conv1d takes an integer or a list of one", ShapeError);
  CHECK_THROWS_WITH_AS(conv2d(x, w3), "conv2d(X, W3): W3 is 4x3x2; the weight is (O, C, kh, kw)", ShapeError);
  CHECK_THROWS_WITH_AS(conv1d(x, w3, {.stride = {}}), "conv1d(X, W3): stride is an empty list", ShapeError);
  const long huge = std::numeric_limits<long>::max();
  const std::string beyond =
      "conv1d(X, W3): padding " + std::to_string(huge) + " and dilation 1 give sizes beyond 2^63";
  CHECK_THROWS_WITH_AS(conv1d(x, w3, {.padding = {huge}}), beyond.c_str(), LimitError);
  // a stride far beyond the input is torch's too: one window
  CHECK(conv1d(x, w3, {.stride = {huge}}).shape() == Shape{2, 4, 1});
  const Var<double> b = tape.input(Tensor<double>::zeros({3}), "b");
  CHECK_THROWS_WITH_AS(conv1d(x, w3, b), "conv1d(X, W3): the bias b is [3]; it must be [4], one per output channel",
                       ShapeError);
}
