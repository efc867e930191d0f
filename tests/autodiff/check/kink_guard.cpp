// The kink guard: relu or abs operands within the differences' reach of 0 are named as poor test points, and
// the per-node check does not call such a node's VJP a failure.
#include "graphs.hpp"

using namespace tapegrad;
using namespace tapegrad::test;

namespace {

/// relu(x) on both tapes, x holding `near` at (1, 0).
struct KinkCase {
  Tape<double> tape;
  Tape<float50> reference;
  explicit KinkCase(double near) {
    Matrix<double> x(2, 2);
    x << 0.5, -0.25, near, 0.75;
    relu(tape.input(x, "x"), "r");
    relu(reference.input(convert<float50>(x), "x"), "r");
  }
};

} // namespace

TEST_CASE("kink guard: an operand entry within the reach of the differences is named with its coordinate") {
  const double reach = kink_reach<double>();
  MESSAGE("reach of the sixth-order differences in double: " << reach);
  KinkCase c(1e-12);
  const std::vector<std::string> w = kink_warnings(c.tape, reach);
  REQUIRE(w.size() == 1);
  MESSAGE(w[0]);
  CHECK(w[0].find("kink: r (Relu): entry (1, 0) of its operand x is 1e-12") == 0);
  CHECK(w[0].find("poor test point") != std::string::npos);
  CHECK(kink_warnings(KinkCase(0.125).tape, reach).empty());
  CHECK(kink_warnings(KinkCase(-reach * 2).tape, reach).empty());
  CHECK(kink_warnings(KinkCase(0).tape, reach).size() == 1); // on the kink itself
}

TEST_CASE("kink guard: the per-node check warns at a kink instead of failing, and checks the same node away from it") {
  KinkCase at(0);
  const CheckReport r = node_check(at.tape, at.reference, 1, fd_threshold<double, float50>());
  print(r);
  CHECK(r.checks.empty()); // not judged
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("per-node check: kink: r (Relu): entry (1, 0) of its operand x is 0") == 0);
  KinkCase away(0.125);
  const CheckReport ok = node_check(away.tape, away.reference, 1, fd_threshold<double, float50>());
  print(ok);
  REQUIRE(ok.checks.size() == 1);
  CHECK(ok.checks[0].passed);
  CHECK(ok.warnings.empty());
}
