#include "../support.hpp"

#include <tapegrad/autodiff/check/tolerances.hpp>

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("layer_norm: (x - mean) / sqrt(var + eps) per row, variance divided by n; a constant row is 0", T,
                   TAPEGRAD_TEST_TYPES) {
  using std::sqrt;
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(1), T(2), T(3)}, {T(5), T(5), T(5)}}));
  auto y = layer_norm(a);
  const T eps = from_decimal<T>("1e-5");
  const T s = sqrt(T(2) / T(3) + eps); // mean 2, variance (1 + 0 + 1) / 3
  test::check_close<T>("layer_norm", y.value(), matrix<T>({{T(-1) / s, T(0), T(1) / s}, {T(0), T(0), T(0)}}),
                       test::exact_tolerance<T>());
  tape.backward(sum(y));
  CHECK(is_finite(a.grad().sum()));
  // the gradient of sum(layer_norm(x)) is 0 in truth (each row of the result sums to 0)
  CHECK(a.grad().cwiseAbs().maxCoeff() <= test::exact_tolerance<T>() * T(16));
  // eps = 0 on a constant row: 0 / 0, the NaN the formula gives (graph-format-v2 defines no error there)
  auto c = tape.input(matrix<T>({{T(1), T(2)}, {T(3), T(3)}}), "C");
  const Var<T> n0 = layer_norm(c, T(0), "N");
  CHECK(is_nan(n0.value()(1, 0)));
  CHECK(n0.value()(0, 1) == T(1));
}

TEST_CASE("layer_norm: the default eps is the decimal 1e-5 to every digit, not the double nearest it") {
  const float50 eps = default_eps<float50>().number("eps");
  CHECK(eps == float50("1e-5"));
  CHECK(eps != float50(1e-5));
}

TEST_CASE_TEMPLATE("layer_norm: gradient against central differences, non-square, default and given eps", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(103);
  const Matrix<T> x = random.make<T>(2, 4);
  test::check_op_gradient<T>("layer_norm", {x}, [](const auto& in) { return layer_norm(in[0]); });
  test::check_op_gradient<T>("layer_norm eps 1/4", {x}, [](const auto& in) { return layer_norm(in[0], T(1) / T(4)); });
}

TEST_CASE_TEMPLATE("layer_norm: over the last k dims, times weight plus bias, as torch.nn.functional.layer_norm", T,
                   TAPEGRAD_TEST_TYPES) {
  using std::sqrt;
  Tape<T> tape;
  const T eps = from_decimal<T>("1e-5");
  // one group of a (1, 2, 3) tensor over normalized_shape [2, 3]: entries 1..6, mean 7/2, variance 35/12
  Tensor<T> x = Tensor<T>::zeros({1, 2, 3});
  for (Eigen::Index k = 0; k < 6; ++k)
    x[k] = T(static_cast<long>(k + 1));
  Tensor<T> wt = Tensor<T>::zeros({2, 3}), bt = Tensor<T>::zeros({2, 3});
  for (Eigen::Index k = 0; k < 6; ++k) {
    wt[k] = T(static_cast<long>(k + 2));
    bt[k] = T(static_cast<long>(k % 2));
  }
  const Var<T> a = tape.input(x, "A"), w = tape.input(wt, "w"), b = tape.input(bt, "b");
  const Var<T> y = layer_norm(a, w, b);
  CHECK(y.shape() == Shape{1, 2, 3});
  const T s = sqrt(T(35) / T(12) + eps);
  T worst(0);
  for (Eigen::Index k = 0; k < 6; ++k) {
    const T expected = (x[k] - T(7) / T(2)) / s * wt[k] + bt[k];
    worst = std::max<T>(worst, T(abs(T(y.tensor()[k] - expected))));
  }
  MESSAGE("layer_norm over [2, 3] by hand [" << scalar_name<T>() << "]: worst error " << to_string(worst, 3));
  CHECK(worst <= test::exact_tolerance<T>() * T(8));
  // over the last dim only (NormOptions): each row of 3 centred on its own
  const Var<T> r = layer_norm(a, NormOptions<T>{.normalized_shape = {3}});
  CHECK(abs(T(r.tensor()[1])) <= test::exact_tolerance<T>());
  CHECK_THROWS_WITH_AS(layer_norm(a, NormOptions<T>{.normalized_shape = {3, 3}}),
                       "layer_norm(A): normalized_shape [3, 3] is not the last sizes of A, 1x2x3", ShapeError);
  CHECK_THROWS_WITH_AS(layer_norm(a, b, NormOptions<T>{.normalized_shape = {3}}),
                       "layer_norm(A): its weight b is 2x3; it must be [3], the normalized shape", ShapeError);
  CHECK_THROWS_WITH_AS(layer_norm(a, NormOptions<T>{.normalized_shape = {1, 1, 2, 3}}),
                       "layer_norm(A): normalized_shape has 4 sizes but A is 1x2x3 (rank 3)", ShapeError);
}

