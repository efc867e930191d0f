// `tapegrad check --format json` follows its contract: verdict, checks with every field, numbers as
// decimal strings, precisions spelled as --precision takes them; and bad options are user errors.
#include <commands.hpp>
#include <precision.hpp>

#include <tapegrad/autodiff/error.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

using namespace tapegrad::app;

TEST_CASE("check --format json: the documented keys, decimal strings, precision names") {
  CheckCommand cmd;
  cmd.format = "json";
  cmd.size = "3,2,2,2";
  std::ostringstream out;
  CHECK(run_check_command(cmd, out) == 0);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  CHECK(doc.at("verdict") == "pass");
  CHECK(doc.at("warnings").is_array());
  REQUIRE(doc.at("checks").size() > 100);
  std::set<std::string> engines, references, names;
  for (const auto& c : doc.at("checks")) {
    for (const char* key : {"name", "input", "engine_precision", "reference_precision", "max_abs_error",
                            "max_rel_error", "numeric", "analytic", "threshold"})
      CHECK(c.at(key).is_string());
    CHECK(c.at("worst_index").size() == 2);
    CHECK(c.at("passed") == true);
    std::stod(c.at("max_rel_error").get<std::string>()); // a decimal number
    engines.insert(c.at("engine_precision"));
    references.insert(c.at("reference_precision"));
    names.insert(c.at("name"));
  }
  CHECK(engines == std::set<std::string>{"double", "50"});
  CHECK(references.count("100") == 1);
  CHECK(names.count("tape vs finite differences") == 1);
  CHECK(names.count("hand-written vs finite differences") == 1);
  CHECK(names.count("tape vs hand-written") == 1);
  CHECK(names.count("per-node VJP") == 1);
}

TEST_CASE("check: a precision, a reference and a size that make no sense are user errors") {
  std::ostringstream out;
  CheckCommand cmd;
  cmd.size = "4,x,3,2";
  CHECK_THROWS_AS(run_check_command(cmd, out), tapegrad::UsageError);
  cmd = {};
  cmd.precision = "100";
  cmd.reference = "double";
  CHECK_THROWS_WITH_AS(run_check_command(cmd, out),
                       "--reference-precision: give a number of decimal digits (the reference is MPFR), not 'double'",
                       tapegrad::UsageError);
  cmd.reference = "60";
  CHECK_THROWS_WITH_AS(run_check_command(cmd, out),
                       "--reference-precision: 60 digits is below the engine's 100 (100); the reference must be at "
                       "least as precise",
                       tapegrad::UsageError);
}

TEST_CASE("check's text: a summary line per kind of check; --verbose adds every check's line") {
  CheckCommand cmd;
  cmd.size = "2,2,2,2";
  cmd.precision = "double";
  std::ostringstream summary, verbose;
  CHECK(run_check_command(cmd, summary) == 0);
  cmd.verbose = true;
  CHECK(run_check_command(cmd, verbose) == 0);
  const auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  MESSAGE("summary " << lines(summary.str()) << " lines, --verbose " << lines(verbose.str()) << " lines");
  CHECK(summary.str().find("  per-node VJP ") != std::string::npos);
  CHECK(summary.str().find("    pass  ") == std::string::npos); // no passing line without --verbose
  CHECK(verbose.str().find("    pass  ") != std::string::npos);
  CHECK(lines(summary.str()) < 100);
  CHECK(lines(verbose.str()) > lines(summary.str()) + 50);
}

TEST_CASE("check --precision mpfr digits and --directional run and say they are weaker") {
  CheckCommand cmd;
  cmd.precision = "30";
  cmd.directional = true;
  cmd.size = "2,2,2,2";
  std::ostringstream out;
  CHECK(run_check_command(cmd, out) == 0);
  CHECK(out.str().find("DIRECTIONAL mode (weaker") != std::string::npos);
  CHECK(out.str().find("engine 30 against a 60-digit MPFR reference") != std::string::npos);
}

namespace {
std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / ("tapegrad-test-" + name)).string();
  std::ofstream(path) << text;
  return path;
}
} // namespace

TEST_CASE("check --shard i/n: three partial reports merged equal one whole run, check for check") {
  for (const bool extended : {false, true}) {
    CAPTURE(extended);
    CheckCommand cmd;
    cmd.format = "json";
    cmd.size = "3,2,2,2";
    if (extended) {
      cmd.causal = true;
      cmd.heads = 2;
      cmd.size = "3,4,4,2";
    }
    std::ostringstream whole;
    CHECK(run_check_command(cmd, whole) == 0);
    MergeCommand merge;
    merge.format = "json";
    std::size_t partial_checks = 0;
    for (int i = 2; i >= 0; --i) { // any order
      cmd.shard = std::to_string(i) + "/3";
      std::ostringstream part;
      CHECK(run_check_command(cmd, part) == 0);
      const nlohmann::json doc = nlohmann::json::parse(part.str());
      CHECK(doc.at("verdict") == "partial");
      CHECK(doc.at("shard").at("index") == i);
      partial_checks += doc.at("checks").size();
      merge.files.push_back(temp_file("shard" + std::to_string(i) + ".json", part.str()));
    }
    std::ostringstream merged;
    CHECK(run_merge_command(merge, merged) == 0);
    const nlohmann::json a = nlohmann::json::parse(whole.str()), b = nlohmann::json::parse(merged.str());
    MESSAGE("whole run " << a.at("checks").size() << " checks; three shards " << partial_checks << "; merged "
                         << b.at("checks").size());
    CHECK(partial_checks == a.at("checks").size()); // each unit of work done exactly once
    CHECK(a == b);
  }
}

