// The next chapters' attention (masks, key/value cache offset, heads, positions, output projection, dropout)
// checked three ways: the tape, the hand-written backward extended to all of it, and finite differences in
// a higher precision. Thresholds come from check_gradient (fixed from the precisions before the run).
#include "../support.hpp"

#include <tapegrad/graph/verification/attention_check.hpp>

using namespace tapegrad;

namespace {

/// Runs every check of one configuration, prints the thresholds and worst errors, and asserts they pass.
template <Real T, Real R> CheckReport check_config(const std::string& what, const AttentionConfig& config, int m, int D,
                                                   int d, int r, std::uint64_t seed, unsigned reference_digits) {
  MESSAGE(what << ": seed " << seed << ", m,D,d,r = " << m << "," << D << "," << d << "," << r << ", heads "
               << config.heads << ", causal " << config.causal << ", offset " << config.offset << ", dropout "
               << config.dropout);
  CheckOptions opt;
  opt.seed = seed;
  opt.reference_digits = reference_digits;
  const CheckReport report =
      check_attention<T, R>(what, random_masked_attention<T>(seed, m, D, d, r, config), opt, config);
  std::size_t hand = 0, fd = 0;
  for (const CheckResult& c : report.checks) {
    if (!c.passed)
      MESSAGE("FAILED " << c.graph << ": " << c.name << " " << c.input << " rel " << c.max_rel_error << " > "
                        << c.threshold);
    hand += c.name.starts_with("tape vs hand-written") || c.name.starts_with("hand-written vs");
    fd += c.name == "tape vs finite differences";
  }
  const auto worst = std::max_element(report.checks.begin(), report.checks.end(), [](const auto& a, const auto& b) {
    return std::stod(a.max_rel_error) < std::stod(b.max_rel_error);
  });
  REQUIRE(worst != report.checks.end());
  MESSAGE(report.checks.size() << " checks; worst rel " << worst->max_rel_error << " (" << worst->name << ", "
                               << worst->input << ") against threshold " << worst->threshold);
  CHECK(report.passed());
  CHECK(fd == 10);   // Q, K, V, Wo locally; X, P, Wq, Wk, Wv, Wo through the projections
  CHECK(hand >= 22); // tape vs hand-written and hand-written vs FD on each, plus the two forward values
  return report;
}

} // namespace

TEST_CASE("causal mask: three-way check against the by-hand reference with masks") {
  AttentionConfig config;
  config.causal = true;
  check_config<double, mpfr_real>("causal", config, 4, 3, 4, 2, 11, 50);
}

TEST_CASE("padding mask and causal mask together, two heads") {
  AttentionConfig config;
  config.causal = true;
  config.heads = 2;
  config.key_padding = {true, true, false, true, false};
  check_config<double, mpfr_real>("causal + padding, 2 heads", config, 5, 4, 4, 4, 13, 50);
}

TEST_CASE("multi-head attention with positions and Wo against the by-hand reference, unmasked, 3 heads") {
  AttentionConfig config;
  config.heads = 3;
  check_config<double, mpfr_real>("3 heads", config, 3, 4, 6, 3, 17, 50);
}

TEST_CASE("the key/value cache: 2 queries after 3 cached positions see keys j <= i + 3") {
  AttentionConfig config;
  config.causal = true;
  config.offset = 3;
  config.heads = 2;
  const CheckReport r = check_config<double, mpfr_real>("offset 3", config, 2, 3, 4, 2, 19, 50);
  // Q has fewer rows than K
  const AttentionInputs<double> in = random_masked_attention<double>(19, 2, 3, 4, 2, config);
  const AttentionByHand<double> h = attention_by_hand(in.X, in.P, in.Wq, in.Wk, in.Wv, in.Wo, in.G, config);
  CHECK(h.Q.rows() == 2);
  CHECK(h.K.rows() == 5);
  CHECK(h.A[0](0, 4) == 0.0); // query 0 stands at position 3: key 4 is its future
  CHECK(h.A[0](1, 4) > 0.0);
  // the position table has 7 rows; rows 5 and 6 are unused and get exactly 0
  CHECK(h.dP.rows() == 7);
  CHECK(h.dP.bottomRows(2) == Matrix<double>::Zero(2, 3));
}

