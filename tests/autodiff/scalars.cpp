// A smoke test on every scalar type: worked example 1 end to end, to each type's own precision.
#include "../chapter_expected.hpp"
#include "../support.hpp"

using namespace tapegrad;

template <Real T> void example1_smoke() {
  const test::Example1Expected<T> e = test::example1_expected<T>();
  Tape<T> tape;
  const AttentionProblem<T> p = record_attention(tape, chapter::example1<T>());
  tape.backward(p.J);
  const T tol = test::exact_tolerance<T>();
  test::check_close<T>("J", p.J.value(), Matrix<T>::Constant(1, 1, e.J), tol);
  test::check_close<T>("A", p.nodes.A.value(), e.A, tol);
  test::check_close<T>("dS", p.nodes.S.grad(), e.dS, tol);
  test::check_close<T>("dX", p.nodes.X.grad(), e.dX, tol);
}

TEST_CASE_TEMPLATE("worked example 1 on every scalar type", T, float, double, long double, float128, float50,
                   float100) {
  example1_smoke<T>();
}

TEST_CASE("worked example 1 in MPFR at digits chosen at run time") {
  for (unsigned digits : {30u, 77u, 200u}) {
    MpfrDigits scope(digits);
    CAPTURE(digits);
    CHECK(digits10<mpfr_real>() >= static_cast<int>(digits));
    CHECK(epsilon<mpfr_real>() < pow(mpfr_real(10), -static_cast<int>(digits) + 1));
    example1_smoke<mpfr_real>();
  }
}

TEST_CASE("types differ in precision as they claim: ln 3 in 100 digits vs 50 digits") {
  using std::abs;
  using std::log;
  const float100 wide = log(float100(3));
  const float100 narrow(log(float50(3)));
  CHECK(abs(wide - narrow) > pow(float100(10), -60));
  CHECK(abs(wide - narrow) < pow(float100(10), -48));
}
