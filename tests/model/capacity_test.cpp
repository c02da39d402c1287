// The capacity model against published memory figures.
#include "model/capacity.hpp"

#include <catch2/catch.hpp>

#include "model/perf.hpp"
#include "model/units.hpp"
#include "tests/support.hpp"

namespace tiersim {
namespace {

// Llama-3.1-8B served on one H100 80GB as in vLLM 0.19.0's start-up logs in
// llm-d-incubation/llm-d-planner (accuracy/results/v0.19.0/logs, commit d3121e0): torch reports
// 79.19 GiB in all, gpu_memory_utilization 0.95, max_num_batched_tokens 8192, max_num_seqs 1024.
// The capacity model's rates came from other models' lines in those logs (Granite-3.1-8B and
// Gemma-2-9B, model/perf.hpp), so these are checks, not fits.
const char* kVllmH100 = R"(
name: vllm-h100-memory
hardware:
  gpu: {model: H100-SXM, memory_gb: 85.03}
model: {name: llama-3.1-8b}
workload:
  kind: serving
  arrival_rate: 1
  requests: 10
  prompt_tokens: 256
  output_tokens: 32
  scheduler: chunked
  token_budget: 8192
  max_batch: 1024
  gpu_memory_utilization: 0.95
)";

double pool_gib(const Scenario& s) {
  return serving_capacity(s, ExecutionModel{}, s.serving.token_budget, s.serving.max_batch, 0)
             .kv_pool_bytes /
         units::kGiB;
}

}  // namespace

TEST_CASE("the serving KV pool is what vLLM's start-up profile leaves", "[model][capacity]") {
  // meta-llama-llama-3-1-8b--h100-80gb--tp1pp1dp1--16384.log: "Available KV cache memory: 58.11 GiB"
  const Scenario tp1 = test::load_yaml(kVllmH100);
  CHECK(pool_gib(tp1) == Approx(58.11).epsilon(0.01));
  // ...-tp2pp1dp1--8192.log: 11.47 GiB of non-KV memory out of 75.23 GiB requested per GPU.
  const Scenario tp2 =
      test::load_yaml(kVllmH100, {"hardware.gpu.count=2", "policy.parallelism.tensor=2"});
  CHECK(pool_gib(tp2) == Approx(75.23 - 11.47).epsilon(0.01));
}

TEST_CASE("vLLM's profiled peak follows the vocabulary and the sampled rows", "[model][capacity]") {
  const Scenario s = test::load_yaml(kVllmH100);
  const ExecutionModel em;
  const double full = serving_capacity(s, em, 8192, 1024, 0).kv_pool_bytes;
  // Fewer sequences sampled at once: a smaller sampler peak, a larger pool, by exactly the logits
  // no longer held.
  const double fewer = serving_capacity(s, em, 8192, 256, 0).kv_pool_bytes;
  CHECK(fewer - full == Approx(768.0 * s.model.vocab * em.vllm_sampler_bytes_per_logit));
  // The sampler pass covers at most one row per token of the budget.
  const double small_budget = serving_capacity(s, em, 512, 1024, 0).kv_pool_bytes;
  CHECK(small_budget - full == Approx(512.0 * s.model.vocab * em.vllm_sampler_bytes_per_logit));
}

}  // namespace tiersim
