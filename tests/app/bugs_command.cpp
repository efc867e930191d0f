// `tapegrad bugs --format json`: every fault 1-7 and 10 caught (mutation score 8/8), the node named for the
// VJP faults, and demonstrations 8 and 9 shown.
#include <commands.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <sstream>

TEST_CASE("bugs: every fault caught, nodes named, demonstrations shown") {
  std::ostringstream out;
  tapegrad::app::BugsCommand cmd;
  cmd.format = "json";
  CHECK(tapegrad::app::run_bugs_command(cmd, out) == 0);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  CHECK(doc.at("mutation_score") == "8/8");
  std::map<int, nlohmann::json> faults;
  for (const auto& f : doc.at("faults"))
    faults[f.at("id").get<int>()] = f;
  CHECK(faults.size() == 8);
  for (const auto& entry : faults) {
    const int id = entry.first; // (a plain variable: clang 14 cannot capture a structured binding)
    const auto& f = entry.second;
    CAPTURE(id);
    CHECK(f.at("caught") == true);
    CHECK_FALSE(f.at("caught_by").empty());
    CHECK(std::stod(f.at("max_rel_error").get<std::string>()) > 1e-3);
  }
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
