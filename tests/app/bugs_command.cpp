// `tapegrad bugs --format json`: every fault caught (faults 1-7 and 10 on the attention, the op faults 11-20 at
// each of their nodes in the host graphs: mutation score N/N), the node named for the VJP faults, the other
// checkers' verdicts beside ours, and demonstrations 8 and 9 shown.
#include <commands.hpp>

#include <tapegrad/graph/verification/op_faults.hpp>

#include <tapegrad/autodiff/error.hpp>

#include <bug_hosts.hpp>
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <source_dir.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

TEST_CASE("bugs: every fault caught, nodes named, demonstrations shown") {
  std::ostringstream out;
  tapegrad::app::BugsCommand cmd;
  cmd.format = "json";
  CHECK(tapegrad::app::run_bugs_command(cmd, out) == 0);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  const std::size_t mutants = doc.at("faults").size();
  CHECK(doc.at("mutation_score") == std::to_string(mutants) + "/" + std::to_string(mutants));
  CHECK(doc.at("no_fault_passes") == true); // the baseline: every point passes every check with no fault
  std::map<int, nlohmann::json> faults;     // the first entry of each id
  for (const auto& f : doc.at("faults"))
    faults.emplace(f.at("id").get<int>(), f);
  CHECK(faults.size() == 8 + tapegrad::OpFaults::size);
  // The op faults at every site where they show in the host graphs (8 faults on the attention besides).
  std::size_t sites = 0;
  for (const auto& [file, text] : bug_host_graphs) {
    const tapegrad::FileGraph<double> graph(tapegrad::parse_graph(text, file));
    for (const tapegrad::FaultSite& site : tapegrad::fault_sites(graph))
      sites += site.invisible.empty();
  }
  CHECK(mutants == 8 + sites);
  for (const auto& f : doc.at("faults")) {
    const int id = f.at("id").get<int>();
    const std::string at = f.at("injected_at").get<std::string>();
    CAPTURE(id);
    CAPTURE(at);
    CHECK(f.at("caught") == true);
    CHECK_FALSE(f.at("caught_by").empty());
    for (const char* key : {"gradcheck_catches", "gradcheck_fast_catches", "check_grads_catches"})
      CHECK(f.at(key).is_boolean());
    CHECK_FALSE(f.at("points").empty());
    // An op fault is named by the per-node check at the node it was injected at.
    if (tapegrad::is_op_fault(id)) {
      std::set<std::string> named;
      std::istringstream list(f.at("node").get<std::string>());
      for (std::string n; std::getline(list, n, ',');)
        named.insert(n.substr(n.find_first_not_of(' ')));
      CHECK(named.count(at) == 1);
    }
    // Every fault's error is large, but for the gelu backward of the tanh approximation (about 6e-4).
    CHECK(std::stod(f.at("max_rel_error").get<std::string>()) > (id == 17 ? 1e-4 : 1e-3));
  }
  // The faults gradcheck's criteria pass and tapegrad catches: a wrong forward with a consistent backward (3, 5),
  // a wrong VJP at a saturated point (10), and an error below gradcheck's rtol of 1e-3 (17).
  for (int id : {3, 5, 10, 17}) {
    CAPTURE(id);
    CHECK(faults[id].at("gradcheck_catches") == false);
  }
  CHECK(faults[17].at("check_grads_catches") == true); // JAX's 1e-5 sees 6e-4
  CHECK(faults[11].at("gradcheck_catches") == true);
  CHECK(faults[2].at("node") == "A");
  CHECK(faults[4].at("node") == "S0");
  CHECK(faults[6].at("node") == "S");
  const auto& by7 = faults[7].at("caught_by");
  CHECK(std::find(by7.begin(), by7.end(), "stale-gradient guard") != by7.end());
  const auto& by10 = faults[10].at("caught_by");
  CHECK(std::find(by10.begin(), by10.end(), "saturation guard") != by10.end());
  REQUIRE(doc.at("demonstrations").size() == 2);
  for (const auto& d : doc.at("demonstrations"))
    CHECK(d.at("shown") == true);
}

namespace {

std::string temp_graph(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / ("tapegrad-bugs-" + name)).string();
  std::ofstream(path) << text;
  return path;
}

