// `tapegrad check FILE --gradients G.json`: gradients computed elsewhere against the reference tape. Files that
// `tapegrad grad --format json` wrote are read as they are; the verdict follows the claimed precision; a
// coordinate off by a little is found and named; a name or shape the graph has not is a user error.
#include <commands.hpp>

#include <tapegrad/autodiff/error.hpp>
#include <tapegrad/graph/io/graph_file.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

using namespace tapegrad::app;

namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / ("tapegrad-given-" + name)).string();
  std::ofstream(path) << text;
  return path;
}

// A small MLP layer: J = sum(tanh(X W)).
const std::string graph = temp_file("graph.json", R"({
  "inputs": {"X": [[0.5, -1.25, 2], [1.5, 0.25, -0.75]],
             "W": [[0.3, -0.2], [0.1, 0.4], ["-0.35", 0.05]]},
  "nodes": [{"name": "H", "op": "matmul", "args": ["X", "W"]},
            {"name": "A", "op": "tanh", "args": ["H"]},
            {"name": "J", "op": "sum", "args": ["A"]}],
  "output": "J"})");

// Tensors of rank 3, 1 and 0: J = sum(tanh(X + b) s).
const std::string tensor_graph = temp_file("tensor_graph.json", R"({
  "inputs": {"X": [[[0.5, -1, 0.25, 2], [1.5, -0.75, 0, 1], [-2, 0.125, 1, -0.5]],
                   [[1, 0.5, -1.25, 0.75], [-0.25, 2, 1.5, -1], [0.375, -1.5, 0.5, 1.25]]],
             "b": [0.1, -0.2, 0.3, -0.4], "s": "1.5"},
  "nodes": [{"name": "Y", "op": "add", "args": ["X", "b"]},
            {"name": "H", "op": "tanh", "args": ["Y"]},
            {"name": "M", "op": "mul", "args": ["H", "s"]},
            {"name": "J", "op": "sum", "args": ["M"]}],
  "output": "J"})");

/// `tapegrad grad file --precision p --format json`, parsed.
nlohmann::json grad_json(const std::string& precision, const std::string& file = graph) {
  GradCommand g;
  g.file = file;
  g.precision = precision;
  g.format = "json";
  std::ostringstream out;
  REQUIRE(run_grad_command(g, out) == 0);
  return nlohmann::json::parse(out.str());
}

struct Run {
  int rc;
  nlohmann::json report;
};
Run check_given(const nlohmann::json& gradients, const std::string& claimed, const std::string& name,
                const std::string& file = graph, const std::string& format = "json") {
  CheckCommand cmd;
  cmd.file = file;
  cmd.gradients = temp_file(name, gradients.dump());
  cmd.claimed = claimed;
  cmd.format = format;
  cmd.quiet = true;
  std::ostringstream out;
  const int rc = run_check_command(cmd, out);
  return {rc, format == "json" ? nlohmann::json::parse(out.str()) : nlohmann::json(out.str())};
}

/// The given-gradient checks of a report, by input.
std::map<std::string, nlohmann::json> given_checks(const nlohmann::json& report) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& c : report.at("checks"))
    if (c.at("kind") == "given_vs_reference") out[c.at("input").get<std::string>()] = c;
  return out;
}

} // namespace

TEST_CASE("--gradients: grad's own output is accepted as is, and judged by the precision it claims") {
  // 50 digits: within a double claim and within a claim of 50 digits (against 100).
  const Run fifty = check_given(grad_json("50"), "", "g50.json");
  CHECK(fifty.rc == 0);
  auto given = given_checks(fifty.report);
  REQUIRE(given.size() == 2);
  for (const auto& entry : given) { // not a structured binding: clang 14 cannot capture one (INFO does)
    const std::string& input = entry.first;
    const nlohmann::json& c = entry.second;
    INFO(input << ": rel " << c.at("max_rel_error") << ", threshold " << c.at("threshold"));
    CHECK(c.at("passed") == true);
    CHECK(c.at("engine_precision") == "given, claimed double");
    CHECK(c.at("correct_digits").get<double>() > 40); // rounded once to 50 digits, measured against 50
  }
  // The reference it is measured against was itself checked against finite differences, and passed.
  bool confirmed = false;
  for (const auto& c : fifty.report.at("checks"))
    confirmed = confirmed || (c.at("kind") == "tape_vs_finite_differences" && c.at("passed") == true);
  CHECK(confirmed);
  CHECK(check_given(grad_json("50"), "50", "g50b.json").rc == 0);

  // double passes a double claim; float fails it (about 7 digits of 16) and passes a float claim.
  CHECK(check_given(grad_json("double"), "double", "gd.json").rc == 0);
  const Run single = check_given(grad_json("float"), "double", "gf.json");
  CHECK(single.rc == 1);
  for (const auto& entry : given_checks(single.report)) {
    const std::string& input = entry.first;
    const nlohmann::json& c = entry.second;
    INFO(input << ": " << c.at("correct_digits"));
    CHECK(c.at("passed") == false);
    CHECK(c.at("correct_digits").get<double>() > 5);
    CHECK(c.at("correct_digits").get<double>() < 9);
  }
  CHECK(check_given(grad_json("float"), "float", "gf2.json").rc == 0);
}

