#include "../support.hpp"

#include <tapegrad/graph/verification/saturation.hpp>

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("softmax_rows: value on rows built from ln 3 and ln 2", T, TAPEGRAD_TEST_TYPES) {
  using std::log;
  Tape<T> tape;
  const T l3 = log(T(3)), l2 = log(T(2));
  auto s = tape.input(matrix<T>({{T(0), l3, -infinity<T>()}, {l2, l2, T(0)}}), "S");
  auto a = softmax_rows(s, "A");
  const Matrix<T> expected = matrix<T>({{T(1) / T(4), T(3) / T(4), T(0)}, {T(2) / T(5), T(2) / T(5), T(1) / T(5)}});
  test::check_close<T>("softmax of [0, ln3, -inf] and [ln2, ln2, 0]", a.value(), expected, test::exact_tolerance<T>());
  CHECK(a.value()(0, 2) == T(0)); // a -inf score gets weight exactly 0
}

TEST_CASE_TEMPLATE("softmax_rows: gradient against central differences on a non-square input", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(13);
  test::check_op_gradient<T>("softmax_rows", {random.make<T>(3, 4)},
                             [](const auto& in) { return softmax_rows(in[0]); });
}

TEST_CASE_TEMPLATE("softmax_rows: row sums are 1, and rows of the gradient at the scores sum to 0", T,
                   TAPEGRAD_TEST_TYPES) {
  using std::abs;
  test::RandomMatrices random(17);
  Tape<T> tape;
  auto s = tape.input(random.make<T>(4, 5));
  auto a = softmax_rows(s);
  tape.backward(a, random.make<T>(4, 5));
  for (Eigen::Index i = 0; i < 4; ++i) {
    CHECK(abs(a.value().row(i).sum() - T(1)) <= test::exact_tolerance<T>());
    CHECK(abs(s.grad().row(i).sum()) <= test::exact_tolerance<T>());
    CHECK(a.value().row(i).minCoeff() >= T(0));
  }
}

TEST_CASE_TEMPLATE("softmax_rows: logits of +-1e4, equal logits and -inf entries stay finite", T, TAPEGRAD_TEST_TYPES) {
  using std::exp;
  const T big(10000);
  const T ninf = -infinity<T>();
  Tape<T> tape;
  auto s = tape.input(matrix<T>({{big, -big, T(0)}, {T(5), T(5), T(5)}, {ninf, T(1), ninf}, {ninf, ninf, ninf}}));
  auto a = softmax_rows(s);
  tape.backward(a, matrix<T>({{T(1), T(2), T(3)}, {T(1), T(2), T(3)}, {T(1), T(2), T(3)}, {T(1), T(2), T(3)}}));
  for (Eigen::Index i = 0; i < 4; ++i)
    for (Eigen::Index j = 0; j < 3; ++j) {
      CHECK(is_finite(a.value()(i, j)));
      CHECK(is_finite(s.grad()(i, j)));
    }
  CHECK(a.value()(0, 0) == T(1) / (T(1) + exp(-big) + exp(-T(2) * big)));
  CHECK(a.value().row(1) == Matrix<T>::Constant(1, 3, T(1) / T(3)));
  CHECK(a.value().row(2) == matrix<T>({{T(0), T(1), T(0)}}));
  CHECK(a.value().row(3) == Matrix<T>::Zero(1, 3)); // every key masked: zeros, not NaN
  CHECK(s.grad().row(2) == Matrix<T>::Zero(1, 3));  // a one-hot row passes no gradient
  CHECK(s.grad().row(3) == Matrix<T>::Zero(1, 3));
}

