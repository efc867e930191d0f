// jacobian() and check_jacobian(): graphs whose output is a matrix. Every (output entry, input entry) pair is
// checked, so a VJP whose errors cancel when the output is summed is still caught, and the worst pair named.
#include "graphs.hpp"

#include <tapegrad/autodiff/check/jacobian.hpp>

#include <set>

using namespace tapegrad;
using namespace tapegrad::test;

namespace {

/// y = x for a 1 x 2 x, with a VJP that sends each entry's gradient to the OTHER entry: right whenever both
/// entries' upstream gradients are equal (as when the output is summed), wrong otherwise.
struct CrossedIdentityOp {
  static constexpr OpInfo info{.name = "crossed_identity",
                               .call = "crossed(a)",
                               .node = "CrossedIdentity",
                               .file = "tests/autodiff/check/jacobian.cpp",
                               .formula = "result = a (1 x 2); its VJP swaps the two entries' gradients",
                               .shapes = "a: 1 x 2 -> 1 x 2"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    if (in[0].rows() != 1 || in[0].cols() != 2) throw ShapeError("crossed: a 1 x 2 operand");
    return {1, 2};
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    shape(in, p);
    return common_tape(info, in).template record<CrossedIdentityOp>(
        in, in[0].value(), [](Backprop<T>& bp) { bp.accumulate(0, bp.grad().rowwise().reverse()); }, std::move(label),
        p);
  }
};

template <Real T> Var<T> crossed(const Var<T>& a) { return CrossedIdentityOp::apply<T>(operands(a), {}, {}); }

} // namespace

TEST_CASE("jacobian: d(X W)[i][j] / d W[k][l] is X[i][k] when j = l, entry for entry") {
  Tape<double> tape;
  Matrix<double> x(2, 2), w(2, 3);
  x << 1, 2, 3, 4;
  w << 5, 6, 7, 8, 9, 10;
  const Var<double> X = tape.input(x, "X"), W = tape.input(w, "W");
  const Var<double> out = matmul(X, W);
  const Matrix<double> J = jacobian(tape, out, W);
  REQUIRE(J.rows() == 6);
  REQUIRE(J.cols() == 6);
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index j = 0; j < 3; ++j)
      for (Eigen::Index k = 0; k < 2; ++k)
        for (Eigen::Index l = 0; l < 3; ++l)
          CHECK(J(i * 3 + j, k * 3 + l) == (j == l ? x(i, k) : 0.0));
  CHECK(W.grad().isZero()); // the sweeps leave no gradient behind
}

TEST_CASE("check_jacobian: tanh(X W) passes for every output entry, each named") {
  Matrix<double> x(2, 2), w(2, 3);
  x << 0.5, -1, 0.25, 2;
  w << 0.3, -0.2, 0.1, 0.4, -0.35, 0.05;
  CheckOptions opt;
  opt.reference_digits = 50;
  const auto f = [](auto&, const auto& in) { return tanh(matmul(in[0], in[1])); };
  const CheckReport r = check_jacobian<double, mpfr_real>(f, {x, w}, {"X", "W"}, opt);
  std::set<std::string> entries;
  std::size_t tape_checks = 0;
  for (const CheckResult& c : r.checks) {
    entries.insert(c.graph);
    tape_checks += c.kind == CheckKind::tape_vs_finite_differences;
  }
  const CheckResult* worst = worst_check(r);
  REQUIRE(worst != nullptr);
  MESSAGE(r.checks.size() << " checks; worst " << worst->name << " " << worst->graph << " " << worst->input << " rel "
                          << worst->max_rel_error << " <= " << worst->threshold);
  CHECK(r.passed());
  CHECK(entries.size() == 6);
  CHECK(entries.count("out(1, 2)") == 1);
  CHECK(tape_checks == 12); // 6 output entries x 2 inputs
}

TEST_CASE("check_jacobian: a VJP that is right only for a summed output is caught, the worst pair named") {
  Matrix<double> x(1, 2);
  x << 0.75, -1.5;
  CheckOptions opt;
  opt.reference_digits = 50;
  const auto f = [](auto&, const auto& in) { return crossed(exp(in[0])); };
  // Summed, the whole-graph check cannot see it (both upstream gradients are 1); only the per-node check can.
  const auto summed = [&](auto& tape, const auto& in) { return sum(f(tape, in)); };
  const CheckReport s = check_gradient<double, mpfr_real>(summed, {x}, {"X"}, opt);
  for (const CheckResult& c : s.checks)
    if (c.kind == CheckKind::tape_vs_finite_differences) CHECK(c.passed);
  // Entry by entry, the tape's own gradient of each entry is wrong.
  const CheckReport r = check_jacobian<double, mpfr_real>(f, {x}, {"X"}, opt);
  CHECK_FALSE(r.passed());
  std::size_t failed = 0;
  for (const CheckResult& c : r.checks)
    failed += c.kind == CheckKind::tape_vs_finite_differences && !c.passed;
  CHECK(failed == 2);
  const CheckResult* worst = worst_check(r);
  REQUIRE(worst != nullptr);
  MESSAGE("worst: " << worst->name << " " << worst->graph << " " << worst->input << " rel " << worst->max_rel_error);
  CHECK_FALSE(worst->passed);
  CHECK(worst->graph.rfind("out(0, ", 0) == 0);
}