TEST_CASE_TEMPLATE("layer_norm: gradients of a, weight and bias against central differences, ranks 1 to 4", T,
                   TAPEGRAD_TEST_TYPES) {
  using V = std::vector<Var<T>>;
  test::RandomMatrices random(227);
  test::check_tensor_gradient<T>("layer_norm rank 1", {random.tensor<T>({5})},
                                 [](const V& in) { return layer_norm(in[0]); });
  test::check_tensor_gradient<T>("layer_norm rank 3 over [3, 4], weight and bias",
                                 {random.tensor<T>({2, 3, 4}), random.tensor<T>({3, 4}), random.tensor<T>({3, 4})},
                                 [](const V& in) { return layer_norm(in[0], in[1], in[2]); });
  test::check_tensor_gradient<T>("layer_norm rank 4 over the last dim, weight",
                                 {random.tensor<T>({2, 1, 3, 4}), random.tensor<T>({4})},
                                 [](const V& in) { return layer_norm(in[0], in[1]); });
}

TEST_CASE("layer_norm<float16>: a group of small spread (1/s^3 beyond float16's range) keeps a finite gradient") {
  // x = (1, 2, 4, 8) / 256 per row, eps = 0: s = 0.0107, so 1/s^3 = 8.2e5 would overflow float16 (max 65504),
  // while the gradient itself is of order 1/s. The same graph in double is the reference (the inputs are exact in
  // both types); the tolerance, fixed before the run, is what the 16-bit checks ask: half of the significand right,
  // sqrt(eps) of the largest entry (float16 computes the statistics and the VJP in float16 itself).
  const auto gradient = [](auto zero) {
    using T = decltype(zero);
    Tape<T> tape;
    Matrix<T> x(2, 4), probe(2, 4);
    for (Eigen::Index j = 0; j < 4; ++j) {
      x(0, j) = T(static_cast<float>(1 << j) / 256);
      x(1, j) = T(-static_cast<float>(1 << (3 - j)) / 256);
      probe(0, j) = T(static_cast<float>(j + 1));
      probe(1, j) = T(static_cast<float>(j) - 2.5f);
    }
    auto a = tape.input(x, "a");
    tape.backward(sum(hadamard(layer_norm(a, T(0)), tape.constant(probe, "probe"))));
    return Matrix<double>(a.grad().template cast<double>());
  };
  const Matrix<double> half = gradient(float16(0)), reference = gradient(0.0);
  const double eps = static_cast<double>(epsilon<float16>()); // 2^-10 (Eigen's numeric_limits says 2^-13)
  const double scale = reference.cwiseAbs().maxCoeff(), worst = (half - reference).cwiseAbs().maxCoeff() / scale;
  MESSAGE("float16 layer_norm gradient: worst error " << worst << " of the largest entry " << scale
                                                      << ", tolerance sqrt(eps) = " << std::sqrt(eps));
  CHECK(half.allFinite());
  CHECK(worst <= std::sqrt(eps));
}

