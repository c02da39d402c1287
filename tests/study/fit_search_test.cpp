// The closest configurations that fit (study/fit_search.hpp): each one is found on the capacity
// model and really fits, and one step further does not.
#include <catch2/catch.hpp>

#include "config/scenario_loader.hpp"
#include "model/capacity.hpp"
#include "model/perf.hpp"
#include "model/training_memory.hpp"
#include "sim/simulate.hpp"
#include "study/fit_search.hpp"
#include "tests/support.hpp"

namespace study_fit_search_test {

using namespace tiersim;

namespace {

// Micron's NVMe box as stated: OPT-30B at batch 200 on one L40S, weights on one Gen5 drive, the
// KV cache in 256 GB (256 GiB of DIMMs) of host DRAM.
const char* kMicronNvme = R"(
name: micron-nvme
hardware:
  gpu: {model: L40S, count: 1}
  host: {model: generic-2s-ddr5, dram_gb: 274.9}
  nvme: {model: micron-9550, count: 1}
model: {name: opt-30b}
workload: {kind: inference, batch: 200, prompt_tokens: 512, gen_tokens: 32}
policy: {weights: nvme, kv_cache: cpu}
)";

const fit::Suggestion* find(const std::vector<fit::Suggestion>& all, const std::string& what) {
  for (const auto& s : all)
    if (s.what == what) return &s;
  return nullptr;
}

bool fits_with(const std::string& yaml, const std::vector<std::string>& sets) {
  const Scenario s = test::load_yaml(yaml, sets);
  return inference_capacity(s, ExecutionModel{}).fits;
}

}  // namespace

TEST_CASE("a host too small for the KV cache gets the largest batch and the DRAM that fit",
          "[fit]") {
  const Scenario s = test::load_yaml(kMicronNvme);
  const ExecutionModel em;
  REQUIRE_FALSE(inference_capacity(s, em).fits);
  const auto all = fit::closest_fits(s, em);
  const fit::Suggestion* batch = find(all, "largest batch");
  REQUIRE(batch);
  REQUIRE(batch->sets.size() == 1);
  CHECK(fits_with(kMicronNvme, batch->sets));
  const int b = std::stoi(batch->sets[0].substr(batch->sets[0].find('=') + 1));
  CHECK(b < 200);
  CHECK_FALSE(fits_with(kMicronNvme, {"workload.batch=" + std::to_string(b + 1)}));
  const fit::Suggestion* dram = find(all, "smallest DRAM");
  REQUIRE(dram);
  CHECK(fits_with(kMicronNvme, dram->sets));
  const double gb = std::stod(dram->sets[0].substr(dram->sets[0].find('=') + 1));
  CHECK_FALSE(fits_with(kMicronNvme, {"hardware.host.dram_gb=" + std::to_string(gb - 1)}));
  // The GPU tier fits already: more GPUs are not what is missing.
  CHECK_FALSE(find(all, "fewest GPUs"));
  // A DRAM size given by hand is the user's host: nothing is said about the catalog's.
  CHECK_THAT(dram->detail, !Catch::Contains("holds"));
}

TEST_CASE("more DRAM than the catalog's platform holds is said to need another host", "[fit]") {
  // GLM-4.5-Air's optimizer states in host DRAM (1.3 TB) on the catalog's own figure for the
  // host, 1024 GB, the most it holds.
  const Scenario s = test::load_yaml(R"(
name: glm-air-cpu-adam
hardware: {gpu: {model: H200, count: 8}, host: {model: generic-2s-ddr5}}
model: {name: glm-4.5-air}
workload: {kind: training, global_batch: 64, sequence_tokens: 2048, zero_stage: 3, optimizer: cpu}
)");
  const auto all = fit::closest_fits(s, ExecutionModel{});
  const fit::Suggestion* dram = find(all, "smallest DRAM");
  REQUIRE(dram);
  CHECK_THAT(dram->detail, Catch::Contains("more than the 1024.0 GB generic-2s-ddr5 holds") &&
                               Catch::Contains("hardware.host.model"));
}