TEST_CASE("merge: missing, repeated or mismatched shards and whole reports are user errors") {
  CheckCommand cmd;
  cmd.format = "json";
  cmd.size = "2,2,2,2";
  cmd.precision = "double";
  std::vector<std::string> files;
  for (const char* s : {"0/2", "1/2", "0/3"}) {
    cmd.shard = s;
    std::ostringstream part;
    run_check_command(cmd, part);
    files.push_back(temp_file(std::string("m") + s[0] + s[2] + ".json", part.str()));
  }
  std::ostringstream out;
  // Both shards in text (the default) and JSON: the same report as one run.
  std::ostringstream text, json;
  CHECK(run_merge_command({{files[1], files[0]}}, text) == 0);
  CHECK(text.str().rfind("tapegrad merge: 2 partial reports", 0) == 0);
  CHECK(text.str().find("\nverdict: PASS (") != std::string::npos);
  MergeCommand as_json{{files[0], files[1]}, "json", false};
  CHECK(run_merge_command(as_json, json) == 0);
  CHECK(nlohmann::json::parse(json.str()).at("verdict") == "pass");
  // A partial report whose shard index is not an integer, or whose checks lack a field, is a user error.
  CHECK_THROWS_AS(run_merge_command({{temp_file("index.json", R"({"shard": {"index": "0", "count": 2}, "checks": [],
                                                                  "warnings": []})")}},
                                    out),
                  tapegrad::UsageError);
  CHECK_THROWS_AS(run_merge_command({{temp_file("c0.json", R"({"shard": {"index": 0, "count": 2}, "checks": [{}],
                                                               "warnings": []})"),
                                      temp_file("c1.json", R"({"shard": {"index": 1, "count": 2}, "checks": [],
                                                               "warnings": []})")}},
                                    out),
                  tapegrad::UsageError);
  // A check's worst_index must index its shape with integers; the message names the file and the check. A shape
  // of more entries than a tensor holds is refused before its index is flattened (no overflow).
  const auto tampered = [&](const char* name, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json doc = nlohmann::json::parse(std::ifstream(files[0]));
    REQUIRE(!doc.at("checks").empty());
    edit(doc["checks"][0]);
    const std::string file = temp_file(name, doc.dump());
    try {
      run_merge_command({{file, files[1]}}, out);
      FAIL("merge took " << name);
    } catch (const tapegrad::UsageError& e) {
      const std::string what = e.what();
      MESSAGE(what);
      CHECK(what.rfind("merge: " + file + " (shard 0): check '", 0) == 0);
      return what;
    }
    return std::string();
  };
  CHECK(tampered("float_index.json", [](nlohmann::json& c) {
          c["worst_index"] = {0.5, 0};
        }).find("worst_index [0.5,0] is not a list of integers") != std::string::npos);
  CHECK(tampered("bool_index.json", [](nlohmann::json& c) {
          c["worst_index"] = {true, 0};
        }).find("is not a list of integers") != std::string::npos);
  CHECK(tampered("outside.json", [](nlohmann::json& c) {
          c["worst_index"] = {0, 7};
          c["shape"] = {2, 7};
        }).find("worst_index [0,7] is outside its shape [2,7]") != std::string::npos);
  CHECK(tampered("huge.json", [](nlohmann::json& c) {
          c["worst_index"] = {1, 1, 1};
          c["shape"] = {3037000500L, 3037000500L, 2};
        }).find("indexes more entries than a tensor holds") != std::string::npos);
  CHECK(tampered("no_shape.json", [](nlohmann::json& c) { c.erase("shape"); }).find("written by an older tapegrad") !=
        std::string::npos);
  CHECK_THROWS_WITH_AS(run_merge_command({{files[0]}}, out), "merge: shards 1 of 2 are missing", tapegrad::UsageError);
  CHECK_THROWS_AS(run_merge_command({{files[0], files[0], files[1]}}, out), tapegrad::UsageError);
  CHECK_THROWS_AS(run_merge_command({{files[0], files[2]}}, out), tapegrad::UsageError);
  cmd.shard.clear();
  std::ostringstream whole;
  run_check_command(cmd, whole);
  CHECK_THROWS_AS(run_merge_command({{temp_file("whole.json", whole.str())}}, out), tapegrad::UsageError);
  CHECK_THROWS_AS(run_merge_command({{temp_file("bad.json", "{")}}, out), tapegrad::UsageError);
  cmd.shard = "3/3";
  CHECK_THROWS_AS(run_check_command(cmd, out), tapegrad::UsageError);
  cmd.shard = "0/2";
  cmd.format = "text";
  CHECK_THROWS_AS(run_check_command(cmd, out), tapegrad::UsageError);
}

TEST_CASE("every spelling of the scalar table selects its own row, and a number of digits selects MPFR") {
  std::size_t spelled = 0;
  for (const tapegrad::ScalarType& s : tapegrad::scalar_types) {
    if (s.spelling.empty()) continue;
    const Precision p = parse_precision("--precision", std::string(s.spelling));
    const std::string name =
        with_precision(p, [](auto t) { return tapegrad::precision_name<typename decltype(t)::type>(); });
    CHECK(name == s.spelling);
    ++spelled;
  }
  CHECK(spelled + 1 == std::size(tapegrad::scalar_types));
  const Precision mpfr = parse_precision("--precision", "77");
  CHECK(mpfr.digits == 77);
  CHECK(with_precision(mpfr, [](auto t) { return tapegrad::scalar_name<typename decltype(t)::type>(); }) == "mpfr<77>");
  CHECK_THROWS_AS(parse_precision("--precision", "quad"), tapegrad::UsageError);
}
