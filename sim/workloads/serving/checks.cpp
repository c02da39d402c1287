// Load-time checks of the serving workload (config/scenario_check.hpp): the arrivals, the length
// distributions, the replicas and the KV cache tiers.
#include <string>
#include <utility>

#include "common/format.hpp"
#include "config/scenario_check.hpp"
#include "model/capacity.hpp"
#include "model/perf.hpp"
#include "sim/workloads/serving/prefix_stream.hpp"
#include "sim/workloads/serving/token_budget.hpp"

namespace tiersim::config {

namespace {

// In-flight batching runs a prompt whole and the generating requests first, so a budget close to
// the longest prompt holds the batch below max_batch (inflight_batch_limit): valid, and what
// TensorRT-LLM would do with that max_num_tokens, but easy to set by mistake when copying a
// published run (trtllm-bench picks max_num_tokens for its dataset: the shipped trtllm-bench
// scenarios have budget - prompt + 1 >= max_batch). Said for fixed and uniform prompt lengths,
// whose longest prompt the scenario gives; a trace's, a lognormal draw's or a session's (its
// history resent, part of it cached) is known only when the run draws them.
void check_inflight_budget(const ScenarioCheck& c) {
  const Scenario& s = c.scenario();
  const ServingWorkload& w = s.serving;
  if (w.scheduler != ServingWorkload::Scheduler::kInflight || !w.trace.empty() ||
      w.prompt_dist == ServingWorkload::Lengths::kLognormal || sim::synthetic_sessions_apply(w))
    return;
  const int prompt = w.prompt_tokens;
  const int budget = serving_token_budget(w, s.model.max_positions, prompt, 0);
  const int limit = inflight_batch_limit(budget, prompt);
  if (budget < prompt || limit >= w.max_batch) return;  // too small: the run says so
  const std::string running =
      limit == 1 ? std::string("none is generating, so such requests run one at a time")
                 : "at most " + std::to_string(limit - 1) + " are generating, so at most " +
                       std::to_string(limit) + " such requests run at once";
  c.warn(c.given("workload.token_budget") ? "workload.token_budget" : "workload.max_batch",
         "in-flight batching takes the generating requests first, one token each, and a prompt "
         "only whole: with a budget of " +
             std::to_string(budget) + " tokens a " + std::to_string(prompt) +
             "-token prompt starts only while " + running + ", not max_batch " +
             std::to_string(w.max_batch) +
             " (TensorRT-LLM's micro-batch scheduler stops at the first prompt that does not "
             "fit); for max_batch at once give workload.token_budget of at least " +
             std::to_string(prompt + w.max_batch - 1));
}

void check_keys(const ScenarioCheck& c) {
  const Scenario& s = c.scenario();
  const ServingWorkload& w = s.serving;
  const bool rate = w.arrival_rate_per_s > 0;
  if (w.trace.empty() && !rate)
    c.fail("workload.arrival_rate",
           "missing: give workload.arrival_rate (requests/s) or a workload.trace");
  if (!w.trace.empty() && rate)
    c.fail("workload.arrival_rate",
           "a trace gives the arrivals; remove workload.arrival_rate "
           "or workload.trace");
  if (w.think_time_min_s > w.think_time_s)
    c.fail("workload.think_time_min",
           "must not exceed workload.think_time (" + std::to_string(w.think_time_s) +
               " s), the mean gap between a session's turns");
  const std::pair<const char*, std::pair<int, int>> bounds[] = {
      {"workload.prompt_tokens", {w.prompt_tokens_min, w.prompt_tokens}},
      {"workload.output_tokens", {w.output_tokens_min, w.output_tokens}}};
  const ServingWorkload::Lengths dists[] = {w.prompt_dist, w.output_dist};
  for (int i = 0; i < 2; ++i)
    if (dists[i] == ServingWorkload::Lengths::kUniform &&
        bounds[i].second.first > bounds[i].second.second)
      c.fail(std::string(bounds[i].first) + "_min", "must not exceed " +
                                                        std::string(bounds[i].first) + " (" +
                                                        std::to_string(bounds[i].second.second) +
                                                        "), the upper bound of the uniform "
                                                        "distribution");
  // The model's context window, where the catalog gives it (HF config max_position_embeddings):
  // fixed and uniform lengths must fit in it; lognormal draws are truncated to it.
  const LlmSpec& m = s.model;
  if (w.trace.empty() && m.sources.count("max_positions") &&
      w.prompt_dist != ServingWorkload::Lengths::kLognormal &&
      w.output_dist != ServingWorkload::Lengths::kLognormal &&
      w.prompt_tokens + w.output_tokens > m.max_positions)
    c.fail(c.given("workload.output_tokens") ? "workload.output_tokens" : "workload.prompt_tokens",
           "prompt_tokens + output_tokens = " + std::to_string(w.prompt_tokens + w.output_tokens) +
               " exceeds " + m.name + "'s context of " + std::to_string(m.max_positions) +
               " tokens (model.max_positions)");
  if (s.policy.parallelism.pipeline != 1)
    c.fail("policy.parallelism.pipeline",
           "pipeline parallelism is not modelled for serving; use tensor parallelism, and more "
           "GPUs than the tensor degree for data-parallel replicas");
  if (s.hardware.gpu_count % s.policy.parallelism.tensor != 0)
    c.fail("hardware.gpu.count",
           "must be a multiple of tensor = " + std::to_string(s.policy.parallelism.tensor) +
               " (each replica of the model uses tensor GPUs)");
  if (s.policy.kv_cache.gpu < 1.0)
    c.fail("policy.kv_cache",
           "serving keeps the KV cache on the GPU (paged); KV offload to "
           "host memory is modelled for the inference workload only");
  if (s.policy.weights.nvme > 0 && s.hardware.gpu_count > s.policy.parallelism.tensor)
    c.fail("hardware.gpu.count",
           "replicas that share one NVMe array are not modelled; use one "
           "replica (gpu count = tensor) with weights on nvme");
  // The KV cache tiers must fit in what the server has, next to what the run keeps there; `auto`
  // takes what is left (model/capacity.hpp, serving_kv_room: the one rule for both). The
  // execution model's host reserve is not a scenario key, so its default is the run's.
  const auto gb = [](double bytes) { return format::significant(bytes / 1e9, 4); };
  const ServingKvRoom room = serving_kv_room(s, ExecutionModel{});
  // "10 GB of weights, 16 GB of operating system and framework"
  const auto held = [&](const TierMemory& t) {
    std::string text;
    for (const MemoryItem& i : t.items)
      text += (text.empty() ? "" : ", ") + gb(i.bytes) + " GB of " + i.what;
    return text.empty() ? std::string("nothing else") : text;
  };
  const auto check_tier = [&](const char* key, double given, double tier_bytes,
                              const TierMemory& t, const std::string& capacity_text,
                              const char* remedy) {
    if (given == 0) return;
    if (given < 0 && tier_bytes <= 0)
      c.fail(key, "auto leaves no room for the tier: the " + capacity_text + " holds " +
                      held(t) + "; " + remedy);
    if (given > 0 && given + t.required_bytes > t.capacity_bytes)
      c.fail(key, gb(given) + " GB of KV tier exceeds the " + gb(t.capacity_bytes - t.required_bytes) +
                      " GB the " + capacity_text + " leaves after " + held(t) +
                      " (use auto for all of it)");
  };
  if (w.kv_nvme_cache_bytes != 0 && s.hardware.nvme.count <= 0)
    c.fail("workload.kv_nvme_cache", "an NVMe tier needs drives (hardware.nvme.model, count)");
  check_tier("workload.kv_host_cache", w.kv_host_cache_bytes, room.tiers.host_bytes, room.host,
             "host's " + gb(room.host.capacity_bytes) + " GB of DRAM (hardware.host)",
             "raise hardware.host.dram_gb or keep fewer weights on the host (policy.weights)");
  check_tier("workload.kv_nvme_cache", w.kv_nvme_cache_bytes, room.tiers.nvme_bytes, room.nvme,
             gb(room.nvme.capacity_bytes) + " GB of the NVMe array (hardware.nvme)",
             "add drives (hardware.nvme.count) or keep fewer weights on them (policy.weights)");
  // The tiers hold prefix blocks: without prefix caching they would hold nothing.
  const bool tiers = w.kv_tiers();
  const char* tier_key =
      w.kv_host_cache_bytes != 0 ? "workload.kv_host_cache" : "workload.kv_nvme_cache";
  if (tiers && !w.prefix_caching)
    c.fail(tier_key, "a KV tier holds cached prefixes: it needs workload.prefix_caching: true");
  if (tiers && w.scheduler == ServingWorkload::Scheduler::kStatic)
    c.fail(tier_key,
           "prefix caching is modelled for the continuous and chunked schedulers (a paged KV "
           "cache), not for static batches");
  if (!w.gpu_prefix_caching && !tiers && w.prefix_caching)
    c.fail("workload.gpu_prefix_caching",
           "false leaves no tier to cache prefixes in: give workload.kv_host_cache or "
           "kv_nvme_cache, or set workload.prefix_caching: false");
  if (w.warmup_requests >= w.requests)
    c.fail("workload.warmup_requests",
           std::to_string(w.warmup_requests) + " warm-up requests leave none of the " +
               std::to_string(w.requests) +
               " requests (workload.requests) to measure; give fewer than workload.requests");
  if (w.shared_prefixes > 0 && w.shared_prefix_tokens == 0)
    c.fail("workload.shared_prefix_tokens",
           "missing: workload.shared_prefixes needs the length of each shared prompt");
  check_inflight_budget(c);
}

}  // namespace

const WorkloadChecks serving_checks{&check_keys, nullptr};

}  // namespace tiersim::config
