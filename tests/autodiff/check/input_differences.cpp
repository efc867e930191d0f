// Finite differences of one input: only what it reaches is replayed, the same numbers as a whole recording;
// a point outside an op's domain.
#include "graphs.hpp"

using namespace tapegrad;
using namespace tapegrad::test;

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
