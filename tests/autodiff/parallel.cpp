// The checker's parallel coordinate loop gives the same numbers as the serial one, bit for bit; the fork-join
// loop covers every item once and passes exceptions on; the multiprecision product kernel equals Eigen's;
// the tape stores matrix nodes, not scalar ones.
#include "../support.hpp"

#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/graph/io/graph_build.hpp>
#include <tapegrad/graph/verification/attention_check.hpp>

#include <atomic>
#include <stdexcept>

using namespace tapegrad;

TEST_CASE("parallel_for: every item exactly once on 1, 2 and 7 threads; the first exception is rethrown") {
  for (unsigned threads : {1u, 2u, 7u}) {
    std::vector<std::atomic<int>> seen(1000);
    parallel_for(seen.size(), threads, [&](unsigned worker, std::size_t i) {
      CHECK(worker < threads);
      ++seen[i];
    });
    for (const auto& s : seen)
      CHECK(s == 1);
  }
  CHECK_THROWS_WITH_AS(parallel_for(100, 2,
                                    [](unsigned, std::size_t i) {
                                      if (i == 37) throw std::runtime_error("item 37");
                                    }),
                       "item 37", std::runtime_error);
}

TEST_CASE("finite differences on 2 threads equal 1 thread bit for bit (double and MPFR 50 digits)") {
  const AttentionInputs<double> in = random_attention<double>(9, 4, 3, 3, 2);
  MESSAGE("seed 9");
  const std::vector<Matrix<double>> x{in.X, in.Wq, in.Wk, in.Wv, in.G};
  const std::vector<std::string> names{"X", "Wq", "Wk", "Wv", "G"};
  const Reference<double> one = fd_reference(FullAttentionGraph{}, x, names, 0, 1);
  const Reference<double> two = fd_reference(FullAttentionGraph{}, x, names, 0, 2);
  CHECK(one.sixth == two.sixth);
  CHECK(one.richardson == two.richardson);
  MpfrDigits digits(50);
  std::vector<Matrix<mpfr_real>> xr;
  for (const Matrix<double>& m : x)
    xr.push_back(convert<mpfr_real>(m));
  const Reference<mpfr_real> r1 = fd_reference(FullAttentionGraph{}, xr, names, 1, 1);
  const Reference<mpfr_real> r2 = fd_reference(FullAttentionGraph{}, xr, names, 1, 2);
  CHECK(r1.sixth == r2.sixth);
  CHECK(r1.sixth(0, 0).precision() == 50); // the workers made their numbers at the reference's digits
  CHECK(r2.sixth(1, 1).precision() == 50);
}

TEST_CASE_TEMPLATE("matmul_loops and product() equal Eigen's double product exactly on exact inputs", T, double,
                   float50, mpfr_real) {
  test::RandomMatrices random(79);
  const Matrix<double> a = random.make<double>(5, 7), b = random.make<double>(7, 3);
  // entries k/8 with |k| <= 9: every product and partial sum is exact in double and in each of these types, so
  // Eigen's double product (OpenBLAS) converted into T is the exact result (no Eigen GEMM compiled for T)
  const Matrix<T> exact = Matrix<double>(a * b).template cast<T>();
  const Matrix<T> at = a.template cast<T>(), bt = b.template cast<T>();
  CHECK(matmul_loops(at, bt) == exact);
  CHECK(product(at, bt) == exact);
}

TEST_CASE("the tape holds matrix nodes: attention at T = 512 records tens of nodes, and stats counts their bytes") {
  const AttentionInputs<double> in = random_attention<double>(11, 512, 64, 64, 64);
  Tape<double> tape;
  const AttentionProblem<double> p = record_attention(tape, in);
  tape.backward(p.J);
  const Tape<double>::Stats st = tape.stats();
  MESSAGE("T = 512: " << st.nodes << " nodes, " << st.value_bytes << " bytes of values, " << st.grad_bytes
                      << " bytes of gradients");
  CHECK(st.nodes == tape.size());
  CHECK(st.nodes < 30);
  std::size_t values = 0;
  for (std::size_t i = 0; i < tape.size(); ++i)
    values += static_cast<std::size_t>(tape.node(i).value.size()) * sizeof(double);
  CHECK(st.value_bytes == values);
  CHECK(st.grad_bytes >= values - 8); // every node reached (the output's 1x1 gradient included)
}

