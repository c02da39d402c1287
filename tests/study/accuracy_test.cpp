// study/accuracy: the validation's figures kept for `tiersim run`, read back strictly, and what a
// run of a scenario can say of its accuracy.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "model/errors.hpp"
#include "study/accuracy.hpp"
#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace study_accuracy_test {

using namespace tiersim;
namespace validation = tiersim::validation;

namespace {

validation::AccuracyRecord sample() {
  validation::AccuracyRecord r;
  r.groups.push_back({"ZeRO-Inference", 41, 9.5, 18, 8.4, false});
  r.groups.push_back({"FlexGen", 12, 8.9, 0, 0.0, false});
  r.gpus = {"L40S", "T4"};
  r.stacks = {"hf-deepspeed", "optimized"};
  r.features = {"mixture of experts"};
  return r;
}

std::string write(const test::TempDir& dir, const std::string& text) {
  const std::string path = dir.file("accuracy.json");
  std::ofstream(path) << text;
  return path;
}

constexpr const char* kScenario = R"(name: t
hardware:
  gpu: {model: L40S, count: 1}
  host: {model: generic-2s-ddr5}
  nvme: {model: generic-gen5, count: 1}
model: {name: opt-30b}
workload: {kind: inference, batch: 8, prompt_tokens: 64, gen_tokens: 4}
policy: {weights: nvme, kv_cache: gpu}
)";

}  // namespace

TEST_CASE("the accuracy record reads back as it was written", "[validate][accuracy]") {
  test::TempDir dir;
  const validation::AccuracyRecord r = sample();
  const validation::AccuracyRecord back =
      validation::load_accuracy(write(dir, validation::accuracy_json_text(r)));
  REQUIRE(back.groups.size() == 2);
  CHECK(back.groups[0].name == "ZeRO-Inference");
  CHECK(back.groups[0].rows == 41);
  CHECK(back.groups[0].in_sample_pct == Approx(9.5));
  CHECK(back.groups[0].out_of_sample_rows == 18);
  CHECK(back.groups[0].out_of_sample_pct == Approx(8.4));
  CHECK_FALSE(back.groups[0].provisional);
  CHECK(back.gpus == r.gpus);
  CHECK(back.stacks == r.stacks);
  CHECK(back.features == r.features);
  // Written again, the same text.
  CHECK(validation::accuracy_json_text(back) == validation::accuracy_json_text(r));
}

TEST_CASE("both readers of the accuracy file agree", "[validate][accuracy]") {
  // The file is read as JSON, and as YAML (strictly, with lines for errors) where that fails: a
  // YAML comment above the same JSON takes the second way, and must give the same record.
  test::TempDir dir;
  const std::string text = validation::accuracy_json_text(sample());
  const validation::AccuracyRecord fast = validation::load_accuracy(write(dir, text));
  const validation::AccuracyRecord strict =
      validation::load_accuracy(write(dir, "# read as YAML\n" + text));
  CHECK(validation::accuracy_json_text(strict) == validation::accuracy_json_text(fast));
  CHECK(validation::accuracy_json_text(fast) == text);
}

TEST_CASE("a malformed accuracy file names file, line and key", "[validate][accuracy]") {
  test::TempDir dir;
  const std::string path = write(dir,
                                 "groups:\n"
                                 "  - {name: x, rows: 3, in_sample_pct: 5, out_of_sample_rows: 1,\n"
                                 "     out_of_sample_pct: 6, provisonal: false}\n"
                                 "gpus: []\nstacks: []\n");
  try {
    validation::load_accuracy(path);
    FAIL("no error");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find(path) != std::string::npos);
    CHECK(what.find(":3: groups[0].provisonal") != std::string::npos);  // the key's line
    CHECK(what.find("provisonal") != std::string::npos);
    CHECK(what.find("provisional") != std::string::npos);  // the near match
  }
  CHECK_THROWS_AS(validation::load_accuracy(write(dir, "groups: []\ngpus: []\n")), ConfigError);
  CHECK_THROWS_WITH(validation::load_accuracy(write(dir, "groups: []\ngpus: []\nstacks: []\n")),
                    Catch::Contains("features"));
  CHECK_THROWS_AS(validation::load_accuracy(dir.file("missing.yaml")), ConfigError);
}

TEST_CASE("a run's accuracy: its group's errors and what no published row anchors",
          "[validate][accuracy]") {
  const validation::AccuracyRecord r = sample();
  const validation::RunAccuracy anchored = validation::run_accuracy(test::load_yaml(kScenario), r);
  CHECK(anchored.group == "ZeRO-Inference");
  REQUIRE(anchored.errors);
  CHECK(anchored.errors->out_of_sample_pct == Approx(8.4));
  CHECK(anchored.unvalidated.empty());

  const validation::RunAccuracy b200 =
      validation::run_accuracy(test::load_yaml(kScenario, {"hardware.gpu.model=B200"}), r);
  REQUIRE(b200.unvalidated.size() == 1);
  CHECK(b200.unvalidated[0] == "GPU B200");

  // A model mechanism no row has: an MoE whose experts are fetched as routed, with dense layers.
  // An MoE streamed whole is anchored (the record's rows have one); routing and dense layers are
  // not.
  const std::string moe = test::replace(test::replace(kScenario, "opt-30b", "glm-4.5-air"),
                                        "weights: nvme", "weights: cpu");
  CHECK(validation::model_features(test::load_yaml(moe)) ==
        std::vector<std::string>{"mixture of experts", "dense layers between expert layers"});
  CHECK(validation::run_accuracy(test::load_yaml(moe, {"hardware.host.dram_gb=512"}), r)
            .unvalidated == std::vector<std::string>{"dense layers between expert layers"});
  const validation::RunAccuracy routed = validation::run_accuracy(
      test::load_yaml(moe, {"hardware.host.dram_gb=512", "policy.moe_fetch=routed"}), r);
  CHECK(routed.unvalidated ==
        std::vector<std::string>{"routed expert fetch", "dense layers between expert layers"});
  // Routing changes nothing where every weight is on the GPU: not a mechanism there.
  CHECK(validation::model_features(test::load_yaml(
            moe, {"policy.moe_fetch=routed", "policy.weights=gpu", "hardware.gpu.model=H200",
                  "hardware.gpu.count=2", "policy.parallelism.tensor=2"})) ==
        std::vector<std::string>{"mixture of experts", "dense layers between expert layers"});

  // Multi-head latent attention is a mechanism of its own (no published row runs DeepSeek).
  const std::string ds = test::replace(test::replace(kScenario, "opt-30b", "deepseek-v3"),
                                       "weights: nvme", "weights: cpu");
  CHECK(validation::model_features(test::load_yaml(ds)) ==
        std::vector<std::string>{"multi-head latent attention", "mixture of experts",
                                 "dense layers between expert layers"});

  // A model with a sliding window, in a workload that attends over a cache (checkpointing one
  // attends over nothing).
  const std::string oss = test::replace(test::replace(kScenario, "opt-30b", "gpt-oss-20b"),
                                        "weights: nvme", "weights: cpu");
  CHECK(validation::model_features(test::load_yaml(oss)) ==
        std::vector<std::string>{"sliding-window attention", "mixture of experts"});

  // A group the record has no row of: no errors to quote.
  validation::AccuracyRecord empty = r;
  empty.groups.clear();
  CHECK_FALSE(validation::run_accuracy(test::load_yaml(kScenario), empty).errors);
}

}  // namespace study_accuracy_test
