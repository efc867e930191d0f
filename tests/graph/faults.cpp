// The fault catalogue: with no fault the faulty-attention graph is the real one and passes every check;
// each VJP fault is caught by finite differences, dual numbers and the per-node check, which names the node.
#include "../support.hpp"

#include <set>

#include <tapegrad/graph/verification/attention_check.hpp>
#include <tapegrad/graph/verification/faults.hpp>

using namespace tapegrad;

namespace {

CheckReport check(Fault fault, const AttentionInputs<double>& in, TapeOptions options = {}) {
  CheckOptions opt;
  opt.reference_digits = 50;
  opt.tape_options = options;
  return check_gradient<double, mpfr_real>(FaultyAttention{fault}, {in.X, in.Wq, in.Wk, in.Wv, in.G},
                                           {"X", "Wq", "Wk", "Wv", "G"}, opt);
}

std::set<std::string> failing(const CheckReport& r, const std::string& name) {
  std::set<std::string> inputs;
  for (const CheckResult& c : r.checks)
    if (!c.passed && c.name.starts_with(name)) inputs.insert(c.input);
  return inputs;
}

} // namespace

TEST_CASE("with no fault, the same checks pass on both inputs") {
  CHECK(check(Fault::none, chapter::example1<double>()).passed());
  CHECK(check(Fault::none, random_attention<double>(7, 3, 4, 3, 2)).passed());
}

TEST_CASE("each VJP fault is caught by finite differences and dual numbers, and the per-node check names its node") {
  const AttentionInputs<double> in = random_attention<double>(7, 3, 4, 3, 2);
  const std::vector<std::pair<Fault, std::string>> faults{{Fault::softmax_numerator_only, "A <- S"},
                                                          {Fault::backward_transpose_lost, "S0 <- K"},
                                                          {Fault::scale_dropped_backward, "S <- S0"},
                                                          {Fault::saturated_wrong_vjp, "A <- S"}};
  for (const auto& entry : faults) {
    const Fault fault = entry.first; // (a plain variable: clang 14 cannot capture a structured binding)
    const std::string& node = entry.second;
    CAPTURE(static_cast<int>(fault));
    const CheckReport r = check(fault, in);
    CHECK_FALSE(r.passed());
    CHECK_FALSE(failing(r, "tape vs finite differences").empty());
    CHECK_FALSE(failing(r, "dual numbers").empty());
    CHECK(failing(r, "per-node VJP") == std::set<std::string>{node});
    CHECK(failing(r, "reference").empty());
  }
}

TEST_CASE("overwrite on fan-out: every op's VJP alone is right, but the sum over X's branches is lost") {
  const CheckReport r = check(Fault::none, chapter::example1<double>(), TapeOptions{.inject_overwrite_fault = true});
  CHECK(failing(r, "tape vs finite differences").count("X") == 1);
  CHECK_FALSE(failing(r, "dual numbers").empty());
  CHECK(failing(r, "per-node VJP").empty());
}

TEST_CASE("forward faults give a different function: the tape agrees with its own differences, not with the chapter") {
  const AttentionInputs<double> in = random_attention<double>(7, 3, 4, 3, 2);
  for (Fault fault : {Fault::forward_transpose_lost, Fault::column_softmax}) {
    CAPTURE(static_cast<int>(fault));
    const CheckReport r = check(fault, in);
    CHECK(r.passed()); // consistent with its own forward...
    const AttentionByHand<double> hand = attention_by_hand(in.X, in.Wq, in.Wk, in.Wv, in.G);
    const EngineGradient<double> g = engine_gradient<double>(FaultyAttention{fault}, {in.X, in.Wq, in.Wk, in.Wv, in.G},
                                                             {"X", "Wq", "Wk", "Wv", "G"});
    CHECK(max_rel_error<double>(g.grads[0], hand.dX) > 1e-3); // ...but not the chapter's attention
  }
}