TEST_CASE("layer_norm<double>: a nearly constant group keeps double's precision in the result and the gradient") {
  // Rows c + (c / 4096) r with r = k/8 drawn: the entries agree in their first 12 bits, so a centre rounded to
  // double once (eps |c|) would carry about 4096 eps of error relative to each z = x - c, and the VJP, which
  // cancels, more. Every entry is exact in double and in 50 digits, so the 50-digit tape on the same entries is
  // the reference. The tolerance, fixed before the run, is the checker's own: engine_tolerance<double>()
  // (1024 eps) relative to the largest entry. Rows of 5 and 3 entries (n not a power of 2, so the mean rounds).
  test::RandomMatrices random(419);
  const auto run = [&](Eigen::Index n) {
    const Matrix<double> r = random.make<double>(3, n), probe = random.make<double>(3, n);
    Matrix<double> x(3, n);
    const double centres[] = {1000, -3000, 37};
    for (Eigen::Index i = 0; i < 3; ++i)
      for (Eigen::Index j = 0; j < n; ++j)
        x(i, j) = centres[i] + centres[i] / 4096 * r(i, j);
    const auto result_and_gradient = [&](auto zero) {
      using T = decltype(zero);
      Tape<T> tape;
      auto a = tape.input(convert<T>(x), "a");
      const Var<T> y = layer_norm(a, T(0));
      tape.backward(sum(hadamard(y, tape.constant(convert<T>(probe), "probe"))));
      return std::pair{Matrix<T>(y.value()), Matrix<T>(a.grad())};
    };
    const auto [y, g] = result_and_gradient(0.0);
    const auto [y50, g50] = result_and_gradient(float50(0));
    const auto worst = [](const Matrix<double>& m, const Matrix<float50>& reference) {
      const Matrix<float50> d = convert<float50>(m) - reference;
      return static_cast<double>(float50(d.cwiseAbs().maxCoeff() / reference.cwiseAbs().maxCoeff()));
    };
    const double tolerance = engine_tolerance<double>(), ey = worst(y, y50), eg = worst(g, g50);
    MESSAGE("layer_norm<double> of nearly constant rows of " << n << ": result off by " << ey << ", gradient off by "
                                                             << eg << " of the largest entry; tolerance " << tolerance);
    CHECK(ey <= tolerance);
    CHECK(eg <= tolerance);
  };
  run(5);
  run(3);
}

namespace {

/// One layer_norm or rms_norm call on fixed entries 2^e r (r small fixed numbers of two rows of three, so every
/// entry is exact in double and in 50 digits), with the gradient of sum(probe * y) for a probe of 2^gradient r'.
struct RangeCase {
  const char* what;
  bool centred;
  int x_exponent, probe_exponent;
  std::optional<int> weight_exponent; // with a weight 2^e r'' (and a bias, for layer_norm)
  std::optional<int> eps_exponent;    // eps = 2^e; absent: eps = 0
  bool constant_row = false;          // the second row's entries all equal
};

template <Real T> std::vector<Matrix<T>> range_case(const RangeCase& c) {
  using std::ldexp;
  // 2^e r for rows r of exact binary fractions
  const auto entries = [](int e, std::initializer_list<std::initializer_list<double>> r) {
    Matrix<T> m(static_cast<Eigen::Index>(r.size()), static_cast<Eigen::Index>(r.begin()->size()));
    Eigen::Index i = 0;
    for (const auto& row : r) {
      Eigen::Index j = 0;
      for (double v : row)
        m(i, j++) = ldexp(T(v), e);
      ++i;
    }
    return m;
  };
  Tape<T> tape;
  const Var<T> a = tape.input(entries(c.x_exponent, {{1, -2, 0.75}, {c.constant_row ? 3 : 0.5, 3, 3}}), "a");
  const T eps = c.eps_exponent ? ldexp(T(1), *c.eps_exponent) : T(0);
  std::optional<Var<T>> w, b;
  Var<T> y;
  if (c.weight_exponent) {
    const Matrix<T> row = entries(*c.weight_exponent, {{1.25, -0.5, 3}});
    w = tape.input(Tensor<T>(Shape{3}, std::vector<T>(row.data(), row.data() + 3)), "w");
    b = tape.input(Tensor<T>(Shape{3}, std::vector<T>{T(1), T(-2), T(1) / T(4)}), "b");
    y = c.centred ? layer_norm(a, *w, *b, {.eps = eps}) : rms_norm(a, *w, {.eps = eps});
  } else {
    y = c.centred ? layer_norm(a, eps) : rms_norm(a, eps);
  }
  tape.backward(sum(hadamard(y, tape.constant(entries(c.probe_exponent, {{2, 1, -1.5}, {-1, 0.25, 2.5}}), "g"))));
  std::vector<Matrix<T>> out{Matrix<T>(y.value()), Matrix<T>(a.grad())};
  if (w) out.push_back(Matrix<T>(w->grad()));
  if (b && c.centred) out.push_back(Matrix<T>(b->grad()));
  if (!w) { // the dual numbers' tangent along the direction 2^e r' (without a weight: one Tape<Dual<T>> call)
    using D = Dual<T>;
    const Matrix<T> x = a.value(), direction = entries(c.x_exponent, {{-1, 0.5, 2}, {1.5, -0.25, 1}});
    Matrix<D> xd(2, 3);
    for (Eigen::Index k = 0; k < 6; ++k)
      xd.data()[k] = D(x.data()[k], direction.data()[k]);
    Tape<D> dual;
    const Var<D> a_dual = dual.input(xd, "a");
    const Var<D> yd = c.centred ? layer_norm(a_dual, D(eps)) : rms_norm(a_dual, D(eps));
    out.push_back(Matrix<T>(yd.value().unaryExpr([](const D& v) { return v.eps; })));
  }
  return out;
}

} // namespace

