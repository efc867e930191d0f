// `tapegrad grad FILE --jacobian NODE` and `tapegrad check FILE --jacobian NODE`: the Jacobian of a node of any
// shape, one row per node entry and one column per input entry (both row-major), and its check, every (node
// entry, input entry) pair, the worst pair named. The file's "output" stays 1x1, as the format says.
#include <commands.hpp>

#include <tapegrad/autodiff/error.hpp>
#include <tapegrad/graph/io/graph_build.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <source_dir.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

using namespace tapegrad::app;

namespace {

const std::string example1 = std::string(tapegrad_source_dir) + "/examples/graphs/example1.json";

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / ("tapegrad-jacobian-" + name)).string();
  std::ofstream(path) << text;
  return path;
}

nlohmann::ordered_json grad_jacobian(const std::string& file, const std::string& node) {
  GradCommand g;
  g.file = file;
  g.format = "json";
  g.jacobian = node;
  std::ostringstream out;
  REQUIRE(run_grad_command(g, out) == 0);
  return nlohmann::ordered_json::parse(out.str()); // keys in the order written
}

/// `tapegrad check FILE --jacobian NODE --precision double --format json`, which must pass, parsed.
nlohmann::json check_jacobian_json(const std::string& file, const std::string& node) {
  CheckCommand cmd;
  cmd.file = file;
  cmd.jacobian = node;
  cmd.precision = "double";
  cmd.format = "json";
  cmd.quiet = true;
  std::ostringstream out;
  CHECK(run_check_command(cmd, out) == 0);
  return nlohmann::json::parse(out.str());
}

} // namespace

TEST_CASE("grad --jacobian Q: dQ/dX and dQ/dWQ of Q = X WQ entry for entry, and zero for inputs Q does not use") {
  const nlohmann::ordered_json doc = grad_jacobian(example1, "Q");
  CHECK(doc.at("precision") == "double");
  CHECK(doc.at("node") == "Q");
  CHECK(doc.at("rows") == 2);
  CHECK(doc.at("cols") == 2);
  // Inputs in file order, each 4 x 4 (the 4 entries of Q by the 4 entries of a 2 x 2 input).
  std::vector<std::string> names;
  for (const auto& [name, J] : doc.at("jacobians").items()) {
    names.push_back(name);
    REQUIRE(J.size() == 4);
    for (const auto& row : J)
      REQUIRE(row.size() == 4);
  }
  CHECK(names == std::vector<std::string>{"X", "WQ", "WK", "WV", "G"});
  // The file's values as the engine reads them: decimals rounded once to double.
  const tapegrad::FileGraph<double> graph(tapegrad::read_graph_file(example1));
  const tapegrad::Matrix<double>&X = graph.inputs()[0], &WQ = graph.inputs()[1];
  const auto entry = [&](const std::string& input, int e, int c) {
    return std::stod(doc.at("jacobians").at(input).at(e).at(c).get<std::string>());
  };
  // dQ(i,j)/dX(k,l) = [i = k] WQ(l,j) and dQ(i,j)/dWQ(k,l) = X(i,k) [j = l]. Each swept entry is one product of
  // the unit seed with a value of the file plus exact zeros, so the tape's numbers are these, exactly (17
  // significant digits give a double back exactly).
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k)
        for (int l = 0; l < 2; ++l) {
          CAPTURE(i);
          CAPTURE(j);
          CAPTURE(k);
          CAPTURE(l);
          CHECK(entry("X", 2 * i + j, 2 * k + l) == (i == k ? WQ(l, j) : 0.0));
          CHECK(entry("WQ", 2 * i + j, 2 * k + l) == (j == l ? X(i, k) : 0.0));
          for (const char* other : {"WK", "WV", "G"})
            CHECK(entry(other, 2 * i + j, 2 * k + l) == 0.0);
        }
  CHECK(std::stod(doc.at("value").at(0).at(0).get<std::string>()) == WQ(0, 0));
}

TEST_CASE("grad --jacobian Z of Z = W X (3x1 by 1x3): rows are Z's entries row-major, columns the input's") {
  // Every ordering mistake (entries column-major, rows and columns swapped) moves some of these numbers: the 3 x 3
  // node is not symmetric, and W and X hold distinct numbers.
  const std::string file = temp_file("outer.json", R"({
    "inputs": {"W": [[2], [3], [5]], "X": [[7, 11, 13]]},
    "nodes": [{"name": "Z", "op": "matmul", "args": ["W", "X"]},
              {"name": "J", "op": "sum", "args": ["Z"]}],
    "output": "J"})");
  const nlohmann::ordered_json doc = grad_jacobian(file, "Z");
  const double w[] = {2, 3, 5}, x[] = {7, 11, 13};
  const auto at = [&](const char* input, int e, int c) {
    return std::stod(doc.at("jacobians").at(input).at(e).at(c).get<std::string>());
  };
  REQUIRE(doc.at("jacobians").at("W").size() == 9);
  REQUIRE(doc.at("jacobians").at("X").size() == 9);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      for (int k = 0; k < 3; ++k) {
        CHECK(at("W", 3 * i + j, k) == (k == i ? x[j] : 0.0)); // dZ(i,j)/dW(k,0) = [k = i] X(0,j)
        CHECK(at("X", 3 * i + j, k) == (k == j ? w[i] : 0.0)); // dZ(i,j)/dX(0,k) = W(i,0) [k = j]
      }
    }
}

