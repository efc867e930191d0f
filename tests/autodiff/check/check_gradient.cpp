// The whole check: it passes correct gradients on a graph that is not attention, catches a gradient off by
// 1e-9 relative (which PyTorch's default gradcheck tolerances accept), names a node with a broken VJP, and says
// when a test point is saturated.
#include "graphs.hpp"

using namespace tapegrad;
using namespace tapegrad::test;

TEST_CASE("a graph that is not attention passes every check, double against 50 digits") {
  test::RandomMatrices random(101);
  CheckOptions opt;
  opt.reference_digits = 50;
  const CheckReport r =
      check_gradient<double, mpfr_real>(SoftplusGraph{}, softplus_inputs(random), softplus_names, opt);
  print(r);
  CHECK(r.passed());
  CHECK(count_failed(r, "") == 0);
  CHECK(r.checks.size() >= 8 + 3 + 10); // FD + reference per input, 3 dual directions, per-node
}

TEST_CASE("the same graph, 50 digits against a 100-digit reference, passes to 1e-40") {
  test::RandomMatrices random(102);
  std::vector<Matrix<float50>> x;
  for (const Matrix<double>& m : softplus_inputs(random))
    x.push_back(m.cast<float50>());
  CheckOptions opt;
  opt.reference_digits = 100;
  const CheckReport r = check_gradient<float50, mpfr_real>(SoftplusGraph{}, x, softplus_names, opt);
  print(r);
  CHECK(r.passed());
  MpfrDigits digits(100);
  CHECK(fd_threshold<float50, mpfr_real>() <= mpfr_real(1) / pow(mpfr_real(10), 40));
}

TEST_CASE("a gradient off by 1e-9 relative in one coordinate fails, though PyTorch's gradcheck would accept it") {
  test::RandomMatrices random(103);
  const std::vector<Matrix<double>> x = softplus_inputs(random);
  SoftplusGraph f;
  const EngineGradient<double> engine = engine_gradient(f, x, softplus_names);
  std::vector<Matrix<double>> off = engine.grads;
  const double g = off[0](1, 1);
  off[0](1, 1) = g * (1 + 1e-9);
  // PyTorch gradcheck defaults: |a - n| <= atol + rtol |n| with atol 1e-5, rtol 1e-3.
  CHECK(std::abs(off[0](1, 1) - g) <= 1e-5 + 1e-3 * std::abs(g));

  CheckOptions opt;
  opt.reference_digits = 50;
  opt.wrt = {0};
  const CheckReport r = check_gradient<double, mpfr_real>(f, x, softplus_names, opt, {{"off by 1e-9", off}});
  print(r);
  bool tape_passed = false, off_failed = false;
  for (const CheckResult& c : r.checks) {
    if (c.name == "tape vs finite differences") tape_passed = c.passed;
    if (c.name == "off by 1e-9 vs finite differences") {
      off_failed = !c.passed;
      CHECK(c.worst_row == 1);
      CHECK(c.worst_col == 1);
    }
  }
  CHECK(tape_passed);
  CHECK(off_failed);
}

TEST_CASE_TEMPLATE("a broken VJP is caught by finite differences, dual numbers and the per-node check, which names it",
                   T, double, float50) {
  test::RandomMatrices random(107);
  const std::vector<Matrix<T>> x = {random.template make<T>(2, 3), random.template make<T>(3, 2),
                                    random.template make<T>(2, 2)};
  CheckOptions opt;
  opt.reference_digits = 2 * digits10<T>();
  const CheckReport r = check_gradient<T, mpfr_real>(BrokenGraph{}, x, {"A", "B", "D"}, opt);
  print(r);
  CHECK_FALSE(r.passed());
  CHECK(count_failed(r, "tape vs finite differences") == 2); // A and B feed the broken op; D does not
  for (const CheckResult& c : r.checks)
    if (c.name == "tape vs finite differences" && c.input == "D") CHECK(c.passed);
  CHECK(count_failed(r, "dual numbers") == 3);
  std::vector<std::string> failing_nodes;
  for (const CheckResult& c : r.checks)
    if (c.name == "per-node VJP" && !c.passed) failing_nodes.push_back(c.input);
  REQUIRE(failing_nodes.size() == 1);
  CHECK(failing_nodes[0] == "broken <- P");
  CHECK(count_failed(r, "reference") == 0); // the reference itself is sound
}

TEST_CASE("the saturation guard flags one-hot softmax rows, naming node and row, and is quiet otherwise") {
  using std::sqrt;
  AttentionInputs<double> saturated = chapter::example1<double>();
  saturated.Wq = 40 * sqrt(2.0) * Matrix<double>::Identity(2, 2); // S = 40 I: 1 - max A = 1/(e^40 + 1)
  CheckOptions opt;
  opt.reference_digits = 50;
  MpfrDigits digits(50);
  const CheckReport r = check_attention<double, mpfr_real>("saturated", saturated, opt);
  REQUIRE(r.warnings.size() == 2);
  CHECK(r.warnings[0].find("A row 0 is one-hot") != std::string::npos);
  CHECK(r.warnings[1].find("A row 1 is one-hot") != std::string::npos);
  CHECK(r.warnings[0].find("poor test point") != std::string::npos);
  CHECK(check_attention<double, mpfr_real>("example 1", chapter::example1<double>(), opt).warnings.empty());
}

TEST_CASE("a graph whose output has more than one entry is refused with a clear error") {
  const auto f = [](auto&, const auto& in) { return in[0]; };
  CHECK_THROWS_WITH_AS((check_gradient<double, double>(f, {Matrix<double>::Ones(2, 2)}, {"X"})),
                       "check: the graph's output X is 2x2; a checked graph must end in a value of one entry (sum it, "
                       "take a probe sum(O * G), or check every entry with check_jacobian)",
                       UsageError);
}