TEST_CASE("--gradients: one coordinate off by 1e-9 relative fails and is named, the other input passes") {
  nlohmann::json g = grad_json("50");
  nlohmann::json& entry = g["gradients"]["W"][2][1];
  const double moved = std::stod(entry.get<std::string>()) * (1 + 1e-9);
  std::ostringstream text;
  text.precision(17);
  text << moved;
  entry = text.str();
  const Run run = check_given(g, "double", "off.json");
  CHECK(run.rc == 1);
  const auto given = given_checks(run.report);
  CHECK(given.at("X").at("passed") == true);
  const nlohmann::json& w = given.at("W");
  CHECK(w.at("passed") == false);
  CHECK(w.at("worst_index") == nlohmann::json::array({2, 1}));
  // the error relative to W's largest gradient entry: 1e-9 of that entry over the largest
  CHECK(w.at("rel_error").get<double>() > 1e-10);
  CHECK(w.at("rel_error").get<double>() < 1e-9);
}

TEST_CASE("--gradients: an input left out is listed as not checked; a NaN fails the check, not the file") {
  nlohmann::json g = grad_json("double");
  g["gradients"].erase("X");
  const Run partial = check_given(g, "", "partial.json");
  CHECK(partial.rc == 0);
  CHECK(given_checks(partial.report).count("X") == 0);
  REQUIRE(partial.report.at("warnings").size() == 1);
  CHECK(partial.report.at("warnings")[0].get<std::string>().find("input 'X' has no gradient") != std::string::npos);

  g["gradients"]["W"][0][0] = "nan";
  const Run nan = check_given(g, "", "nan.json");
  CHECK(nan.rc == 1);
  CHECK(given_checks(nan.report).at("W").at("passed") == false);
}

TEST_CASE("--gradients: names and shapes the graph has not, and misused options, are user errors") {
  CheckCommand cmd;
  cmd.file = graph;
  cmd.quiet = true;
  std::ostringstream out;
  cmd.gradients = temp_file("unknown.json", R"({"gradients": {"Z": [[1]]}})");
  CHECK_THROWS_WITH_AS(
      run_check_command(cmd, out),
      doctest::Contains(("gradient of 'Z': " + graph + " has no input 'Z' (its inputs: X, W)").c_str()),
      tapegrad::GraphFileError);
  cmd.gradients = temp_file("shape.json", R"({"gradients": {"W": [[1, 2, 3], [4, 5, 6]]}})");
  CHECK_THROWS_WITH_AS(run_check_command(cmd, out),
                       doctest::Contains(("the gradient of 'W' is 2x3 but input 'W' of " + graph + " is 3x2").c_str()),
                       tapegrad::ShapeError);
  cmd.gradients = temp_file("nokey.json", R"({"gradient": {"W": [[1]]}})");
  CHECK_THROWS_WITH_AS(run_check_command(cmd, out), doctest::Contains("missing key 'gradients'"),
                       tapegrad::GraphFileError);
  cmd.gradients = temp_file("text.json", R"({"gradients": {"W": [["one", 2]]}})");
  CHECK_THROWS_WITH_AS(run_check_command(cmd, out), doctest::Contains("'one' is not a decimal number"),
                       tapegrad::GraphFileError);
  cmd.gradients = temp_file("ok.json", grad_json("double").dump());
  cmd.precision = "double";
  CHECK_THROWS_AS(run_check_command(cmd, out), tapegrad::UsageError);
  cmd.precision.clear();
  cmd.claimed = "triple";
  CHECK_THROWS_WITH_AS(run_check_command(cmd, out),
                       doctest::Contains("--claimed-precision: 'triple' is not a precision"), tapegrad::UsageError);
  cmd.claimed = "double";
  cmd.reference = "10";
  CHECK_THROWS_WITH_AS(run_check_command(cmd, out), doctest::Contains("10 digits is below the claimed 15 (double)"),
                       tapegrad::UsageError);
  CheckCommand alone;
  alone.claimed = "float";
  CHECK_THROWS_AS(run_check_command(alone, out), tapegrad::UsageError);
  alone.claimed.clear();
  alone.gradients = cmd.gradients;
  CHECK_THROWS_WITH_AS(run_check_command(alone, out), doctest::Contains("--gradients needs a graph FILE"),
                       tapegrad::UsageError);
}

