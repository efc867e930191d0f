// The checker itself: it passes correct gradients on a graph that is not attention, catches a gradient off
// by 1e-9 relative (which PyTorch's default gradcheck tolerances accept), names a node with a broken VJP,
// and says when a test point is saturated.
#include "../support.hpp"

#include <tapegrad/graph/verification/attention_check.hpp>

using namespace tapegrad;
using chapter::matrix;

namespace {

/// Not attention: J = sum(log(exp(X W) + C) .* D), a softplus-like layer with fan-out of X into both
/// products. Inputs {X, W, C, D}; C > 0.
struct SoftplusGraph {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    Var<U> Z = matmul(in[0], in[1], "Z");
    Var<U> L = log(add(exp(Z, "E"), in[2], "EC"), "L");
    Var<U> XX = matmul(transpose(in[0], "Xt"), in[0], "XtX"); // X used twice more
    return add(sum(hadamard(L, in[3], "LD"), "J1"), sum(XX, "J2"), "J");
  }
};

std::vector<Matrix<double>> softplus_inputs(test::RandomMatrices& random) {
  return {random.make<double>(3, 2), random.make<double>(2, 4), random.make<double>(3, 4, 4, 12),
          random.make<double>(3, 4)};
}
const std::vector<std::string> softplus_names{"X", "W", "C", "D"};

/// x -> x^2 whose VJP is deliberately wrong: 3 x g instead of 2 x g.
struct SquareBrokenOp {
  static constexpr OpInfo info{.name = "square_broken", .node = "SquareBroken", .formula = "x^2, VJP 3 x g"};
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
    Matrix<T> result = in[0].value().cwiseProduct(in[0].value());
    return common_tape(info, in).template record<SquareBrokenOp>(
        in, std::move(result), [](Backprop<T>& bp) { bp.accumulate(0, T(3) * bp.grad().cwiseProduct(bp.input(0))); },
        std::move(label));
  }
};
template <Real T> Var<T> square_broken(const Var<T>& a) { return SquareBrokenOp::apply<T>(operands(a), {}, "broken"); }

struct BrokenGraph {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return sum(hadamard(square_broken(matmul(in[0], in[1], "P")), in[2], "PD"), "J");
  }
};

/// J = sum(x .* x) with inputs {x, unused}: the second input is never read.
struct IgnoresSecond {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return sum(hadamard(in[0], in[0], "xx"), "J");
  }
};

/// x -> x^2 with a right VJP but without an apply (so without a replay), as a user's op may be.
struct SquareNoReplayOp {
  static constexpr OpInfo info{.name = "square_no_replay", .node = "SquareNoReplay", .formula = "x^2"};
};
template <Real T> Var<T> square_without_replay(const Var<T>& a) {
  return a.tape().template record<SquareNoReplayOp>(
      {a}, Matrix<T>(a.value().cwiseProduct(a.value())),
      [](Backprop<T>& bp) { bp.accumulate(0, T(2) * bp.grad().cwiseProduct(bp.input(0))); }, "sq");
}

/// J = sum(square_without_replay(x W)) with inputs {x, W}.
struct NoReplayGraph {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return sum(square_without_replay(matmul(in[0], in[1], "P")), "J");
  }
};

int count_failed(const CheckReport& r, const std::string& name) {
  int n = 0;
  for (const CheckResult& c : r.checks)
    n += !c.passed && c.name.starts_with(name);
  return n;
}

void print(const CheckReport& r) {
  for (const CheckResult& c : r.checks)
    MESSAGE((c.passed ? "pass " : "FAIL ")
            << c.name << " | " << c.input << ": max rel " << c.max_rel_error << " threshold " << c.threshold << " at ("
            << c.worst_row << ", " << c.worst_col << ")");
}

} // namespace

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

TEST_CASE("precision names are the ones --precision takes") {
  CHECK(precision_name<float>() == "float");
  CHECK(precision_name<double>() == "double");
  CHECK(precision_name<long double>() == "long-double");
  CHECK(precision_name<float128>() == "float128");
  CHECK(precision_name<float50>() == "50");
  CHECK(precision_name<float100>() == "100");
  MpfrDigits digits(200);
  CHECK(precision_name<mpfr_real>() == "200");
}

TEST_CASE("a graph whose output is not 1x1 is refused with a clear error") {
  const auto f = [](auto&, const auto& in) { return in[0]; };
  CHECK_THROWS_WITH_AS((check_gradient<double, double>(f, {Matrix<double>::Ones(2, 2)}, {"X"})),
                       "check: the graph's output X is 2x2; a checked graph must end in a 1x1 value (sum it, or take "
                       "a probe sum(O * G))",
                       UsageError);
}

