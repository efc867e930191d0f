// Directional mode: weaker, and labelled so.
#include "graphs.hpp"

using namespace tapegrad;
using namespace tapegrad::test;

TEST_CASE("directional mode: passes correct gradients, catches the broken VJP, and says it is weaker") {
  test::RandomMatrices random(109);
  CheckOptions opt;
  opt.reference_digits = 50;
  opt.directional = true;
  opt.directions = 4;
  const CheckReport good =
      check_gradient<double, mpfr_real>(SoftplusGraph{}, softplus_inputs(random), softplus_names, opt);
  print(good);
  CHECK(good.passed());
  int directional = 0;
  for (const CheckResult& c : good.checks)
    if (c.name == "directional finite differences") {
      ++directional;
      CHECK(c.note.find("weaker") != std::string::npos);
    }
  CHECK(directional == 4);
  CHECK(count_failed(good, "tape vs finite differences") == 0);

  const std::vector<Matrix<double>> x = {random.make<double>(2, 3), random.make<double>(3, 2),
                                         random.make<double>(2, 2)};
  const CheckReport bad = check_gradient<double, mpfr_real>(BrokenGraph{}, x, {"A", "B", "D"}, opt);
  CHECK(count_failed(bad, "directional finite differences") == 4);
}
