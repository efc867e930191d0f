// The op faults (graph/verification/op_faults.hpp): each has a node to live at in the graphs `tapegrad bugs`
// injects them into, changes something only where its slip can show, is caught there with the injected node
// named by the per-node check, and is off unless injected. And the other checkers' criteria
// (graph/verification/other_checkers.hpp) draw their line where their tools do.
#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/graph/verification/op_faults.hpp>
#include <tapegrad/graph/verification/other_checkers.hpp>

#include <doctest/doctest.h>
#include <source_dir.hpp>

#include <map>
#include <set>
#include <string>

using namespace tapegrad;

namespace {

FileGraph<double> host(const std::string& name) {
  return FileGraph<double>(read_graph_file(std::string(tapegrad_source_dir) + "/examples/graphs/" + name));
}

CheckOptions options() {
  CheckOptions opt;
  opt.reference_digits = 50;
  return opt;
}

} // namespace

TEST_CASE("op faults: every fault has a site in the hosts, is caught there, and the per-node check names its node") {
  const FileGraph<double> classifier = host("mlp_classifier.json"), masked = host("masked_row_attention.json");
  std::map<int, int> sites_per_fault;
  for (const FileGraph<double>* graph : {&classifier, &masked})
    for (const FaultSite& site : fault_sites(*graph)) {
      if (!site.invisible.empty()) continue; // a slip that changes nothing at this point is no mutant
      const int id = site.fault->id;
      const std::string node = site.name;
      CAPTURE(id);
      CAPTURE(node);
      ++sites_per_fault[id];
      const FaultyFileGraph<double> faulty(*graph, site.node, id);
      const CheckReport r = check_gradient<double, mpfr_real>(faulty, graph->inputs(), graph->names(), options());
      CHECK_FALSE(r.passed());
      std::set<std::string> blamed;
      bool tape_fails = false;
      for (const CheckResult& c : r.checks) {
        if (c.kind == CheckKind::node_vjp && !c.passed) blamed.insert(c.node_name);
        tape_fails = tape_fails || (c.kind == CheckKind::tape_vs_finite_differences && !c.passed);
      }
      CHECK(tape_fails);
      CHECK(blamed.count(node) == 1);
    }
  // Each fault of the list at least once; the broadcast bias at both biases of the classifier.
  CHECK(sites_per_fault.size() == OpFaults::size);
  OpFaults::for_each([&]<class F>() { CHECK(sites_per_fault[F::fault.id] >= 1); });
  CHECK(sites_per_fault[BiasGradientOneRowFault::fault.id] == 2);
}

TEST_CASE("op faults: off unless injected; the host graphs pass every check as they are") {
  for (const char* name : {"mlp_classifier.json", "masked_row_attention.json"}) {
    CAPTURE(name);
    const FileGraph<double> graph = host(name);
    CHECK(check_gradient<double, mpfr_real>(graph, graph.inputs(), graph.names(), options()).passed());
    // Recorded without a fault, no node is a fault's op.
    Tape<double> tape;
    graph.record(tape, graph.record_inputs(tape));
    for (std::size_t i = 0; i < tape.size(); ++i)
      CHECK(tape.node(i).op->file != std::string_view("../graph/verification/op_faults.hpp"));
  }
}

