// The --json objects of the studies (reports/study_json.hpp), on outcomes of the study functions:
// what the program prints and the Python module returns.
#include <catch2/catch.hpp>

#include "reports/study_json.hpp"

namespace reports_study_json_test {

using namespace tiersim;

namespace {
const std::string kSource = TIERSIM_SOURCE_DIR;
}  // namespace

TEST_CASE("study_json: training capacity, one row per strategy", "[study_json]") {
  studies::CapacityRequest r;
  r.file = kSource + "/scenarios/training/dgx2-zero3.yaml";
  r.data_dir = kSource + "/scenarios";
  r.sets = {"hardware.nvme.count=0"};
  const studies::CapacityOutcome o = studies::run_capacity(r);
  const nlohmann::json j = reports::capacity_json(o, r.search);
  REQUIRE(j["strategies"].size() == o.strategies.size());
  bool saw_no_nvme = false;
  for (std::size_t i = 0; i < o.strategies.size(); ++i) {
    const auto& row = j["strategies"][i];
    const auto& s = o.strategies[i];
    CHECK(row["strategy"] == s.strategy);
    if (s.no_nvme) {
      // Without drives the NVMe strategy does not apply: said so, no model size.
      saw_no_nvme = true;
      CHECK(row["limit"] == "no NVMe drives");
      CHECK(row["max_params"].is_null());
    } else if (s.search.found) {
      CHECK(row["max_params"].get<double>() == s.search.params);
      CHECK(row["layers"].get<int>() == s.search.model.layers);
      CHECK(row["limit"] == s.search.limit);
    }
  }
  CHECK(saw_no_nvme);
}

TEST_CASE("study_json: the break-even verdict names the tie and who wins on each side",
          "[study_json]") {
  sensitivity::BreakEven be;
  be.key = "economics.prices.gpu_usd";
  be.key_unit = "USD";
  be.metric = "usd_per_million_tokens";
  be.unit = "USD/Mtoken";
  be.a = "a";
  be.b = "b";
  be.low = 0;
  be.high = 10;
  // a rises with the key, b stays: a is cheaper below 5, b above.
  for (double x : {0.0, 5.0, 10.0}) {
    sensitivity::BreakEvenSample s;
    s.value = x;
    s.metric_a = 1 + x;
    s.metric_b = 6;
    be.scan.push_back(s);
  }
  be.tie = 5;
  be.tie_metric = 6;
  be.crossings = 1;
  const std::string v = reports::breakeven_verdict(be, plan::Sense::kMinimize);
  CHECK_THAT(v, Catch::Contains("they tie at economics.prices.gpu_usd (USD) = 5"));
  CHECK_THAT(v, Catch::Contains("'a' is better below it, 'b' above it"));
  const nlohmann::json j = reports::breakeven_json({be, plan::Sense::kMinimize});
  CHECK(j["scan"][0]["better"] == "a");
  CHECK(j["scan"][1]["better"] == "tie");
  CHECK(j["scan"][2]["better"] == "b");
  CHECK(j["tie"] == 5.0);
  CHECK(j["extrapolated_tie"].is_null());
}
}  // namespace reports_study_json_test
