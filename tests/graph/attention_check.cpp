// The attention graph checked three ways plus dual numbers and per node, at the precisions the project
// promises: double vs 50 digits <= 1e-12, 50 vs 100 digits <= 1e-40, 100 vs 200 digits (MPFR) <= 1e-85,
// relative to the largest gradient entry, on the chapter's examples and seeded asymmetric cases.
#include "../support.hpp"

#include <tapegrad/graph/verification/attention_check.hpp>

using namespace tapegrad;

namespace {

/// Runs the attention checks, prints every result, and asserts each passed and stayed within `target`.
template <Real T, Real R> void expect_attention_passes(const std::string& name, const AttentionInputs<T>& in,
                                                       unsigned reference_digits, const R& target) {
  CheckOptions opt;
  opt.seed = 20261129;
  opt.reference_digits = reference_digits;
  MpfrDigits digits(reference_digits);
  const R threshold = fd_threshold<T, R>();
  MESSAGE(name << ": engine " << precision_name<T>() << ", reference " << reference_digits
               << " digits (MPFR), threshold " << to_string(threshold, 3) << " fixed before the run, target "
               << to_string(target, 3) << ", seed " << opt.seed);
  CHECK(threshold <= target);
  const CheckReport report = check_attention<T, R>(name, in, opt);
  int fd_checks = 0, hand_checks = 0, dual_checks = 0, node_checks = 0;
  for (const CheckResult& c : report.checks) {
    INFO(c.graph << " | " << c.name << " | " << c.input << ": max rel " << c.max_rel_error << " (threshold "
                 << c.threshold << ") at (" << c.worst_row << ", " << c.worst_col << ") numeric " << c.numeric
                 << " analytic " << c.analytic);
    CHECK(c.passed);
    fd_checks += c.name == "tape vs finite differences";
    hand_checks += c.name == "hand-written vs finite differences";
    dual_checks += c.name.starts_with("dual numbers");
    node_checks += c.name == "per-node VJP";
  }
  CHECK(fd_checks == 7); // Q, K, V locally; X, Wq, Wk, Wv through the projections
  CHECK(hand_checks == 7);
  CHECK(dual_checks == 6);
  CHECK(node_checks > 10);
  CHECK(report.warnings.empty());
  CHECK(report.passed());
}

} // namespace

TEST_CASE("double against 50 digits: chapter examples and seeded 8x8x8x8 cases, <= 1e-12") {
  const mpfr_real target = mpfr_real(1) / pow(mpfr_real(10), 12);
  expect_attention_passes<double, mpfr_real>("example 1", chapter::example1<double>(), 50, target);
  expect_attention_passes<double, mpfr_real>("example 2", chapter::example2<double>(), 50, target);
  for (std::uint64_t seed : {1u, 2u})
    expect_attention_passes<double, mpfr_real>("random " + std::to_string(seed) + " (8, 8, 8, 8)",
                                               random_attention<double>(seed, 8, 8, 8, 8), 50, target);
}

TEST_CASE("50 digits against 100: examples and a seeded asymmetric case, <= 1e-40") {
  const mpfr_real target = mpfr_real(1) / pow(mpfr_real(10), 40);
  expect_attention_passes<float50, mpfr_real>("example 1", chapter::example1<float50>(), 100, target);
  expect_attention_passes<float50, mpfr_real>("random 3 (5, 4, 3, 2)", random_attention<float50>(3, 5, 4, 3, 2), 100,
                                              target);
  expect_attention_passes<float50, mpfr_real>("random 5 (8, 8, 8, 8)", random_attention<float50>(5, 8, 8, 8, 8), 100,
                                              target);
}

TEST_CASE("100 digits against 200-digit MPFR, <= 1e-85") {
  const mpfr_real target = mpfr_real(1) / pow(mpfr_real(10), 85);
  expect_attention_passes<float100, mpfr_real>("example 1", chapter::example1<float100>(), 200, target);
  expect_attention_passes<float100, mpfr_real>("random 4 (4, 3, 3, 2)", random_attention<float100>(4, 4, 3, 3, 2), 200,
                                               target);
  expect_attention_passes<float100, mpfr_real>("random 6 (8, 8, 8, 8)", random_attention<float100>(6, 8, 8, 8, 8), 200,
                                               target);
}