TEST_CASE("softmax_rows<double>: softmax_row (one AVX-512 call per row) against the general path, row by row") {
  // Rows of 1 to 40 entries (whole registers of 8 and every tail), seed 23, entries in [-30, 5] with about one
  // in six -inf (a masked key), and in the last row one entry near -740, whose exp is subnormal. The exps are
  // the same kernel on the same arguments in both paths; the sums add in another order, so each entry may
  // differ by the rounding of a sum of n terms: n eps relative, plus the smallest subnormal, fixed here before
  // the run.
  const double inf = std::numeric_limits<double>::infinity(), eps = std::numeric_limits<double>::epsilon();
  const double nan = std::numeric_limits<double>::quiet_NaN(), tiny = std::numeric_limits<double>::denorm_min();
  const bool fast = default_kernel<VectorFunction::exp>() == VectorKernel::avx512;
  const std::string what = fast ? "runs (AVX-512)" : "refuses every row here (no AVX-512): both are the general path";
  MESSAGE("softmax_row " << what);
  std::mt19937_64 rng(23); // seed 23
  std::uniform_real_distribution<double> u(-30, 5);
  std::uniform_int_distribution<int> masked(0, 5);
  for (Eigen::Index n = 1; n <= 40; ++n) {
    CAPTURE(n);
    Matrix<double> s(3, n);
    for (Eigen::Index k = 0; k < s.size(); ++k)
      s.data()[k] = masked(rng) == 0 ? -inf : u(rng);
    s(0, n - 1) = u(rng); // at least one finite entry in row 0
    s(2, 0) = u(rng);
    if (n > 1) s(2, n - 1) = -740 + u(rng) / 8; // a subnormal exp
    Matrix<double> general(3, n), quick(3, n);
    softmax_rows_value(general, s, SoftmaxPath::general);
    softmax_rows_value(quick, s, SoftmaxPath::fused);
    const double tolerance = static_cast<double>(n) * eps;
    for (Eigen::Index i = 0; i < s.rows(); ++i)
      for (Eigen::Index j = 0; j < n; ++j) {
        if (s(i, j) == -inf) CHECK(quick(i, j) == 0.0);
        CHECK(std::abs(quick(i, j) - general(i, j)) <= tolerance * general(i, j) + tiny);
      }
    // row 0 is taken (on AVX-512), in place too, and gives what softmax_rows_value gave
    std::vector<double> row(s.row(0).begin(), s.row(0).end());
    CHECK(softmax_row(row.data(), row.data(), row.size()) == fast);
    if (fast)
      for (Eigen::Index j = 0; j < n; ++j)
        CHECK(row[static_cast<std::size_t>(j)] == quick(0, j));
    // rows it refuses, writing nothing: all -inf, finite entries with a NaN, finite entries with a +inf
    std::vector<double> out(row.size(), 7.0);
    row.assign(row.size(), -inf);
    CHECK_FALSE(softmax_row(row.data(), out.data(), row.size()));
    for (std::size_t j = 0; j < row.size(); ++j)
      row[j] = u(rng);
    row[row.size() / 2] = nan;
    CHECK_FALSE(softmax_row(row.data(), out.data(), row.size()));
    row[row.size() / 2] = inf;
    CHECK_FALSE(softmax_row(row.data(), out.data(), row.size()));
    CHECK(std::count(out.begin(), out.end(), 7.0) == n);
  }
}