TEST_CASE("--gradients: the value given is compared too, so gradients taken elsewhere fail though shapes fit") {
  nlohmann::json g = grad_json("double");
  const Run same = check_given(g, "", "value_same.json");
  CHECK(same.rc == 0);
  bool compared = false;
  for (const auto& c : same.report.at("checks"))
    compared = compared || (c.at("kind") == "forward" && c.at("passed") == true);
  CHECK(compared);
  // The value of the same graph at inputs moved a little: the gradients given are still the old ones.
  const double value = std::stod(g.at("value").get<std::string>());
  std::ostringstream moved;
  moved.precision(17);
  moved << value * (1 + 1e-6);
  g["value"] = moved.str();
  const Run other = check_given(g, "", "value_other.json");
  CHECK(other.rc == 1);
  bool named = false;
  for (const auto& c : other.report.at("checks"))
    if (c.at("kind") == "forward") {
      CHECK(c.at("passed") == false);
      named = c.at("note").get<std::string>().find("not the graph's output") != std::string::npos;
    }
  CHECK(named);
  CheckCommand cmd;
  cmd.file = graph;
  cmd.gradients = temp_file("stats.json", g.dump());
  cmd.stats = true;
  std::ostringstream out;
  CHECK_THROWS_WITH_AS(run_check_command(cmd, out), doctest::Contains("--stats does not apply"), tapegrad::UsageError);
}

TEST_CASE("--gradients: a value near 0 is judged by its absolute error (0.1 + 0.2 - 0.3 in double passes)") {
  // In the file's decimals J is -1e-22; double's 0.1 + 0.2 - 0.3 (c rounds to 0.3's double) is 2^-54. Relative to
  // J that is an error of 5e5; absolutely it is within the claim's budget, which is how a loss that cancels is
  // judged.
  const std::string cancel = temp_file("cancel.json", R"({
    "inputs": {"X": [["0.1", "0.2"]], "c": [["0.3000000000000000000001"]]},
    "nodes": [{"name": "S", "op": "sum", "args": ["X"]}, {"name": "J", "op": "sub", "args": ["S", "c"]}],
    "output": "J"})");
  GradCommand g;
  g.file = cancel;
  g.precision = "double";
  g.format = "json";
  std::ostringstream grads;
  REQUIRE(run_grad_command(g, grads) == 0);
  const nlohmann::json given = nlohmann::json::parse(grads.str());
  REQUIRE(std::stod(given.at("value").get<std::string>()) != 0.0); // double's rounding, not the decimals' 0
  CheckCommand cmd;
  cmd.file = cancel;
  cmd.gradients = temp_file("cancel_gradients.json", given.dump());
  cmd.format = "json";
  cmd.quiet = true;
  std::ostringstream out;
  CHECK(run_check_command(cmd, out) == 0);
  bool compared = false;
  const nlohmann::json report = nlohmann::json::parse(out.str());
  for (const auto& c : report.at("checks"))
    if (c.at("kind") == "forward" && c.at("engine_precision").get<std::string>().starts_with("given")) {
      compared = true;
      MESSAGE("value: abs " << c.at("max_abs_error") << ", threshold " << c.at("threshold") << ": " << c.at("note"));
      CHECK(c.at("passed") == true);
      CHECK(c.at("rel_error").get<double>() > 1); // passed absolutely, not relatively
      CHECK(c.at("note").get<std::string>().find("the output is near 0: judged absolutely") != std::string::npos);
    }
  CHECK(compared);
  // Off by more than the budget in absolute terms, it fails.
  nlohmann::json wrong = given;
  wrong["value"] = "1e-9";
  cmd.gradients = temp_file("cancel_wrong.json", wrong.dump());
  std::ostringstream out2;
  CHECK(run_check_command(cmd, out2) == 1);
}

TEST_CASE("--gradients on tensors: the coordinate off is named by its own index, in JSON and in text") {
  nlohmann::json g = grad_json("double", tensor_graph);
  nlohmann::json& entry = g["gradients"]["X"][1][2][3];
  const double moved = std::stod(entry.get<std::string>()) * (1 + 1e-6);
  std::ostringstream text;
  text.precision(17);
  text << moved;
  entry = text.str();
  const Run run = check_given(g, "double", "off3.json", tensor_graph);
  CHECK(run.rc == 1);
  const auto given = given_checks(run.report);
  const nlohmann::json& x = given.at("X");
  CHECK(x.at("passed") == false);
  CHECK(x.at("worst_index") == nlohmann::json::array({1, 2, 3}));
  CHECK(x.at("shape") == nlohmann::json::array({2, 3, 4}));
  CHECK(given.at("b").at("passed") == true);
  CHECK(given.at("b").at("shape") == nlohmann::json::array({4}));
  CHECK(given.at("s").at("worst_index") == nlohmann::json::array()); // rank 0: no index
  CHECK(given.at("s").at("shape") == nlohmann::json::array());
  // The text names the entry as X[1][2][3] is written.
  const Run as_text = check_given(g, "double", "off3_text.json", tensor_graph, "text");
  const std::string out = as_text.report.get<std::string>();
  CAPTURE(out);
  CHECK(out.find("at (1, 2, 3): reference") != std::string::npos);
}