TEST_CASE("a model too large for one GPU's memory gets the fewest GPUs that hold it", "[fit]") {
  const char* yaml = R"(
name: too-big
hardware:
  gpu: {model: L40S, count: 1}
  host: {model: generic-2s-ddr5}
model: {name: opt-30b}
workload: {kind: inference, batch: 8, prompt_tokens: 512, gen_tokens: 8}
policy: {weights: gpu, kv_cache: gpu}
)";
  const Scenario s = test::load_yaml(yaml);
  const auto all = fit::closest_fits(s, ExecutionModel{});
  const fit::Suggestion* gpus = find(all, "fewest GPUs");
  REQUIRE(gpus);
  CHECK(fits_with(yaml, gpus->sets));
  // 60 GB of fp16 weights need two 48 GB GPUs at least.
  CHECK(gpus->sets[0] == "hardware.gpu.count=2");
  CHECK(fit::closest_fits(test::load_yaml(yaml, gpus->sets), ExecutionModel{}).empty());
}

TEST_CASE("an MLA model whose per-head cache does not fit is pointed to a latent-cache stack",
          "[fit]") {
  // DeepSeek-V3 on eight H200s: transformers' widened keys and values (128 x 320 elements a token
  // and layer, split eight ways) take 87 GB of each GPU at this batch; the latent takes 9.8 GB.
  const char* yaml = R"(
name: ds
hardware: {gpu: {model: H200, count: 8}}
model: {name: deepseek-v3}
workload: {kind: inference, batch: 64, prompt_tokens: 2048, gen_tokens: 128}
policy: {weights: gpu, kv_cache: gpu, weight_bits: 8, stack: hf-sdpa, parallelism: {tensor: 8}}
)";
  const auto all = fit::closest_fits(test::load_yaml(yaml), ExecutionModel{});
  const fit::Suggestion* latent = find(all, "latent KV cache");
  REQUIRE(latent);
  CHECK(latent->sets == std::vector<std::string>{"policy.stack=optimized"});
  CHECK(fits_with(yaml, latent->sets));
  CHECK_THAT(latent->detail, Catch::Contains("68.6 KiB") && Catch::Contains("610.0 KiB"));
  // Already on a latent stack, or a model without MLA: no such suggestion.
  CHECK_FALSE(find(
      fit::closest_fits(test::load_yaml(test::replace(yaml, "stack: hf-sdpa", "stack: optimized"),
                                        {"workload.batch=2048"}),
                        ExecutionModel{}),
      "latent KV cache"));
  CHECK_FALSE(
      find(fit::closest_fits(test::load_yaml(test::replace(yaml, "deepseek-v3", "llama-3.1-405b"),
                                             {"workload.batch=2048"}),
                             ExecutionModel{}),
           "latent KV cache"));
}

TEST_CASE(
    "a sliding-window model whose every-token cache does not fit is pointed to a stack "
    "that keeps the window",
    "[fit][window]") {
  // gpt-oss-120b on one H100 at 32k-token prompts (scenarios/inference/gpt-oss-120b-h100-32k.yaml):
  // transformers' cache keeps all 33,280 tokens on every layer; the serving engines keep 128 on
  // the 18 sliding layers.
  const std::string yaml = R"(
name: oss
hardware: {gpu: {model: H100-SXM, count: 1}}
model: {name: gpt-oss-120b}
workload: {kind: inference, batch: 6, prompt_tokens: 32768, gen_tokens: 512}
policy: {weights: gpu, kv_cache: gpu, weight_bits: 4, stack: optimized}
)";
  const std::string hf = test::replace(yaml, "stack: optimized", "stack: hf-sdpa");
  const auto all = fit::closest_fits(test::load_yaml(hf), ExecutionModel{});
  const fit::Suggestion* window = find(all, "windowed KV cache");
  REQUIRE(window);
  CHECK(window->sets == std::vector<std::string>{"policy.stack=optimized"});
  CHECK(fits_with(hf, window->sets));
  CHECK_THAT(window->detail, Catch::Contains("last 128 tokens on the 18 sliding layers") &&
                                 Catch::Contains("16704 of a sequence's 33280 tokens"));
  // Already on such a stack, or within the window: no such suggestion.
  CHECK_FALSE(
      find(fit::closest_fits(test::load_yaml(yaml, {"workload.batch=64"}), ExecutionModel{}),
           "windowed KV cache"));
  CHECK_FALSE(find(
      fit::closest_fits(test::load_yaml(hf, {"workload.prompt_tokens=64", "workload.gen_tokens=64",
                                             "workload.batch=100000"}),
                        ExecutionModel{}),
      "windowed KV cache"));
}

