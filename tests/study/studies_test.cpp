// The studies as the program and the Python module run them (study/studies.hpp): a set stop flag
// ends each one with Interrupted (the Python module's Ctrl-C), and comparisons given as text read
// as the same file would.
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

TEST_CASE("studies: a comparison given as text is the comparison file", "[studies]") {
  const std::string scenario = kSource + "/scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml";
  const std::string text =
      "{\"compare\": {\"name\": \"drives\", \"baseline\": \"four\", "
      "\"variants\": [{\"name\": \"eight\", \"file\": \"" +
      scenario +
      "\", \"set\": {\"hardware.nvme.count\": 8}}, {\"name\": \"four\", "
      "\"file\": \"" +
      scenario + "\"}]}}";
  const config::Comparison cmp = config::read_compare_inputs({config::CompareInput{text, false}});
  CHECK(cmp.name == "drives");
  REQUIRE(cmp.variants.size() == 2);
  CHECK(cmp.variants[0].name == "four");  // the baseline goes first
  CHECK(cmp.variants[1].sets.size() == 1);

  // A scenario as text is one inline variant; mixed with a file, both in order.
  const config::Comparison mixed = config::read_compare_inputs(
      {config::CompareInput{scenario, true}, config::CompareInput{"name: x\n", false, "<dict>"}});
  REQUIRE(mixed.variants.size() == 2);
  CHECK(mixed.variants[0].file == scenario);
  CHECK(mixed.variants[1].inline_yaml == "name: x\n");
  CHECK(mixed.variants[1].display == "<dict>");

  // A comparison with a misspelt key names it, as for a file.
  CHECK_THROWS_WITH(config::read_compare_inputs({config::CompareInput{"{\"compare\": "
                                                                      "{\"variant\": []}}",
                                                                      false}}),
                    Catch::Contains("variant"));
}