TEST_CASE("layer_norm/rms_norm<double>: groups whose s^3, z^2 or h (mean(z^2) + eps) leave double's range") {
  // Each of the first nine cases would give 0, inf or NaN computed in double (the range each stays in is
  // ops/normalise.hpp's detail::moderate); the engine computes those calls in long double. The last six are just
  // inside the bounds, where double computes them itself. The reference is the 50-digit tape on
  // the same exact entries, the tolerance the checker's own, fixed before the run: engine_tolerance<double>()
  // (1024 eps) relative to the largest entry of each result.
  const RangeCase cases[] = {
      {"s^3 above double's range (x ~ 2^342)", true, 342, 0, {}, {}},
      {"z^2 above double's range (x ~ 2^512)", true, 512, 0, {}, {}},
      {"the sum of a group above double's range (x ~ 2^1022)", true, 1022, 0, {}, {}},
      {"s^3 below double's range (x ~ 2^-360, eps 0)", true, -360, 0, {}, {}},
      {"z^2 below double's range (x ~ 2^-540, eps 0), rms_norm", false, -540, 0, {}, {}},
      {"a constant group with eps = 2^-1000 (s^3 = 2^-1500)", true, 0, 0, {}, -1000, true},
      {"h = g w below double's range (g, w ~ 2^-500, eps 0)", true, -200, -500, -500, {}},
      {"h = g w above double's range (g, w ~ 2^520), rms_norm", false, 230, 520, 520, 0},
      {"eps = 2^700 (s^3 above double's range)", true, 0, 0, 1, 700},
      // just inside the bounds, computed in double itself
      {"x ~ 2^248 (below the bound 2^250)", true, 248, 0, {}, {}},
      {"x ~ 2^-249, eps 0 (above the bound 2^-250)", true, -249, 0, {}, {}},
      {"a constant group with eps = 2^-600 (the bound)", true, 0, 0, {}, -600, true},
      {"eps = 2^500 (the bound)", true, 0, 0, 1, 500},
      {"h = g w ~ 2^240", true, 0, 120, 120, 0},
      {"h = g w ~ 2^-240, rms_norm", false, 0, -120, -120, -20},
  };
  const double tolerance = engine_tolerance<double>();
  const std::string names[] = {"result", "gradient of a", "gradient of w", "gradient of b", "dual tangent"};
  for (const RangeCase& c : cases) {
    const std::vector<Matrix<double>> engine = range_case<double>(c);
    const std::vector<Matrix<float50>> reference = range_case<float50>(c);
    REQUIRE(engine.size() == reference.size());
    for (std::size_t k = 0; k < engine.size(); ++k) {
      const std::string& name = k + 1 == engine.size() && !c.weight_exponent ? names[4] : names[k];
      const float50 scale = reference[k].cwiseAbs().maxCoeff();
      const double worst =
          static_cast<double>(float50((convert<float50>(engine[k]) - reference[k]).cwiseAbs().maxCoeff() / scale));
      MESSAGE(std::string(c.what) << ": " << name << " off by " << worst << " of its largest entry " << scale
                                  << "; tolerance " << tolerance);
      CHECK(worst <= tolerance);
    }
  }
}