TEST_CASE("a serving model too large for its GPUs gets the tensor-parallel degree that holds it",
          "[fit]") {
  // Mixtral-8x7B's 93 GB of bf16 weights: two L40S hold 46.7 GB each, more than the 42.8 GB
  // vLLM's 0.9 share of a board leaves; four hold it (8 KV heads: three do not divide them).
  const char* yaml = R"(
name: mixtral-serving
hardware:
  gpu: {model: L40S, count: 2}
  host: {model: generic-2s-ddr5}
model: {name: mixtral-8x7b}
workload: {kind: serving, requests: 20, arrival_rate: 2, prompt_tokens: 500, output_tokens: 50}
)";
  const Scenario s = test::load_yaml(yaml);
  REQUIRE_FALSE(sim::simulate(s).fits);
  const auto all = fit::closest_fits(s, ExecutionModel{});
  const fit::Suggestion* gpus = find(all, "fewest GPUs");
  REQUIRE(gpus);
  // Two replicas of one GPU each become two replicas of four.
  CHECK(gpus->sets ==
        std::vector<std::string>{"hardware.gpu.count=8", "policy.parallelism.tensor=4"});
  CHECK_THAT(gpus->detail, Catch::Contains("2 replicas of 4 GPUs"));
  CHECK_FALSE(find(all, "largest batch"));  // serving has no fixed batch
  // The run itself agrees: it fits there, and not one degree lower.
  CHECK(sim::simulate(test::load_yaml(yaml, gpus->sets)).fits);
  CHECK_FALSE(
      sim::simulate(test::load_yaml(yaml, {"hardware.gpu.count=4", "policy.parallelism.tensor=2"}))
          .fits);
  CHECK(fit::closest_fits(test::load_yaml(yaml, gpus->sets), ExecutionModel{}).empty());
}

TEST_CASE("a training run that does not fit gets the largest global batch, or checkpointing",
          "[fit][training]") {
  // ZeRO-Offload's 8B model (ATC'21 Table 3) on one V100-32GB, as shipped at the batch the paper
  // trained it with (16), asked here at 64.
  const std::string file =
      std::string(TIERSIM_SOURCE_DIR) + "/scenarios/training/zero-offload-v100-gpt2-8b.yaml";
  const auto load = [&](std::vector<std::string> sets) {
    config::LoadOptions o;
    o.overrides = std::move(sets);
    o.overrides.insert(o.overrides.begin(), "workload.global_batch=64");
    return config::load_scenario(file, o);
  };
  const ExecutionModel em;
  const auto fits = [&](const std::vector<std::string>& sets) {
    return training_capacity(load(sets), em).fits;
  };
  const Scenario s = load({});
  REQUIRE_FALSE(fits({}));
  const auto all = fit::closest_fits(s, em);
  const fit::Suggestion* batch = find(all, "largest batch");
  REQUIRE(batch);
  REQUIRE(batch->sets.size() == 1);
  CHECK(batch->sets[0].rfind("workload.global_batch=", 0) == 0);
  const int b = std::stoi(batch->sets[0].substr(batch->sets[0].find('=') + 1));
  CHECK(b >= 16);  // the paper's batch fits
  CHECK(fits(batch->sets));
  CHECK_FALSE(fits({"workload.global_batch=" + std::to_string(b + 1)}));
  CHECK_FALSE(find(all, "fewest GPUs"));
  // Without checkpointing even the paper's batch does not fit: turning it on is the answer.
  const auto off = fit::closest_fits(
      load({"workload.global_batch=16", "workload.activation_checkpointing=false"}), em);
  const fit::Suggestion* ckpt = find(off, "activation checkpointing");
  REQUIRE(ckpt);
  CHECK(fits({"workload.global_batch=16"}));
}

}  // namespace study_fit_search_test
