// The studies as the program and the Python module run them (study/studies.hpp): a set stop flag
// ends each one with Interrupted (the Python module's Ctrl-C), or for whatif with the partial
// answer marked interrupted; without one they run; whatif checks its request as the command does.
#include <catch2/catch.hpp>

#include <atomic>

#include "model/errors.hpp"
#include "study/studies.hpp"
#include "tests/temp_dir.hpp"

namespace study_studies_test {

using namespace tiersim;

namespace {

const std::string kSource = TIERSIM_SOURCE_DIR;
const std::string kData = kSource + "/scenarios";
const std::string kCost = kSource + "/scenarios/cost/opt30b-l40s.yaml";

}  // namespace

TEST_CASE("studies: a set stop flag interrupts every study", "[studies]") {
  std::atomic<bool> stop{true};

  studies::CompareRequest compare;
  compare.comparison = config::read_compare_inputs(std::vector<std::string>{kCost});
  compare.data_dir = kData;
  compare.stop = &stop;
  CHECK_THROWS_AS(studies::run_compare(compare), Interrupted);

  studies::SensitivityRequest sens;
  sens.comparison = compare.comparison;
  sens.data_dir = kData;
  sens.inputs = {"economics.prices.gpu_usd"};
  sens.stop = &stop;
  CHECK_THROWS_AS(studies::run_sensitivity(sens), Interrupted);

  studies::BreakEvenRequest be;
  be.comparison = compare.comparison;
  be.data_dir = kData;
  be.key = "economics.prices.gpu_usd";
  be.stop = &stop;
  CHECK_THROWS_AS(studies::run_breakeven(be), Interrupted);

  test::TempDir tmp;
  studies::PlanRequest plan;
  plan.file = kSource + "/scenarios/plans/opt66b-10tps.yaml";
  plan.out_dir = tmp.str() + "/plan";
  plan.data_dir = kData;
  plan.threads = 1;
  plan.stop = &stop;
  CHECK_THROWS_AS(studies::run_plan(plan), Interrupted);

  studies::CapacityRequest serving;
  serving.file = kSource + "/scenarios/serving/opt30b-chatbot-6xl40s.yaml";
  serving.data_dir = kData;
  serving.stop = &stop;
  CHECK_THROWS_AS(studies::run_capacity(serving), Interrupted);
  serving.file = kSource + "/scenarios/training/dgx2-zero3.yaml";
  CHECK_THROWS_AS(studies::run_capacity(serving), Interrupted);

  CHECK_THROWS_AS(studies::run_validate({"", kData, &stop}), Interrupted);
}

TEST_CASE("studies: without a stop flag the same requests run", "[studies]") {
  studies::CompareRequest compare;
  compare.comparison = config::read_compare_inputs(std::vector<std::string>{kCost});
  compare.data_dir = kData;
  const studies::CompareOutcome c = studies::run_compare(compare);
  REQUIRE(c.rows.size() == compare.comparison.variants.size());
  CHECK_FALSE(c.failed);

  studies::CapacityRequest training;
  training.file = kSource + "/scenarios/training/dgx2-zero3.yaml";
  training.data_dir = kData;
  const studies::CapacityOutcome t = studies::run_capacity(training);
  CHECK_FALSE(t.serving);
  CHECK(t.strategies.size() == zero_strategies().size());
}

namespace {

// One L40S streaming OPT-30B from a Gen5 drive against six L40S, on cost per million tokens.
studies::WhatIfRequest whatif_request() {
  studies::WhatIfRequest w;
  w.comparison = config::read_compare_inputs(std::vector<std::string>{kCost});
  w.data_dir = kData;
  w.variants = {"1x-l40s-gen5", "6x-l40s"};
  w.metric = "usd_per_million_tokens";
  w.ratio = 1.2;
  w.vary = {"economics.prices.gpu_usd"};
  w.threads = 1;
  return w;
}

}  // namespace

TEST_CASE("studies: whatif stops at a set flag and hands back what it found", "[studies][whatif]") {
  std::atomic<bool> stop{true};
  studies::WhatIfRequest w = whatif_request();
  w.stop = &stop;
  const studies::WhatIfOutcome out = studies::run_whatif(w);
  CHECK(out.result.interrupted);
  CHECK(out.result.simulations == 0);
  CHECK_FALSE(out.options.higher_is_better);  // cost per token: lower is better
  // Nothing that dies with the call is handed back.
  CHECK(out.options.stop == nullptr);
  CHECK(out.options.load.catalog == nullptr);
  CHECK_FALSE(out.options.on_progress);

  w.sense = "maximize";
  CHECK(studies::run_whatif(w).options.higher_is_better);
}

TEST_CASE("studies: whatif checks its request as the command does", "[studies][whatif]") {
  using Catch::Contains;
  studies::WhatIfRequest w = whatif_request();
  w.variants = {"1x-l40s-gen5"};
  CHECK_THROWS_WITH(studies::run_whatif(w), Contains("--variants takes two names"));
  w = whatif_request();
  w.variants = {"1x-l40s-gen5", "7x-l40s"};
  CHECK_THROWS_WITH(studies::run_whatif(w), Contains("names no variant"));
  w = whatif_request();
  w.variants = {"1x-l40s-gen5", "1x-l40s-gen5"};
  CHECK_THROWS_WITH(studies::run_whatif(w), Contains("names '1x-l40s-gen5' twice"));
  w = whatif_request();
  w.points = 1;
  CHECK_THROWS_WITH(studies::run_whatif(w), Contains("--points must be at least 2"));
  w = whatif_request();
  w.sense = "up";
  CHECK_THROWS_WITH(studies::run_whatif(w), Contains("--sense must be minimize or maximize"));
  w = whatif_request();
  w.metric = "made_up_metric";
  CHECK_THROWS_AS(studies::run_whatif(w), ConfigError);
  w = whatif_request();
  w.vary_b = {"economics.pue=2:3"};
  CHECK_THROWS_WITH(studies::run_whatif(w), Contains("LOW <= 1 <= HIGH"));
  w = whatif_request();
  w.ratio = 0;
  CHECK_THROWS_AS(studies::run_whatif(w), ConfigError);
}
TEST_CASE("studies: sensitivity refuses a range that varies nothing and an input given twice",
          "[studies]") {
  studies::SensitivityRequest sens;
  sens.comparison = config::read_compare_inputs(std::vector<std::string>{kCost});
  sens.data_dir = kData;
  sens.inputs = {"economics.prices.gpu_usd"};
  for (const double range : {0.0, 1.0, -0.2}) {
    sens.range = range;
    CHECK_THROWS_WITH(studies::run_sensitivity(sens),
                      Catch::StartsWith("--range must lie in (0, 1)"));
  }
  sens.range = 0.2;
  sens.inputs = {"economics.prices.gpu_usd", "economics.pue", "economics.prices.gpu_usd=0.5:2"};
  CHECK_THROWS_WITH(studies::run_sensitivity(sens),
                    Catch::Contains("economics.prices.gpu_usd") && Catch::Contains("given twice"));
}

}  // namespace study_studies_test