TEST_CASE("the finite differences of input k replay only what input k reaches, and give the full recording's J") {
  // Attention through the projections, 4 x 4 x 4 x 4 at 50 digits, seed 8. Moving one entry of each input
  // by 1/3, the pruned evaluation must return exactly (==) the J of recording the whole graph at the moved
  // inputs: the same ops on the same values.
  const AttentionInputs<float50> in = random_attention<float50>(8, 4, 4, 4, 4);
  const std::vector<Matrix<float50>> x{in.X, in.Wq, in.Wk, in.Wv, in.G};
  const std::vector<std::string> names{"X", "Wq", "Wk", "Wv", "G"};
  std::vector<std::size_t> replayed;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const InputFunction<float50> of_k(FullAttentionGraph{}, x, names, k);
    replayed.push_back(of_k.replayed());
    for (Eigen::Index c = 0; c < x[k].size(); c += 5) {
      std::vector<Matrix<float50>> moved = x;
      moved[k].data()[c] += float50(1) / float50(3);
      Tape<float50> full, pruned;
      const float50 want = record_graph(full, FullAttentionGraph{}, moved, names).value()(0, 0);
      CHECK(of_k(pruned, moved[k]) == want);
      if (k > 0) // X reaches every op; for the others, the nodes that do not depend on them are not recorded
        CHECK(pruned.size() < full.size());
    }
  }
  MESSAGE("nodes replayed per input X, Wq, Wk, Wv, G: " << replayed[0] << ", " << replayed[1] << ", " << replayed[2]
                                                        << ", " << replayed[3] << ", " << replayed[4]);
  // 10 ops: Q K V Kt S0 S A O OG J. X reaches all; Wq skips K, V, Kt; Wk skips Q, V; Wv reaches V, O, OG, J;
  // G only OG and J.
  CHECK(replayed[0] == 10);
  CHECK(replayed[1] == 7);
  CHECK(replayed[2] == 8);
  CHECK(replayed[3] == 4);
  CHECK(replayed[4] == 2);
}

TEST_CASE("an input the output does not read: its finite differences are exactly 0, with nothing replayed") {
  test::RandomMatrices random(14);
  const std::vector<Matrix<double>> x{random.make<double>(2, 3), random.make<double>(2, 2)};
  const InputFunction<double> of_1(IgnoresSecond{}, x, {"x", "unused"}, 1);
  CHECK(of_1.replayed() == 0);
  const Reference<double> ref = fd_reference(IgnoresSecond{}, x, {"x", "unused"}, 1);
  CHECK(ref.sixth == Matrix<double>::Zero(2, 2));
  CHECK(ref.richardson == Matrix<double>::Zero(2, 2));
}

TEST_CASE("an op recorded without a replay: the finite differences record the whole graph instead") {
  test::RandomMatrices random(15);
  const std::vector<Matrix<double>> x{random.make<double>(2, 3), random.make<double>(3, 2)};
  const std::vector<std::string> names{"x", "W"};
  const InputFunction<double> of_0(NoReplayGraph{}, x, names, 0);
  CHECK_FALSE(of_0.complete());
  const auto full = [&](const std::vector<Matrix<double>>& m) {
    Tape<double> t;
    return record_graph(t, NoReplayGraph{}, m, names).value()(0, 0);
  };
  for (std::size_t k = 0; k < 2; ++k) // the same numbers as differences of the whole recording, bit for bit
    CHECK(fd_reference(NoReplayGraph{}, x, names, k).sixth == central_difference<double>(full, x, k));
  const CheckReport r = check_gradient<double, float50>(NoReplayGraph{}, x, names);
  print(r);
  CHECK(r.passed());
  // The per-node check cannot evaluate that node alone: it says so, and --strict makes it a failure.
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("not checked: sq (SquareNoReplay) has no replay") != std::string::npos);
  CheckOptions strict;
  strict.strict = true;
  const CheckReport s = check_gradient<double, float50>(NoReplayGraph{}, x, names, strict);
  CHECK_FALSE(s.passed());
  CHECK(count_failed(s, "per-node VJP") == 1);
}

/// x -> x + c where c changes at every call: its replay does not reproduce the recorded value.
struct DriftingOp {
  static constexpr OpInfo info{.name = "drifting", .node = "Drifting", .formula = "x + (a counter)"};
  static inline int calls = 0;
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
    const T c = T(++calls);
    return common_tape(info, in).template record<DriftingOp>(
        in, Matrix<T>(in[0].value().array() + c), [](Backprop<T>& bp) { bp.accumulate(0, bp.grad()); },
        std::move(label));
  }
};

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

/// J = sum(log(x)) with inputs {x}.
struct LogGraph {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const { return sum(log(in[0]), "J"); }
};

TEST_CASE("a finite-difference point outside an op's domain is a failed check with a note, not an aborted check") {
  // x = 1e-12 > 0, but the 50-digit sixth-order stencil steps about 1e-7 each way: some points have x < 0.
  Matrix<double> x(1, 2);
  x << 0.5, 1e-12;
  const CheckReport r = check_gradient<double, float50>(LogGraph{}, {x}, {"x"});
  print(r);
  CHECK_FALSE(r.passed());
  bool noted = false;
  for (const CheckResult& c : r.checks)
    if (c.kind == CheckKind::tape_vs_finite_differences) {
      CHECK_FALSE(c.passed);
      noted = c.note.find("fell outside an op's domain") != std::string::npos;
    }
  CHECK(noted);
}

TEST_CASE("every CheckKind has an id and a name, and check_kinds lists each once") {
  std::size_t n = 0;
  for (int k = 0; std::string(kind_id(static_cast<CheckKind>(k))) != "?"; ++k, ++n) {
    const auto kind = static_cast<CheckKind>(k);
    CHECK(std::count(std::begin(check_kinds), std::end(check_kinds), kind) == 1);
    CHECK(kind_name(kind, "other") != "?");
  }
  CHECK(n == std::size(check_kinds));
}
