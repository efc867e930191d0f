// The kink guard: relu or abs operands within the differences' reach of 0 are named as poor test points, and
// the per-node check does not call such a node's VJP a failure.
#include "graphs.hpp"

#include <tapegrad/ops/elementwise.hpp>

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

TEST_CASE("kink guard: an entry of a tensor is named by its own index") {
  Tape<double> tape;
  Tensor<double> x = Tensor<double>::constant(Shape{2, 3, 4}, 0.5);
  x.at({1, 2, 1}) = 0; // storage row 5, column 1
  relu(tape.input(x, "x"), "r");
  const std::vector<std::string> w = kink_warnings(tape, kink_reach<double>());
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("kink: r (Relu): entry (1, 2, 1) of its operand x is 0") == 0);
}

TEST_CASE("kink guard: the per-node check does not judge the coordinates at a kink, and judges the others") {
  KinkCase at(0);
  const CheckReport r = node_check(at.tape, at.reference, 1, fd_threshold<double, float50>());
  print(r);
  REQUIRE(r.checks.size() == 1);
  CHECK(r.checks[0].passed);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("per-node check: kink: r (Relu): entry (1, 0) of its operand x is 0") == 0);
  KinkCase away(0.125);
  const CheckReport ok = node_check(away.tape, away.reference, 1, fd_threshold<double, float50>());
  REQUIRE(ok.checks.size() == 1);
  CHECK(ok.checks[0].passed);
  CHECK(ok.warnings.empty());
}

namespace {

/// relu whose VJP passes twice the gradient: wrong at every coordinate with x > 0.
struct DoubledReluOp {
  static constexpr OpInfo info{.name = "doubled_relu", .node = "DoubledRelu", .kink = true};
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return record_unary<DoubledReluOp>(
        in, p, std::move(label), [](const T& x) { return x > T(0) ? x : T(0); },
        [](const T& x, const T&) { return x > T(0) ? T(2) : T(0); });
  }
};

} // namespace

TEST_CASE("kink guard: a wrong VJP of a kinked op is still caught at the coordinates away from the kink") {
  Matrix<double> x(2, 2);
  x << 0.5, -0.25, 0, 0.75; // (1, 0) at the kink
  Tape<double> tape;
  Tape<float50> reference;
  DoubledReluOp::apply<double>(operands(tape.input(x, "x")), {}, "bad");
  DoubledReluOp::apply<float50>(operands(reference.input(convert<float50>(x), "x")), {}, "bad");
  const CheckReport r = node_check(tape, reference, 1, fd_threshold<double, float50>());
  print(r);
  REQUIRE(r.checks.size() == 1);
  CHECK_FALSE(r.checks[0].passed);
  CHECK(r.checks[0].node_name == "bad");
  CHECK(r.warnings.size() == 1); // the kink coordinate, not judged
}

namespace {

/// relu whose VJP is wild (10^12) at x = 0 and off by one part in 10^6 everywhere else: a large value at the
/// kink must not become the scale that hides the small error at the other coordinates.
struct WildAtKinkReluOp {
  static constexpr OpInfo info{.name = "wild_relu", .node = "WildRelu", .kink = true};
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return record_unary<WildAtKinkReluOp>(
        in, p, std::move(label), [](const T& x) { return x > T(0) ? x : T(0); },
        [](const T& x, const T&) {
          if (x == T(0)) return T(1000000000000);
          return x > T(0) ? T(1) + T(1) / T(1000000) : T(0);
        });
  }
};

} // namespace

TEST_CASE("kink guard: a coordinate left out at a kink counts neither in the error nor in the scale") {
  Matrix<double> x(2, 2);
  x << 0.5, -0.25, 0, 0.75; // (1, 0) at the kink
  Tape<double> tape;
  Tape<float50> reference;
  WildAtKinkReluOp::apply<double>(operands(tape.input(x, "x")), {}, "wild");
  WildAtKinkReluOp::apply<float50>(operands(reference.input(convert<float50>(x), "x")), {}, "wild");
  const CheckReport r = node_check(tape, reference, 1, fd_threshold<double, float50>());
  print(r);
  REQUIRE(r.checks.size() == 1);
  // The error is 1e-6 relative at (0, 0) and (1, 1). With the kink's 10^12 in the scale it would read about
  // 1e-18 (times the ratio of the seeded W's entries), below the threshold (2.27e-13), and pass; judged on the
  // other coordinates alone it is about 1e-6. tests/autodiff/check/tolerances.cpp shows both on fixed numbers.
  CHECK_FALSE(r.checks[0].passed);
  CHECK(r.checks[0].rel_error > 1e-7);
  CHECK_FALSE((r.checks[0].worst_row == 1 && r.checks[0].worst_col == 0)); // not the kink's (1, 0)
  CHECK(r.warnings.size() == 1);
}

TEST_CASE("kink guard: amax entries within the reach of a tie for their slice's maximum are named") {
  const double reach = kink_reach<double>();
  Tape<double> tape;
  // rows: (1, 3, 2) has no tie; (5, 5 + 1e-12, 0) has two entries within reach of its maximum; along dim 1
  const Var<double> x = tape.input(Tensor<double>{{1.0, 3.0, 2.0}, {5.0, 5.0 + 1e-12, 0.0}}, "x");
  amax(x, {1}, false, "m");
  const std::vector<std::string> w = kink_warnings(tape, reach);
  REQUIRE(w.size() == 1);
  MESSAGE(w[0]);
  CHECK(w[0].find("kink: m (Amax): entry (1, 0) of its operand x is 5 (and 1 more entries)") == 0);
  CHECK(w[0].find("tied for amax's maximum") != std::string::npos);
  const auto near = tie_coordinates(tape.node(0).value, Shape{2, 3}, {1}, reach);
  REQUIRE(near.size() == 2);
  CHECK(near[1] == std::pair<Eigen::Index, Eigen::Index>{1, 1});
  // along dim 0 the columns (1, 5), (3, 5), (2, 0) hold no tie
  amax(x, {0}, false, "c");
  CHECK(kink_warnings(tape, reach).size() == 1);
}