nlohmann::json bugs_file(const std::string& file, int expected_rc) {
  std::ostringstream out;
  tapegrad::app::BugsCommand cmd;
  cmd.file = file;
  cmd.format = "json";
  CHECK(tapegrad::app::run_bugs_command(cmd, out) == expected_rc);
  return nlohmann::json::parse(out.str());
}

/// The one entry of fault `id` in a `bugs FILE --format json` document.
nlohmann::json fault_entry(const nlohmann::json& doc, int id) {
  std::vector<nlohmann::json> found;
  for (const auto& f : doc.at("faults"))
    if (f.at("id") == id) found.push_back(f);
  REQUIRE(found.size() == 1);
  return found.front();
}

} // namespace

TEST_CASE("bugs FILE: every fault that applies to the classifier, at each node it applies to, is caught") {
  const std::string file = std::string(tapegrad_source_dir) + "/examples/graphs/mlp_classifier.json";
  const nlohmann::json doc = bugs_file(file, 0);
  std::set<std::pair<int, std::string>> injected;
  for (const auto& f : doc.at("faults")) {
    injected.insert({f.at("id").get<int>(), f.at("injected_at").get<std::string>()});
    CHECK(f.at("graph") == file);
    CHECK(f.at("caught") == true);
  }
  // The overwrite fault at H (read by relu, gelu and sigmoid) and L (by cross_entropy and log_softmax); each op's
  // slip at its node, the bias fault at both biases, mul's at both products (its matmuls have no square operand).
  const std::set<std::pair<int, std::string>> expected{{1, "H"},  {1, "L"},   {11, "H"}, {11, "L"}, {12, "M"},
                                                       {13, "N"}, {14, "LS"}, {15, "S"}, {16, "R"}, {17, "E"},
                                                       {18, "D"}, {19, "CE"}, {29, "U"}, {29, "LY"}};
  CHECK(injected == expected);
  CHECK(doc.at("mutation_score") == std::to_string(expected.size()) + "/" + std::to_string(expected.size()));
  CHECK(doc.at("no_fault_passes") == true);
  // RE = R + E adds two 4x5 values: no bias there, so the bias fault is not injected, and says why.
  bool re_listed = false;
  for (const auto& n : doc.at("not_injected"))
    re_listed = re_listed || (n.at("id") == 11 && n.at("injected_at") == "RE" &&
                              n.at("why").get<std::string>().find("no operand is broadcast") != std::string::npos);
  CHECK(re_listed);
}

TEST_CASE("bugs FILE: relu's slip where no gradient reaches it: only the per-node check, with its own seeds, sees it") {
  // relu passing the gradient where x <= 0 adds, at x = -2, the gradient reaching it there: Z's 0. The graph's
  // gradients are right, so every check of them (ours and the other tools') passes; the per-node check drives
  // the VJP with a random upstream gradient and names R.
  const std::string file = temp_graph("relu_blind.json", R"({
    "inputs": {"X": [[1, -2]], "Z": [[3, 0]]},
    "nodes": [{"name": "R", "op": "relu", "args": ["X"]},
              {"name": "P", "op": "mul", "args": ["R", "Z"]},
              {"name": "J", "op": "sum", "args": ["P"]}],
    "output": "J"})");
  const nlohmann::json doc = bugs_file(file, 0);
  const nlohmann::json f = fault_entry(doc, 16); // mul's slip at P is another mutant, seen by every check
  CHECK(f.at("injected_at") == "R");
  CHECK(f.at("caught") == true);
  CHECK(f.at("caught_by") == nlohmann::json::array({"per-node check"}));
  CHECK(f.at("node") == "R");
  CHECK(f.at("gradcheck_catches") == false);
  CHECK(f.at("check_grads_catches") == false);
}

TEST_CASE("bugs FILE: a slip no check can see at this point is not caught, says why, and the score says so") {
  // X feeds E (first) and P = X * Z with Z = 0 (second): the sweep adds P's zero contribution into dX first, then
  // E's; an overwrite keeps E's, which is the whole gradient here.
  const std::string file = temp_graph("overwrite_blind.json", R"({
    "inputs": {"X": [[1, -2]], "Z": [[0, 0]]},
    "nodes": [{"name": "E", "op": "exp", "args": ["X"]},
              {"name": "P", "op": "mul", "args": ["X", "Z"]},
              {"name": "S", "op": "add", "args": ["E", "P"]},
              {"name": "J", "op": "sum", "args": ["S"]}],
    "output": "J"})");
  const nlohmann::json doc = bugs_file(file, 1);
  const nlohmann::json f = fault_entry(doc, 1);
  CHECK(f.at("injected_at") == "X");
  CHECK(f.at("caught") == false);
  CHECK(f.at("why").get<std::string>().find(
            "the slip writes what the right rule would at X (the contributions the overwrite drops are 0 here)") == 0);
  CHECK(fault_entry(doc, 29).at("caught") == true); // mul's slip at P (dX = g X, not g Z = 0) is seen
  CHECK(doc.at("mutation_score") == "1/2");
}

