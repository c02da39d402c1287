// `tiersim run`'s output (reports/run_output.cpp): a run whose cost metrics are missing says
// which price is missing and how to supply it, in the text and in --json.
#include "reports/run_output.hpp"

#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "config/scenario_loader.hpp"
#include "sim/simulate.hpp"

using namespace tiersim;

namespace {

Scenario reference(const std::vector<std::string>& overrides = {}) {
  config::LoadOptions opts;
  opts.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  opts.overrides = overrides;
  return config::load_scenario(
      std::string(TIERSIM_SOURCE_DIR) + "/scenarios/reference/llama3-70b-a100-4x-gen4-aio.yaml",
      opts);
}

}  // namespace

TEST_CASE("run output names the missing price when cost metrics are omitted", "[report][run]") {
  const Scenario priced = reference();
  const sim::RunResult priced_result = sim::simulate(priced);
  REQUIRE(priced_result.has("capex_usd"));
  std::ostringstream priced_text;
  reports::print_human(priced_text, priced, priced_result);
  CHECK(priced_text.str().find("cost metrics omitted") == std::string::npos);
  CHECK_FALSE(reports::to_json(priced, priced_result).contains("cost_note"));

  // A catalog drive without an entry in prices.yaml (a cloud instance's local SSD).
  const Scenario unpriced = reference({"hardware.nvme.model=gcp-local-ssd-nvme"});
  REQUIRE_FALSE(unpriced.economics.prices.drive.known());
  const sim::RunResult r = sim::simulate(unpriced);
  REQUIRE_FALSE(r.has("capex_usd"));
  std::ostringstream text;
  reports::print_human(text, unpriced, r);
  CHECK(text.str().find("note       cost metrics omitted: no price for NVMe drive") !=
        std::string::npos);
  CHECK(text.str().find("economics.prices.drive_usd") != std::string::npos);
  const nlohmann::json j = reports::to_json(unpriced, r);
  REQUIRE(j.contains("cost_note"));
  CHECK(j["cost_note"].get<std::string>().find("economics.prices.drive_usd") != std::string::npos);
}