TEST_CASE_TEMPLATE("softmax and log_softmax along any dim of any rank", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(515);
  const Tensor<T> x = random.tensor<T>({2, 3, 4});
  Tape<T> tape;
  const Var<T> a = tape.input(x, "X");
  const Tensor<T> s1 = softmax(a, 1).tensor(), l0 = log_softmax(a, 0).tensor();
  using std::exp;
  using std::log;
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index k = 0; k < 4; ++k) {
      T total(0), ones(0);
      for (Eigen::Index j = 0; j < 3; ++j)
        total += exp(x.at({i, j, k}));
      for (Eigen::Index j = 0; j < 3; ++j) {
        CHECK(abs(T(s1.at({i, j, k}) - exp(x.at({i, j, k})) / total)) <= test::exact_tolerance<T>());
        ones += s1.at({i, j, k});
      }
      CHECK(abs(T(ones - T(1))) <= test::exact_tolerance<T>());
    }
  for (Eigen::Index j = 0; j < 3; ++j)
    for (Eigen::Index k = 0; k < 4; ++k) {
      const T lse = log(exp(x.at({0, j, k})) + exp(x.at({1, j, k})));
      for (Eigen::Index i = 0; i < 2; ++i)
        CHECK(abs(T(l0.at({i, j, k}) - (x.at({i, j, k}) - lse))) <= test::exact_tolerance<T>());
    }
  CHECK(softmax(a).tensor() == softmax(a, 2).tensor()); // the default is the last dim
  CHECK_THROWS_WITH_AS(softmax(a, 3), "softmax(X): dim 3 is out of range for rank 3 (dims are -3 to 2)", ShapeError);
  CHECK_THROWS_WITH_AS(softmax(tape.input(Tensor<T>(T(1)), "s")),
                       "softmax(s): dim -1 is out of range for rank 0 (a rank-0 value has no dims)", ShapeError);
  Tensor<T> masked = x;
  for (Eigen::Index i = 0; i < 2; ++i)
    masked.at({i, 1, 3}) = -infinity<T>();
  CHECK_THROWS_WITH_AS(log_softmax(tape.input(masked, "M"), 0),
                       "log_softmax(M): slice (:, 1, 3) of M is entirely -inf (every entry masked): its "
                       "log-probabilities are undefined",
                       DomainError);

  using V = std::vector<Var<T>>;
  const Tensor<T> r4 = random.tensor<T>({2, 3, 2, 4});
  for (long d : {0L, 1L, -2L, 3L}) {
    test::check_tensor_gradient<T>("softmax dim " + std::to_string(d), {r4},
                                   [d](const V& in) { return softmax(in[0], d); });
    test::check_tensor_gradient<T>("log_softmax dim " + std::to_string(d), {r4},
                                   [d](const V& in) { return log_softmax(in[0], d); });
  }
  test::check_tensor_gradient<T>("softmax rank 1", {random.tensor<T>({5})}, [](const V& in) { return softmax(in[0]); });
}

TEST_CASE("the saturation guard looks along the softmax's dim") {
  Tape<double> tape;
  Tensor<double> x = Tensor<double>::zeros({3, 2});
  x.at({0, 0}) = 60; // along dim 0 both columns are one-hot; along dim 1 no row is
  x.at({0, 1}) = 60;
  softmax(tape.input(x, "X"), 0, "A");
  const std::vector<std::string> w = saturated_softmax_rows(tape, 1e-13);
  REQUIRE(w.size() == 2);
  CHECK(w[0].find("saturated softmax: A slice (:, 0) is one-hot") == 0);
  CHECK(w[1].find("saturated softmax: A slice (:, 1) is one-hot") == 0);
  Tape<double> rows;
  softmax(rows.input(x, "X"), 1, "A");
  CHECK(saturated_softmax_rows(rows, 1e-13).size() == 0);
}

TEST_CASE("softmax and log_softmax refuse a slice holding +inf (graph format v3: inf - inf), naming it") {
  Tape<double> tape;
  Tensor<double> x = Tensor<double>::zeros({2, 3});
  x.at({1, 2}) = std::numeric_limits<double>::infinity();
  const Var<double> s = tape.input(x, "S");
  CHECK_THROWS_WITH_AS(softmax(s, -1, "A"),
                       "softmax(S) for 'A': row 1 of S holds +inf: its softmax is undefined (inf - inf)", DomainError);
  CHECK_THROWS_WITH_AS(log_softmax(s, 0, "L"),
                       "log_softmax(S) for 'L': slice (:, 2) of S holds +inf: its log_softmax is undefined (inf - inf)",
                       DomainError);
}

TEST_CASE_TEMPLATE("holds_plus_inf finds +inf at every position, in the vector steps and the tail; not NaN or -inf", T,
                   double, float, float50) {
  for (Eigen::Index n = 0; n <= 37; ++n) { // 37: two 16-entry float steps and a tail, four 8-entry double steps
    std::vector<T> v(static_cast<std::size_t>(n), T(1));
    for (Eigen::Index k = 0; k < n; k += 2) {
      v[static_cast<std::size_t>(k)] = -infinity<T>();
      if (k + 1 < n) v[static_cast<std::size_t>(k + 1)] = std::numeric_limits<T>::quiet_NaN();
    }
    INFO("n = " << n);
    CHECK_FALSE(holds_plus_inf(v.data(), n));
    for (Eigen::Index k = 0; k < n; ++k) {
      std::vector<T> w = v;
      w[static_cast<std::size_t>(k)] = infinity<T>();
      INFO("+inf at " << k);
      CHECK(holds_plus_inf(w.data(), n));
    }
  }
}
