// `tapegrad check --format json` follows its contract: verdict, checks with every field, numbers as
// decimal strings, precisions spelled as --precision takes them; and bad options are user errors.
#include <commands.hpp>

#include <tapegrad/autodiff/error.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

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