TEST_CASE("bugs FILE: a file that is not a graph is a user error") {
  std::ostringstream out;
  tapegrad::app::BugsCommand cmd;
  cmd.file = temp_graph("not_a_graph.json", "{\"inputs\": {}}");
  CHECK_THROWS_AS(tapegrad::app::run_bugs_command(cmd, out), tapegrad::Error);
  CHECK(out.str().empty());
}

namespace {

std::string dot_of(tapegrad::app::DotCommand cmd) {
  std::ostringstream out;
  REQUIRE(tapegrad::app::run_dot_command(cmd, out) == 0);
  return out.str();
}

/// The DOT lines that declare a node (not edges) and contain `text`.
std::vector<std::string> node_lines(const std::string& dot, const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(dot);
  for (std::string line; std::getline(in, line);)
    if (line.find("[label=") != std::string::npos && line.find(text) != std::string::npos) lines.push_back(line);
  return lines;
}

} // namespace

TEST_CASE("dot --fault --check: the injected node is marked, and the node the per-node check blames is red") {
  tapegrad::app::DotCommand cmd;
  cmd.file = std::string(tapegrad_source_dir) + "/examples/graphs/mlp_classifier.json";
  cmd.fault = 11;
  cmd.check = true;
  const std::string dot = dot_of(cmd);
  const std::vector<std::string> red = node_lines(dot, "lightcoral");
  REQUIRE(red.size() == 1); // H alone, where the bias fault is (the first bias of the file)
  CHECK(red[0].find("label=\"H\\lAdd (bias from row 0)") != std::string::npos);
  CHECK(red[0].find("FAULT 11") != std::string::npos);
  CHECK(red[0].find("penwidth=3") != std::string::npos);
  CHECK(node_lines(dot, "palegreen").size() == 15); // the other 15 nodes pass
  // --at picks the other bias; the overwrite fault is marked but no single VJP is wrong, so nothing is red.
  cmd.at = "L";
  CHECK(node_lines(dot_of(cmd), "lightcoral").at(0).find("label=\"L\\l") != std::string::npos);
  cmd.fault = 1;
  cmd.at = "H";
  const std::string overwrite = dot_of(cmd);
  CHECK(node_lines(overwrite, "lightcoral").empty());
  CHECK(node_lines(overwrite, "FAULT 1: overwrite").size() == 1);
}

TEST_CASE("dot --fault: faults that cannot be injected there are user errors naming why") {
  std::ostringstream out;
  tapegrad::app::DotCommand cmd;
  cmd.file = std::string(tapegrad_source_dir) + "/examples/graphs/mlp_classifier.json";
  cmd.fault = 2;
  CHECK_THROWS_AS(tapegrad::app::run_dot_command(cmd, out), tapegrad::UsageError);
  cmd.fault = 20;
  CHECK_THROWS_WITH_AS(tapegrad::app::run_dot_command(cmd, out), doctest::Contains("has no softmax node"),
                       tapegrad::UsageError);
  cmd.fault = 11;
  cmd.at = "RE";
  CHECK_THROWS_WITH_AS(tapegrad::app::run_dot_command(cmd, out), doctest::Contains("it changes nothing in"),
                       tapegrad::UsageError);
  cmd.fault = 0;
  CHECK_THROWS_AS(tapegrad::app::run_dot_command(cmd, out), tapegrad::UsageError); // --at without --fault
  cmd.fault = 11;
  cmd.at.clear();
  cmd.precision = "float";
  CHECK_THROWS_AS(tapegrad::app::run_dot_command(cmd, out), tapegrad::UsageError);
  CHECK(out.str().empty());
}

