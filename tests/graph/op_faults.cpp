// The op faults (graph/verification/op_faults.hpp): each has a node to live at in the graphs `tapegrad bugs`
// injects them into, changes something only where its slip can show, is caught there with the injected node
// named by the per-node check, and is off unless injected. And the other checkers' criteria
// (graph/verification/other_checkers.hpp) draw their line where their tools do.
#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/graph/verification/op_faults.hpp>
#include <tapegrad/graph/verification/other_checkers.hpp>

#include <bug_hosts.hpp>
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

using namespace tapegrad;

namespace {

/// The graphs `tapegrad bugs` injects the op faults into (bug_hosts.hpp, generated from examples/graphs).
std::vector<FileGraph<double>> hosts() {
  std::vector<FileGraph<double>> out;
  for (const auto& [file, text] : bug_host_graphs)
    out.emplace_back(parse_graph(text, file));
  return out;
}

CheckOptions options() {
  CheckOptions opt;
  opt.reference_digits = 50;
  return opt;
}

} // namespace

TEST_CASE("op faults: every fault has a site in the hosts, is caught there, and the per-node check names its node") {
  const std::vector<FileGraph<double>> graphs = hosts();
  std::map<int, int> sites_per_fault;
  for (const FileGraph<double>& graph : graphs)
    for (const FaultSite& site : fault_sites(graph)) {
      if (!site.invisible.empty()) continue; // a slip that changes nothing at this point is no mutant
      const int id = site.fault->id;
      const std::string node = site.name, file = graph.spec().file;
      CAPTURE(id);
      CAPTURE(file);
      CAPTURE(node);
      ++sites_per_fault[id];
      const FaultyFileGraph<double> faulty(graph, site.node, id);
      const CheckReport r = check_gradient<double, mpfr_real>(faulty, graph.inputs(), graph.names(), options());
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
  for (const FileGraph<double>& graph : hosts()) {
    const std::string file = graph.spec().file;
    CAPTURE(file);
    CHECK(check_gradient<double, mpfr_real>(graph, graph.inputs(), graph.names(), options()).passed());
    // Recorded without a fault, no node is a fault's op.
    Tape<double> tape;
    graph.record(tape, graph.record_inputs(tape));
    for (std::size_t i = 0; i < tape.size(); ++i)
      OpFaults::for_each([&]<class F>() { CHECK(tape.node(i).op != &F::info); });
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
  std::map<std::pair<int, std::string>, std::string> why; // (fault, node) -> why its slip changes nothing here
  for (const FaultSite& s : fault_sites(graph))
    why[{s.fault->id, s.name}] = s.invisible;
  CHECK(why == std::map<std::pair<int, std::string>, std::string>{
                   {{ReluGradientEverywhereFault::fault.id, "R"}, "no entry of its operand is below 0"},
                   {{BiasGradientOneRowFault::fault.id, "H"}, "no operand is broadcast over rows (2x2 and 2x2)"},
                   {{BiasGradientFirstBatchFault::fault.id, "H"},
                    "no operand of rank <= 2 is broadcast over the batch dims of a result of rank >= 3 (2x2 and 2x2)"},
                   {{NaiveMaskedSoftmaxFault::fault.id, "A"},
                    "no row of its operand is entirely -inf (there it is the right softmax)"},
                   {{SoftmaxWrongDimFault::fault.id, "A"}, ""}, // a matrix has another dim to go wrong along
                   {{MeanWrongCountFault::fault.id, "M"},
                    "each result entry averages 2 entries, as many as the operand has "
                    "columns, so dividing by the columns is right here"},
                   {{MulOwnOperandFault::fault.id, "MA"}, ""}}); // M and A differ
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
                                                       {SoftmaxWrongDimFault::fault.id, "A"},
                                                       {MeanWrongCountFault::fault.id, "M"},
                                                       {MulOwnOperandFault::fault.id, "MA"}});
  CHECK_THROWS_AS(FaultyFileGraph<double>(graph2, 0, BiasGradientOneRowFault::fault.id), UsageError); // R is relu
  CHECK_THROWS_AS(FaultyFileGraph<double>(graph2, 0, 99), UsageError);
}

