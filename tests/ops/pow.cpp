#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("pow: whole exponents take any sign, 0^0 = 1, and a half power of a positive entry", T,
                   TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(-2), T(3), T(0)}, {T(1) / T(2), T(-1), T(4)}}));
  CHECK(pow(a, T(3)).value() == matrix<T>({{T(-8), T(27), T(0)}, {T(1) / T(8), T(-1), T(64)}}));
  CHECK(pow(a, T(0)).value() == Matrix<T>::Ones(2, 3)); // 0^0 = 1
  auto b = tape.input(matrix<T>({{T(-2), T(4)}}));
  CHECK(pow(b, T(-2)).value() == matrix<T>({{T(1) / T(4), T(1) / T(16)}}));
  auto c = tape.input(matrix<T>({{T(4), T(9) / T(16)}}));
  test::check_close<T>("pow 1/2", pow(c, T(1) / T(2)).value(), matrix<T>({{T(2), T(3) / T(4)}}),
                       test::exact_tolerance<T>());
  // the gradient p x^(p-1), and 0 for p = 0 (also at x = 0)
  Tape<T> t2;
  auto x = t2.input(matrix<T>({{T(-2), T(0)}}));
  t2.backward(sum(pow(x, T(3))));
  CHECK(x.grad() == matrix<T>({{T(12), T(0)}}));
  Tape<T> t3;
  auto z = t3.input(matrix<T>({{T(0), T(5)}}));
  t3.backward(sum(pow(z, T(0))));
  CHECK(z.grad() == matrix<T>({{T(0), T(0)}}));
}

TEST_CASE_TEMPLATE("pow: gradient against central differences, non-square, whole and fractional exponents", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(83);
  test::check_op_gradient<T>("pow 3", {random.make<T>(2, 3)}, [](const auto& in) { return pow(in[0], T(3)); });
  const Matrix<T> positive = random.make<T>(3, 2, 8, 24);
  test::check_op_gradient<T>("pow -3/2", {positive}, [](const auto& in) { return pow(in[0], T(-3) / T(2)); });
  test::check_op_gradient<T>("pow 5/4", {positive}, [](const auto& in) { return pow(in[0], T(5) / T(4)); });
}

TEST_CASE_TEMPLATE("pow: outside the domain, a DomainError naming the node, the entry and why", T,
                   TAPEGRAD_TEST_TYPES) {
  Tape<T> tape;
  auto a = tape.input(matrix<T>({{T(4), T(-2)}}), "A");
  CHECK_THROWS_WITH_AS(pow(a, T(1) / T(2), "P"),
                       "pow(A) for 'P': entry (0, 1) of A is -2; pow with exponent 0.5 (not a whole number) needs "
                       "entries > 0",
                       DomainError);
  auto z = tape.input(matrix<T>({{T(1), T(0)}}), "Z");
  CHECK_THROWS_WITH_AS(pow(z, T(-1)), "pow(Z): entry (0, 1) of Z is 0; pow with exponent -1 needs entries != 0",
                       DomainError);
  CHECK_THROWS_AS(pow(a, infinity<T>()), DomainError);
}

TEST_CASE("pow: whether the exponent is whole is read from its exact decimal text") {
  for (const char* whole : {"2", "-3", "2.0", "+4.000", "1e2", "1.5e1", "0", "0.0e5", "120e-1", "-0", "7E+1000000000"})
    CHECK_MESSAGE(decimal_is_whole(whole), whole);
  for (const char* not_whole :
       {"2.0000000000000000001", "0.5", "1e-1", "15e-1", ".5", "inf", "nan", "-inf", "1.25e1", "25E-1000000000"})
    CHECK_MESSAGE(!decimal_is_whole(not_whole), not_whole);
  // "2.0000000000000000001" rounds to 2 in double, yet it is not whole: a negative entry is refused
  Tape<double> tape;
  auto a = tape.input(Matrix<double>::Constant(1, 1, -2), "A");
  Params<double> p;
  p.set("exponent", Number<double>{2, "2.0000000000000000001"});
  CHECK_THROWS_AS(PowOp::apply<double>(operands(a), p, "P"), DomainError);
  p.set("exponent", Number<double>{2, "2"});
  CHECK(PowOp::apply<double>(operands(a), p, "P").value()(0, 0) == 4);
}
