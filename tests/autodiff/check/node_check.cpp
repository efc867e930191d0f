// The per-node check: a replay that does not reproduce its value is reported, not checked against.
#include "graphs.hpp"

using namespace tapegrad;
using namespace tapegrad::test;

TEST_CASE("a node whose replay does not reproduce its recorded value is reported, not checked against it") {
  Tape<double> tape;
  Tape<float50> reference;
  const Matrix<double> x = Matrix<double>::Constant(2, 2, 0.5);
  const auto a = tape.input(x, "x");
  const auto ar = reference.input(convert<float50>(x), "x");
  DriftingOp::apply<double>(operands(a), {}, "drift");
  DriftingOp::apply<float50>(operands(ar), {}, "drift");
  const CheckReport r = node_check(tape, reference, 1, fd_threshold<double, float50>());
  print(r);
  REQUIRE(r.checks.size() == 1);
  CHECK_FALSE(r.checks[0].passed);
  CHECK(r.checks[0].node == 1);
  CHECK(r.checks[0].node_name == "drift");
  CHECK(r.checks[0].note.find("does not reproduce the recorded value bit for bit") != std::string::npos);
}
