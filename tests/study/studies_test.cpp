// The studies as the program and the Python module run them (study/studies.hpp): a set stop flag
// ends each one with Interrupted (the Python module's Ctrl-C); without one they run.
#include <catch2/catch.hpp>

#include <atomic>

#include "model/errors.hpp"
#include "study/studies.hpp"
#include "tests/temp_dir.hpp"

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