namespace {

/// layer_norm's gradient (of sum(g * y), g = 11/10 rounded in E at every entry) and its dual tangent over rows
/// with a nearly constant weight w = 2^20 + r / 4 and a nearly constant direction, made in E and run in E and in
/// R (the same exact entries).
template <Real E, Real R> std::pair<double, double> nearly_constant_gradient_errors() {
  const auto run = [](const auto& x, const auto& weight, const auto& direction, const auto& probe) {
    using T = typename std::remove_cvref_t<decltype(x)>::Scalar;
    using D = Dual<T>;
    Tape<T> tape;
    const Var<T> a = tape.input(x, "a"), w = tape.input(Tensor<T>(Shape{5}, weight), "w"),
                 b = tape.input(Tensor<T>(Shape{5}, std::vector<T>(5, T(0))), "b");
    tape.backward(sum(hadamard(layer_norm(a, w, b, {.eps = T(0)}), tape.constant(probe, "g"))));
    Matrix<D> xd(2, 5);
    for (Eigen::Index k = 0; k < 10; ++k)
      xd.data()[k] = D(x.data()[k], direction.data()[k]);
    Tape<D> dual;
    const Var<D> y = layer_norm(dual.input(xd, "a"), D(0));
    return std::pair{Matrix<T>(a.grad()), Matrix<T>(y.value().unaryExpr([](const D& v) { return v.eps; }))};
  };
  using std::ldexp;
  const E r[] = {E(3), E(-1), E(2), E(-4), E(1)}, c = ldexp(E(1), 20);
  Matrix<E> x(2, 5), direction(2, 5), probe = Matrix<E>::Constant(2, 5, E(11) / E(10));
  std::vector<E> weight(5);
  for (Eigen::Index j = 0; j < 5; ++j) {
    weight[static_cast<std::size_t>(j)] = c + r[j] / E(4);
    x(0, j) = E(static_cast<long>(j * j)) - E(3);
    x(1, j) = r[4 - j] / E(8);
    for (Eigen::Index i = 0; i < 2; ++i)
      direction(i, j) = c + r[(j + i) % 5] / E(4);
  }
  std::vector<R> weight_r;
  for (const E& v : weight)
    weight_r.push_back(exact_convert<R>(v));
  const auto [g, t] = run(x, weight, direction, probe);
  const auto [gr, tr] = run(convert<R>(x), weight_r, convert<R>(direction), convert<R>(probe));
  const auto worst = [](const Matrix<E>& m, const Matrix<R>& reference) {
    return static_cast<double>(R((convert<R>(m) - reference).cwiseAbs().maxCoeff() / reference.cwiseAbs().maxCoeff()));
  };
  return {worst(g, gr), worst(t, tr)};
}

} // namespace

TEST_CASE("layer_norm: a nearly constant gradient through the weight keeps T's precision, in double and 50 digits") {
  // h = g w with g = 11/10 (rounded) and w = 2^20 + r / 4, so u = h - mean(h) is about 2^-22 of h: a mean rounded
  // once, or h = g w's own rounding, would carry about 2^22 eps of error relative to u (and to the gradient); the
  // VJP keeps the product's rounding error (a fused multiply-add in double, Dekker's product at 50 digits) and
  // centres h in two parts. The dual tangent along a nearly constant direction is the same centring on x's
  // tangents. Reference: the tape one precision up on the same exact entries; tolerance engine_tolerance of the
  // engine's type (1024 eps) relative to the largest entry, fixed before the run. Groups of 5 (the mean rounds).
  const auto [g, t] = nearly_constant_gradient_errors<double, float50>();
  const double tolerance = engine_tolerance<double>();
  MESSAGE("layer_norm<double>, nearly constant h: gradient off by "
          << g << ", dual tangent off by " << t << " of the largest entry; tolerance " << tolerance);
  CHECK(g <= tolerance);
  CHECK(t <= tolerance);
  const auto [g50, t50] = nearly_constant_gradient_errors<float50, float100>();
  const double tolerance50 = static_cast<double>(engine_tolerance<float50>());
  MESSAGE("layer_norm<float50>, nearly constant h: gradient off by " << g50 << ", dual tangent off by " << t50
                                                                     << "; tolerance " << tolerance50);
  CHECK(g50 <= tolerance50);
  CHECK(t50 <= tolerance50);
}
