// detach: the value passes, the gradient does not. The checker holds a detached value at its recorded value in
// finite differences (so a correct graph with detach passes), skips it in the per-node check, and refuses the
// directional and Hessian checks, whose differences would move it.
#include "../support.hpp"

#include <tapegrad/autodiff/check.hpp>

using namespace tapegrad;

TEST_CASE_TEMPLATE("detach: value a, gradient 0 (x * detach(x) has gradient x, not 2x)", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(82);
  const Tensor<T> x = random.tensor<T>({2, 3});
  Tape<T> tape;
  const Var<T> a = tape.input(x, "X");
  const Var<T> d = detach(a);
  CHECK(d.tensor() == x);
  tape.backward(sum(hadamard(a, d)));
  CHECK(a.grad_tensor() == x);
  // forward mode: the detached value's derivative part is 0
  Tape<Dual<T>> dual;
  const Var<Dual<T>> v = dual.input(Matrix<Dual<T>>::Constant(1, 1, Dual<T>(T(3), T(1))), "v");
  CHECK(detach(v).value()(0, 0).eps == T(0));
  CHECK(detach(v).value()(0, 0).val == T(3));
}

TEST_CASE("detach: the whole check passes a correct graph, and names why directional mode cannot run") {
  test::RandomMatrices random(83);
  const Matrix<double> x = random.make<double>(2, 3);
  // a log-sum-exp with a detached shift, as people write it, and a product with a detached factor
  const auto f = [](auto&, const auto& in) {
    const auto shift = detach(in[0]);
    return sum(hadamard(in[0], shift)) + log(sum(exp(sub(in[0], shift)))) + sum(shift);
  };
  CheckOptions opt;
  opt.reference_digits = 50;
  const CheckReport r = check_gradient<double, mpfr_real>(f, {x}, {"X"}, opt);
  for (const CheckResult& c : r.checks)
    MESSAGE(c.name << " " << c.input << ": " << c.note);
  CHECK(r.passed());
  opt.directional = true;
  CHECK_THROWS_WITH_AS((check_gradient<double, mpfr_real>(f, {x}, {"X"}, opt)),
                       "directional check: node 1 (Detach) holds a value constant by definition, which these "
                       "differences would move; check every coordinate instead (its differences hold it at its "
                       "recorded value)",
                       UsageError);
}