TEST_CASE("check --jacobian: an entry that is -inf (masked) is not checked, with a warning") {
  const nlohmann::json doc =
      check_jacobian_json(std::string(tapegrad_source_dir) + "/examples/graphs/masked_row_attention.json", "SM");
  std::size_t skipped = 0;
  for (const auto& w : doc.at("warnings"))
    skipped += w.get<std::string>().find(" is -inf: not checked") != std::string::npos;
  CHECK(skipped == 5); // SM(0, 2), SM(1, 2) and the whole of row 2
  std::set<std::string> entries;
  for (const auto& c : doc.at("checks"))
    entries.insert(c.at("graph").get<std::string>());
  CHECK(entries.size() == 4); // the 9 entries of SM less the 5 masked
}

TEST_CASE("grad --jacobian of the 1x1 output is its gradient, one row") {
  const nlohmann::ordered_json J = grad_jacobian(example1, "J");
  GradCommand g;
  g.file = example1;
  g.format = "json";
  std::ostringstream out;
  REQUIRE(run_grad_command(g, out) == 0);
  const nlohmann::ordered_json grads = nlohmann::ordered_json::parse(out.str()).at("gradients");
  for (const auto& item : grads.items()) {
    const std::string name = item.key(); // not a structured binding: clang 14's doctest CAPTURE cannot take one
    const nlohmann::ordered_json& G = item.value();
    CAPTURE(name);
    const nlohmann::ordered_json& row = J.at("jacobians").at(name).at(0);
    REQUIRE(J.at("jacobians").at(name).size() == 1);
    REQUIRE(row.size() == 4);
    for (int c = 0; c < 4; ++c)
      CHECK(row.at(c) == G.at(c / 2).at(c % 2));
  }
}

TEST_CASE("check --jacobian A: every (entry of A, input entry) pair passes, each entry checked, the worst named") {
  const nlohmann::json doc = check_jacobian_json(example1, "A");
  CHECK(doc.at("verdict") == "pass");
  std::set<std::string> entries;
  std::size_t pairs = 0;
  for (const auto& c : doc.at("checks")) {
    entries.insert(c.at("graph").get<std::string>());
    pairs += c.at("kind") == "tape_vs_finite_differences";
  }
  CHECK(entries == std::set<std::string>{example1 + ": A(0, 0)", example1 + ": A(0, 1)", example1 + ": A(1, 0)",
                                         example1 + ": A(1, 1)"});
  CHECK(pairs == 4 * 5); // 4 entries of A, each against the 5 inputs
  const nlohmann::json& worst = doc.at("worst_pair");
  const std::string pair = worst.at("pair");
  MESSAGE("worst pair " << pair << ": rel " << worst.at("check").at("max_rel_error").get<std::string>()
                        << " <= " << worst.at("check").at("threshold").get<std::string>());
  CHECK(std::regex_match(pair, std::regex(R"(A\([01], [01]\) / (X|WQ|WK|WV|G)\([01], [01]\))")));
  CHECK(worst.at("check").at("kind") == "tape_vs_finite_differences");
  CHECK(worst.at("check").at("passed") == true);
}

TEST_CASE("--jacobian: an input, a name the file has not, and options that do not apply are user errors") {
  std::ostringstream out;
  GradCommand g;
  g.file = example1;
  g.jacobian = "X";
  CHECK_THROWS_WITH_AS(run_grad_command(g, out),
                       (example1 + ": 'X' is an input, not a node (a Jacobian is taken of a node)").c_str(),
                       tapegrad::GraphFileError);
  g.jacobian = "nope";
  CHECK_THROWS_WITH_AS(run_grad_command(g, out), (example1 + ": 'nope' is not an input or a node").c_str(),
                       tapegrad::GraphFileError);
  g.jacobian = "A";
  g.all_nodes = true;
  CHECK_THROWS_AS(run_grad_command(g, out), tapegrad::UsageError);
  g.all_nodes = false;
  g.audit = true;
  CHECK_THROWS_AS(run_grad_command(g, out), tapegrad::UsageError);

  CheckCommand c;
  c.jacobian = "A";
  CHECK_THROWS_WITH_AS(run_check_command(c, out), "--jacobian needs a graph FILE (NODE is one of its nodes)",
                       tapegrad::UsageError);
  c.file = example1;
  c.order = 2;
  CHECK_THROWS_AS(run_check_command(c, out), tapegrad::UsageError);
  c.order = 1;
  c.gradients = example1;
  CHECK_THROWS_AS(run_check_command(c, out), tapegrad::UsageError);
  CHECK(out.str().empty());
}

