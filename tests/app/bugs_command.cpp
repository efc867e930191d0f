// `tapegrad bugs --format json`: every fault caught (faults 1-7 and 10 on the attention, the op faults 11-20 at
// each of their nodes in the host graphs: mutation score N/N), the node named for the VJP faults, the other
// checkers' verdicts beside ours, and demonstrations 8 and 9 shown.
#include <commands.hpp>

#include <tapegrad/graph/verification/op_faults.hpp>

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
  const std::size_t mutants = doc.at("faults").size();
  CHECK(doc.at("mutation_score") == std::to_string(mutants) + "/" + std::to_string(mutants));
  std::map<int, nlohmann::json> faults; // the first entry of each id
  for (const auto& f : doc.at("faults"))
    faults.emplace(f.at("id").get<int>(), f);
  CHECK(faults.size() == 8 + tapegrad::OpFaults::size);
  CHECK(mutants == faults.size() + 1); // the broadcast bias fault at both biases of the classifier
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
    if (id > 10) CHECK(f.at("node").get<std::string>().find(at) != std::string::npos);
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