TEST_CASE("fully masked query rows: output 0, zero gradients, no NaN, the checks pass; strict mode refuses") {
  AttentionConfig config;
  config.causal = true;
  config.key_padding = {false, true, true, true}; // query 0 sees only key 0, which is padding
  check_config<double, mpfr_real>("fully masked row 0", config, 4, 3, 2, 2, 23, 50);
  const AttentionInputs<double> in = random_masked_attention<double>(23, 4, 3, 2, 2, config);
  Tape<double> tape;
  std::vector<Var<double>> v;
  for (const Matrix<double>* m : {&in.X, &in.P, &in.Wq, &in.Wk, &in.Wv, &in.Wo})
    v.push_back(tape.input(*m));
  const MultiHeadNodes<double> n = multi_head_attention(v[0], &v[1], v[2], v[3], v[4], &v[5], config);
  tape.backward(n.O, in.G);
  CHECK(n.C.value().row(0) == Matrix<double>::Zero(1, 2));
  for (const Var<double>& x : v)
    CHECK(x.grad().allFinite());
  CHECK(n.heads[0].S.grad().row(0) == Matrix<double>::Zero(1, 4));
  config.masked_rows = MaskedRows::error;
  Tape<double> strict;
  std::vector<Var<double>> w;
  for (const Matrix<double>* m : {&in.X, &in.P, &in.Wq, &in.Wk, &in.Wv, &in.Wo})
    w.push_back(strict.input(*m));
  CHECK_THROWS_WITH_AS(multi_head_attention(w[0], &w[1], w[2], w[3], w[4], &w[5], config),
                       "softmax_rows(M): row 0 of M (4x4) is entirely -inf: every key is masked for that query "
                       "(strict mode, MaskedRows::error)",
                       UsageError);
}

TEST_CASE("dropout on the attention weights: the same seeded mask in the tape, its VJP and the by-hand code") {
  AttentionConfig config;
  config.causal = true;
  config.heads = 2;
  config.dropout = 0.25;
  config.dropout_seed = 29;
  check_config<double, mpfr_real>("dropout 0.25", config, 4, 3, 4, 4, 29, 50);
  // dropout is on: some weights are dropped, and the pre-dropout weights still sum to 1 per row
  const AttentionInputs<double> in = random_masked_attention<double>(29, 4, 3, 4, 4, config);
  const AttentionByHand<double> h = attention_by_hand(in.X, in.P, in.Wq, in.Wk, in.Wv, in.Wo, in.G, config);
  long dropped = 0;
  for (Eigen::Index i = 0; i < 4; ++i) {
    CHECK(std::abs(h.A[0].row(i).sum() - 1.0) <= 128 * epsilon<double>());
    for (Eigen::Index j = 0; j <= i; ++j)
      dropped += h.Ad[0](i, j) == 0.0;
  }
  CHECK(dropped > 0);
}

TEST_CASE("50 digits against 100: the masked multi-head graph agrees to 1e-40 and beyond") {
  AttentionConfig config;
  config.causal = true;
  config.offset = 1;
  config.heads = 2;
  config.key_padding = {true, true, true, false};
  const CheckReport r = check_config<float50, mpfr_real>("50 vs 100", config, 3, 3, 2, 2, 31, 100);
  for (const CheckResult& c : r.checks)
    if (c.name == "tape vs finite differences") CHECK(std::stod(c.max_rel_error) < 1e-40);
}

TEST_CASE("configuration errors name the shapes") {
  AttentionConfig config;
  config.heads = 2;
  CHECK_THROWS_WITH_AS(config.validate(3, 3, 3, 2),
                       "attention(heads 2, Q 3x3, K 3x3, V 3x2): the heads must divide d = 3 and r = 2", ShapeError);
  config.heads = 1;
  config.key_padding = {true};
  CHECK_THROWS_AS(config.validate(3, 3, 3, 2), ShapeError);
  Tape<double> tape;
  auto X = tape.input(Matrix<double>::Zero(3, 2), "X");
  auto W = tape.input(Matrix<double>::Zero(2, 2), "W");
  AttentionConfig cached;
  cached.offset = 3;
  CHECK_THROWS_WITH_AS(multi_head_attention(X, nullptr, W, W, W, nullptr, cached),
                       "multi_head_attention(X): X (3x2) with offset 3; the cached positions must leave at least one "
                       "query row (0 <= offset < rows)",
                       ShapeError);
}