TEST_CASE("--jacobian keeps the format's rule: a file whose output is not 1x1 is refused, naming the output") {
  const std::string file = temp_file("matrix_output.json", R"({
    "inputs": {"X": [[1, 2], [3, 4]]},
    "nodes": [{"name": "Y", "op": "tanh", "args": ["X"]}],
    "output": "Y"})");
  GradCommand g;
  g.file = file;
  g.jacobian = "Y";
  std::ostringstream out;
  CHECK_THROWS_WITH_AS(run_grad_command(g, out),
                       (file + ": output: 'Y' is 2x2; the output must hold one entry (take its sum)").c_str(),
                       tapegrad::GraphFileError);
  CHECK(out.str().empty());
}

TEST_CASE("FileGraph::node_function records the nodes up to its node only") {
  // Node L's log is outside its domain at this point; Y, before it, is still a graph function.
  const std::string file = temp_file("prefix.json", R"({
    "inputs": {"X": [[1, -2]]},
    "nodes": [{"name": "Y", "op": "tanh", "args": ["X"]},
              {"name": "L", "op": "log", "args": ["X"]},
              {"name": "J", "op": "sum", "args": ["L"]}],
    "output": "J"})");
  const tapegrad::FileGraph<double> graph(tapegrad::read_graph_file(file));
  tapegrad::Tape<double> tape;
  const auto in = graph.record_inputs(tape);
  const tapegrad::Var<double> y = graph.node_function("Y")(tape, in);
  CHECK(y.rows() == 1);
  CHECK(y.cols() == 2);
  CHECK(tape.size() == 2); // the input and Y: L was not recorded
  tapegrad::Tape<double> whole;
  CHECK_THROWS_AS(graph.record(whole, graph.record_inputs(whole)), tapegrad::DomainError);
  // The command reads the file as a whole, as every command does: its log is a domain error there.
  GradCommand g;
  g.file = file;
  g.jacobian = "Y";
  std::ostringstream out;
  CHECK_THROWS_AS(run_grad_command(g, out), tapegrad::DomainError);
}

TEST_CASE("grad --all-nodes and --audit on a node made from real constants only: it has no gradient, and says so") {
  // T = c c is made from constants only (no gradient); Y = X T reads it, and so does S. X is 2x3.
  const std::string file = temp_file("constant_node.json", R"({
    "inputs": {"X": [[1, -2, 0.5], [3, 0.25, -1]]},
    "constants": {"c": {"dtype": "real", "value": "0.5"}},
    "nodes": [{"name": "T", "op": "mul", "args": ["c", "c"]},
              {"name": "Y", "op": "mul", "args": ["X", "T"]},
              {"name": "S", "op": "add", "args": ["Y", "T"]},
              {"name": "J", "op": "sum", "args": ["S"]}],
    "output": "J"})");
  GradCommand g;
  g.file = file;
  g.format = "json";
  g.all_nodes = true;
  g.audit = true;
  std::ostringstream out;
  REQUIRE(run_grad_command(g, out) == 0);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  CHECK(doc.at("node_gradients").at("T").is_null());
  CHECK(doc.at("node_gradients").at("Y").size() == 2); // 2 rows of "1"
  CHECK(doc.at("node_gradients").at("Y").at(1).at(2) == "1");
  const std::string quarter = tapegrad::to_decimal(0.5 * 0.5);
  CHECK(doc.at("gradients").at("X").at(1).at(0) == quarter); // dJ/dX = T everywhere
  CHECK_FALSE(doc.at("gradients").contains("c"));
  CHECK(doc.at("audit").empty()); // c and T are read twice each, but neither has an adjoint to sum

  g.format = "text";
  std::ostringstream text;
  REQUIRE(run_grad_command(g, text) == 0);
  CHECK(text.str().find("dT: none (made from real constants only)\n") != std::string::npos);
  CHECK(text.str().find("dY\n") != std::string::npos);
  CHECK(text.str().find("fan-out audit (nodes with more than one consumer; their gradient is the sum of the "
                        "contributions):\n  none\n") != std::string::npos);
}