TEST_CASE("op faults: a slip that cannot show at this point says why") {
  // relu of entries all > 0, a bias of as many rows as the batch, a softmax with no masked row, mean over columns.
  const GraphSpec spec = parse_graph(R"({
    "inputs": {"X": [[1, 2], [3, 4]], "B": [[1, 1], [2, 2]], "S": [[0, "-inf"], [1, 2]]},
    "nodes": [{"name": "R", "op": "relu", "args": ["X"]},
              {"name": "H", "op": "add", "args": ["R", "B"]},
              {"name": "A", "op": "softmax", "args": ["S"]},
              {"name": "M", "op": "mean", "args": ["H"], "axis": 1},
              {"name": "MA", "op": "mul", "args": ["M", "A"]},
              {"name": "J", "op": "sum", "args": ["MA"]}],
    "output": "J"})",
                                     "no_sites.json");
  const FileGraph<double> graph(spec);
  std::map<std::string, std::string> why; // node -> why its op's slip changes nothing here
  for (const FaultSite& s : fault_sites(graph))
    why[s.name] = s.invisible;
  CHECK(why == std::map<std::string, std::string>{
                   {"R", "no entry of its operand is below 0"},
                   {"H", "no operand is broadcast over rows (2x2 and 2x2)"},
                   {"A", "no row of its operand is entirely -inf (there it is the right softmax)"},
                   {"M", "each result entry averages 2 entries, as many as the operand has columns, so dividing by the "
                         "columns is right here"}});
  // The same ops where the slips do show: a negative entry, a 1 x n bias, a row of -inf, the mean of all.
  const GraphSpec shows = parse_graph(R"({
    "inputs": {"X": [[1, -2], [3, 4]], "B": [[1, 1]], "S": [["-inf", "-inf"], [1, 2]]},
    "nodes": [{"name": "R", "op": "relu", "args": ["X"]},
              {"name": "H", "op": "add", "args": ["R", "B"]},
              {"name": "A", "op": "softmax", "args": ["S"]},
              {"name": "M", "op": "mean", "args": ["H"]},
              {"name": "MA", "op": "mul", "args": ["M", "A"]},
              {"name": "J", "op": "sum", "args": ["MA"]}],
    "output": "J"})",
                                      "sites.json");
  const FileGraph<double> graph2(shows);
  std::set<std::pair<int, std::string>> found;
  for (const FaultSite& s : fault_sites(graph2))
    if (s.invisible.empty()) found.insert({s.fault->id, s.name});
  CHECK(found == std::set<std::pair<int, std::string>>{{ReluGradientEverywhereFault::fault.id, "R"},
                                                       {BiasGradientOneRowFault::fault.id, "H"},
                                                       {NaiveMaskedSoftmaxFault::fault.id, "A"},
                                                       {MeanWrongCountFault::fault.id, "M"}});
  CHECK_THROWS_AS(FaultyFileGraph<double>(graph2, 0, BiasGradientOneRowFault::fault.id), UsageError); // R is relu
  CHECK_THROWS_AS(FaultyFileGraph<double>(graph2, 0, 99), UsageError);
}

TEST_CASE("other checkers: gradcheck's line is atol 1e-5 + rtol 1e-3, check_grads' 1e-5, fast mode's a projection") {
  // J = sum(exp(X)) at entries near 1: the gradient is exp(X), about 2.7, so gradcheck allows about 2.7e-3 + 1e-5.
  Matrix<double> x(2, 2);
  x << 1, 0.5, -0.25, 1.25;
  const auto f = [](auto&, const auto& in) { return sum(exp(in[0])); };
  const Matrix<double> right = x.array().exp().matrix();
  const std::uint64_t seed = 1;
  MESSAGE("projections seeded " << seed);
  const OtherCheckerVerdicts exact = other_checkers(f, {x}, {"X"}, {0}, {right}, seed);
  CHECK_FALSE(exact.gradcheck_catches);
  CHECK_FALSE(exact.gradcheck_fast_catches);
  CHECK_FALSE(exact.check_grads_catches);
  // One entry off by 5e-4 relative: inside gradcheck's rtol, outside check_grads' 1e-5.
  Matrix<double> near = right;
  near(0, 0) *= 1 + 5e-4;
  const OtherCheckerVerdicts small = other_checkers(f, {x}, {"X"}, {0}, {near}, seed);
  CHECK_FALSE(small.gradcheck_catches);
  CHECK(small.check_grads_catches);
  // Off by 2e-3 relative: outside gradcheck's line too, and named.
  Matrix<double> off = right;
  off(1, 0) *= 1 + 2e-3;
  const OtherCheckerVerdicts big = other_checkers(f, {x}, {"X"}, {0}, {off}, seed);
  CHECK(big.gradcheck_catches);
  CHECK(big.gradcheck_worst.rfind("X(1, 0)", 0) == 0);
  // check_grads compares as numpy's assert_allclose: where the function itself is NaN, NaN equals NaN and it
  // passes whatever the gradient; gradcheck's allclose does not.
  const auto nan_f = [](auto&, const auto& in) { return sum(hadamard(exp(in[0]), exp(neg(in[0])))); }; // inf 0
  Matrix<double> huge(1, 2);
  huge << 1000, 2;
  Matrix<double> nan_grad(1, 2);
  nan_grad << std::numeric_limits<double>::quiet_NaN(), 0.5;
  const OtherCheckerVerdicts at_nan = other_checkers(nan_f, {huge}, {"X"}, {0}, {nan_grad}, seed);
  CHECK_FALSE(at_nan.check_grads_catches);
  CHECK(at_nan.gradcheck_catches);
  // A NaN gradient of a finite function fails every criterion.
  Matrix<double> nan = right;
  nan(0, 1) = std::numeric_limits<double>::quiet_NaN();
  const OtherCheckerVerdicts n = other_checkers(f, {x}, {"X"}, {0}, {nan}, seed);
  CHECK(n.gradcheck_catches);
  CHECK(n.gradcheck_fast_catches);
  CHECK(n.check_grads_catches);
}