TEST_CASE("op faults of tensor code: where a slip cannot show, it says why; where it can, it is a site") {
  // No repeated token, a bias of rank 1 over a matrix (no batch dims), an expand that repeats nothing, a swap of
  // two dims (its own inverse), a softmax of rank 1 and one of a 1x1, a transpose of a 1x3 (a reshape), a product
  // of non-square matrices, one with a vector and one with a symmetric square operand, tanh at 0 and +inf, mul of a
  // value by itself and of two that are equal once repeated.
  const GraphSpec quiet = parse_graph(R"({
    "inputs": {"E": [[0.5, -1], [1, 0.25], [-0.5, 2]], "X": [[1, -2, 0.5], [0.25, 3, -1]], "b": [0.5, -0.25, 2],
               "X3": [[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]],
                      [[-1, -2, -3, -4], [-5, -6, -7, -8], [-9, -10, -11, -12]]],
               "W": [[1, 0, 2, -1], [0.5, 1, -1, 0], [2, -0.5, 0, 1]], "Zr": [[0, "inf"], [0, 0]],
               "C1": [[2], [2]], "R1": [[2, 2]], "One": [[3]], "Sy": [[1, 0.5], [0.5, -2]]},
    "constants": {"tokens": {"dtype": "int", "value": [2, 0]}},
    "nodes": [{"name": "Em", "op": "embedding", "args": ["E", "tokens"]},
              {"name": "H", "op": "add", "args": ["X", "b"]},
              {"name": "U", "op": "expand", "args": ["b"], "shape": [1, 3]},
              {"name": "P", "op": "permute", "args": ["X3"], "dims": [1, 0, 2]},
              {"name": "Sv", "op": "softmax", "args": ["b"]},
              {"name": "Tr", "op": "transpose", "args": ["U"]},
              {"name": "Mm", "op": "matmul", "args": ["X", "W"]},
              {"name": "Mv", "op": "matmul", "args": ["X", "b"]},
              {"name": "Th", "op": "tanh", "args": ["Zr"]},
              {"name": "Sq", "op": "mul", "args": ["X", "X"]},
              {"name": "Ones", "op": "mul", "args": ["C1", "R1"]},
              {"name": "S1", "op": "softmax", "args": ["One"]},
              {"name": "Ms", "op": "matmul", "args": ["Sy", "X"]},
              {"name": "J", "op": "sum", "args": ["Sq"]}],
    "output": "J"})",
                                      "quiet.json");
  const std::set<int> tensor_faults{
      EmbeddingWriteFault::fault.id,     BiasGradientFirstBatchFault::fault.id, ExpandWriteFault::fault.id,
      PermuteNotInvertedFault::fault.id, SoftmaxWrongDimFault::fault.id,        TransposeAsReshapeFault::fault.id,
      MatMulNoTransposeFault::fault.id,  TanhDerivativeFault::fault.id,         MulOwnOperandFault::fault.id};
  const auto sites_of = [&](const GraphSpec& spec) {
    std::map<std::pair<int, std::string>, std::string> out;
    const FileGraph<double> graph(spec);
    for (const FaultSite& s : fault_sites(graph))
      if (tensor_faults.count(s.fault->id)) out[{s.fault->id, s.name}] = s.invisible;
    return out;
  };
  CHECK(sites_of(quiet) ==
        std::map<std::pair<int, std::string>, std::string>{
            {{21, "Em"}, "no index occurs twice in its indices, so writing each row once is adding it once"},
            {{22, "H"},
             "no operand of rank <= 2 is broadcast over the batch dims of a result of rank >= 3 (2x3 and "
             "[3])"},
            {{23, "U"}, "nothing is repeated ([3] to 1x3), so writing is adding once"},
            {{24, "P"},
             "dims [1, 0, 2] on 2x3x4: applying them reads the gradient as their inverse does (a swap is "
             "its own inverse; so is any order of dims of size 1)"},
            {{25, "Sv"}, "its operand has one dim, the one softmax normalises along"},
            {{26, "Tr"}, "transposing 1x3 moves no entry (a swapped dim has size 1), so it is a reshape"},
            {{27, "Mm"},
             "neither operand is square (2x3 and 3x4), so grad b and a grad would not even have the "
             "operands' shapes"},
            {{27, "Mv"}, "the slip is written for operands of rank >= 2 with the same batch dims (2x3 and [3])"},
            {{28, "Th"}, "every entry of its operand is 0 or +inf (tanh 0 or 1), where 1 - t and 1 - t^2 agree"},
            {{29, "Sq"}, "its two operands are equal (2x3 and 2x3, repeated to 2x3), so each one's partner is itself"},
            {{29, "Ones"},
             "its two operands are equal (2x1 and 1x2, repeated to 2x2), so each one's partner is "
             "itself"},
            {{25, "S1"}, "dims 0 and 1 of its operand (1x1) have size 1, where both VJPs are 0"},
            {{27, "Ms"}, "its square operand is symmetric (2x2 and 2x3), where x and x^T agree"}});
  CHECK(tensor_faults.size() == 9);
  // The same ops where the slips show: a repeated token, a bias over a batch, an expand that repeats, a cycle of
  // three dims, a softmax of rank 2, a transpose of a 2x3, a square operand, tanh away from 0, mul of two values.
  const GraphSpec shows = parse_graph(R"({
    "inputs": {"E": [[0.5, -1], [1, 0.25], [-0.5, 2]], "X": [[1, -2, 0.5], [0.25, 3, -1]], "b": [0.5, -0.25, 2],
               "X3": [[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]],
                      [[-1, -2, -3, -4], [-5, -6, -7, -8], [-9, -10, -11, -12]]],
               "Q": [[1, 0.5, -1], [2, 0, 1], [-0.5, 1, 0.25]]},
    "constants": {"tokens": {"dtype": "int", "value": [[2, 0], [1, 2]]}},
    "nodes": [{"name": "Em", "op": "embedding", "args": ["E", "tokens"]},
              {"name": "B3", "op": "reshape", "args": ["X3"], "shape": [2, 4, 3]},
              {"name": "H", "op": "add", "args": ["B3", "b"]},
              {"name": "U", "op": "expand", "args": ["b"], "shape": [2, 3]},
              {"name": "P", "op": "permute", "args": ["X3"], "dims": [2, 0, 1]},
              {"name": "Sm", "op": "softmax", "args": ["X"], "dim": 0},
              {"name": "Tr", "op": "transpose", "args": ["X"]},
              {"name": "Mm", "op": "matmul", "args": ["X", "Q"]},
              {"name": "Th", "op": "tanh", "args": ["X"]},
              {"name": "Sq", "op": "mul", "args": ["X", "U"]},
              {"name": "J", "op": "sum", "args": ["Sq"]}],
    "output": "J"})",
                                      "shows.json");
  std::set<std::pair<int, std::string>> found;
  for (const auto& site : sites_of(shows)) {
    const std::string& why = site.second; // not a structured binding: clang 14 cannot capture one (CAPTURE)
    CAPTURE(why);
    CHECK(why.empty());
    found.insert(site.first);
  }
  CHECK(found ==
        std::set<std::pair<int, std::string>>{
            {21, "Em"}, {22, "H"}, {23, "U"}, {24, "P"}, {25, "Sm"}, {26, "Tr"}, {27, "Mm"}, {28, "Th"}, {29, "Sq"}});
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