TEST_CASE(
    "lift into MPFR is exact and leaves Boost's default MPFR precision alone (the checker's threads rely on it)") {
  MpfrDigits digits(120);
  for (const float50& x : {float50(1) / float50(3), -float50(2) / float50(7), float50(0), float50(12345)}) {
    const mpfr_real y = lift<mpfr_real>(x);
    CHECK(mpfr_real::default_precision() == 120);
    CHECK(y.precision() == 120);
    CHECK(static_cast<float50>(y) == x);   // back exactly
    CHECK(y == static_cast<mpfr_real>(x)); // the same value Boost's conversion gives
    CHECK(mpfr_real::default_precision() == 120);
  }
  CHECK(lift<mpfr_real>(1.0 / 3.0) == mpfr_real(1.0 / 3.0));
  CHECK(lift<mpfr_real>(float128(1) / 3) == static_cast<mpfr_real>(float128(1) / 3));
  CHECK(lift<mpfr_real>(-infinity<float50>()) == -infinity<mpfr_real>());
}

TEST_CASE("convert into MPFR makes every entry at the current default precision, from float50 and from MPFR 60") {
  Matrix<float50> a(1, 2);
  a << float50(1) / float50(3), float50(5);
  Matrix<mpfr_real> b60;
  {
    MpfrDigits digits(60);
    b60 = convert<mpfr_real>(a);
    CHECK(b60(0, 0).precision() == 60);
  }
  MpfrDigits digits(120);
  const Matrix<mpfr_real> c = convert<mpfr_real>(a), d = convert<mpfr_real>(b60);
  for (Eigen::Index j = 0; j < 2; ++j) {
    CHECK(c(0, j).precision() == 120);
    CHECK(d(0, j).precision() == 120);
    CHECK(static_cast<float50>(c(0, j)) == a(0, j));
    CHECK(d(0, j) == b60(0, j));
  }
  CHECK(mpfr_real::default_precision() == 120);
}

TEST_CASE("a check on 2 threads at 60 and at 200 reference digits, in one process, gives the 1-thread results") {
  const AttentionInputs<double> in = random_attention<double>(12, 3, 3, 2, 2);
  MESSAGE("seed 12");
  const std::vector<Matrix<double>> x{in.X, in.Wq, in.Wk, in.Wv, in.G};
  const std::vector<std::string> names{"X", "Wq", "Wk", "Wv", "G"};
  for (const unsigned digits : {60u, 200u, 60u}) {
    CheckOptions opt;
    opt.reference_digits = digits;
    opt.threads = 1;
    const CheckReport one = check_gradient<double, mpfr_real>(FullAttentionGraph{}, x, names, opt);
    opt.threads = 2;
    const CheckReport two = check_gradient<double, mpfr_real>(FullAttentionGraph{}, x, names, opt);
    REQUIRE(one.checks.size() == two.checks.size());
    CHECK(one.passed());
    std::size_t at_digits = 0; // the checks against the reference (the others are in the engine's precision)
    for (std::size_t c = 0; c < one.checks.size(); ++c) {
      at_digits += one.checks[c].reference_precision == std::to_string(digits);
      CHECK(one.checks[c].reference_precision == two.checks[c].reference_precision);
      CHECK(one.checks[c].numeric == two.checks[c].numeric); // every digit of the reference
      CHECK(one.checks[c].max_abs_error == two.checks[c].max_abs_error);
    }
    CHECK(at_digits >= 20);
    MESSAGE(digits << " digits: " << one.checks.size() << " checks (" << at_digits
                   << " against the reference), 1 and 2 threads agree to every digit printed");
  }
}