TEST_CASE("bugs FILE: layer_norm's slip shows on rows of one entry; a consumer the output does not use is no fan-out") {
  // LN of a 2 x 1 value: its right gradient is 0, the slip's g / sqrt(eps). D = exp(X) is read by nothing the
  // output depends on, so X has one live consumer and no overwrite fault.
  const std::string file = temp_graph("ln_one_column.json", R"({
    "inputs": {"X": [[1], [2]]},
    "nodes": [{"name": "D", "op": "exp", "args": ["X"]},
              {"name": "N", "op": "layer_norm", "args": ["X"]},
              {"name": "E", "op": "exp", "args": ["N"]},
              {"name": "J", "op": "sum", "args": ["E"]}],
    "output": "J"})");
  const nlohmann::json doc = bugs_file(file, 0);
  REQUIRE(doc.at("faults").size() == 1);
  CHECK(doc.at("faults").at(0).at("id") == 13);
  CHECK(doc.at("faults").at(0).at("injected_at") == "N");
  CHECK(doc.at("faults").at(0).at("caught") == true);
}

TEST_CASE("bugs and dot --fault on a file with real constants: faults sit at the right tape node, none where no "
          "gradient flows") {
  // Tape order: X, then the real constants c, d, b, then the nodes. T = c d is made from constants only: it has no
  // gradient, so neither the overwrite fault (T is read twice) nor mul's slip can act there.
  const std::string file = temp_graph("real_constants.json", R"({
    "inputs": {"X": [[1, -2, 0.5], [3, 0.25, -1]]},
    "constants": {"c": {"dtype": "real", "value": "0.5"}, "d": {"dtype": "real", "value": "3"},
                  "b": {"dtype": "real", "value": [[0.5, -1, 2]]}},
    "nodes": [{"name": "T", "op": "mul", "args": ["c", "d"]},
              {"name": "Y", "op": "mul", "args": ["X", "T"]},
              {"name": "B", "op": "add", "args": ["Y", "b"]},
              {"name": "E", "op": "exp", "args": ["B"]},
              {"name": "S", "op": "add", "args": ["E", "T"]},
              {"name": "J", "op": "sum", "args": ["S"]}],
    "output": "J"})");
  const nlohmann::json doc = bugs_file(file, 0);
  std::set<std::string> overwritten;
  for (const auto& f : doc.at("faults"))
    if (f.at("id") == 1) overwritten.insert(f.at("injected_at").get<std::string>());
  CHECK(overwritten.empty());
  bool t_named = false;
  for (const auto& n : doc.at("not_injected"))
    t_named = t_named || (n.at("injected_at") == "T" &&
                          n.at("why") == "it is made from real constants only, so no gradient flows through it");
  CHECK(t_named);
  const nlohmann::json mul = fault_entry(doc, 29); // at Y: dX = g X instead of g T
  CHECK(mul.at("injected_at") == "Y");
  CHECK(mul.at("caught") == true);
  CHECK(mul.at("node") == "Y");
  // The bias slip at B writes a wrong db; b is a constant, so no gradient the tape keeps changes, but the
  // per-node check tests the VJP of every operand and names B.
  const nlohmann::json bias = fault_entry(doc, 11);
  CHECK(bias.at("injected_at") == "B");
  CHECK(bias.at("caught_by") == nlohmann::json::array({"per-node check"}));
  CHECK(bias.at("node") == "B");
  CHECK(doc.at("mutation_score") == "2/2");

  tapegrad::app::DotCommand cmd;
  cmd.file = file;
  cmd.fault = 29;
  cmd.at = "Y";
  cmd.check = true;
  cmd.grads = true;
  const std::string dot = dot_of(cmd);
  const std::vector<std::string> marked = node_lines(dot, "FAULT 29");
  REQUIRE(marked.size() == 1);
  CHECK(marked[0].find("label=\"Y\\l") != std::string::npos); // Y itself, not the node inputs + 1 places it at
  const std::vector<std::string> red = node_lines(dot, "lightcoral");
  REQUIRE(red.size() == 1);
  CHECK(red[0].find("label=\"Y\\l") != std::string::npos);
  CHECK(node_lines(dot, "no gradient (made from constants only)").size() == 1); // T
  CHECK(node_lines(dot, "no gradient (a constant)").size() == 3);               // c, d, b
  cmd.fault = 1;
  cmd.at.clear();
  CHECK_THROWS_WITH_AS(tapegrad::app::run_dot_command(cmd, std::cout),
                       doctest::Contains("has no input or node with a gradient read by more than one node"),
                       tapegrad::UsageError);
}
