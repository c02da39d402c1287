// Load-time checks of the inference workload (config/scenario_check.hpp): ZeRO-Inference's
// data-parallel ranks, FlexGen's policy and the length of the simulation.
#include <algorithm>
#include <string>
#include <vector>

#include "config/scenario_check.hpp"
#include "config/yaml_reader.hpp"
#include "model/stack.hpp"
#include "sim/workloads/inference/flexgen_keys.hpp"

namespace tiersim::config {

namespace {

// Upper bound on the layer steps of one inference simulation (see check_layout).
constexpr double kMaxInferenceLayerSteps = 1 << 25;

// FlexGen's policy as its runtime accepts it (FMInference/FlexiGen flexgen/flex_opt.py).
void check_flexgen(const ScenarioCheck& c) {
  const Scenario& s = c.scenario();
  const Policy& pol = s.policy;
  const FlexGenPolicy& fg = pol.flexgen;
  if (pol.schedule != Schedule::kFlexGen) {
    for (const std::string& path : c.given_under("policy.flexgen."))
      c.fail(path, "applies to policy.schedule: flexgen only");
    return;
  }
  // First the model: no other setting makes FlexGen run another family, so it is the one to fix.
  if (s.model.family != "opt")
    c.fail(c.given("model.hf_config") ? "model.hf_config" : "model.name",
           "FlexGen's runtime (flex_opt.py) runs OPT models only, not " +
               (s.model.family.empty() ? std::string("this model") : s.model.family));
  // The keys FlexGen's policy replaces: one source for each setting.
  for (const std::string_view key : kFlexGenReplacedKeys)
    if (c.given(std::string(key)))
      c.fail(std::string(key), std::string("not used with policy.schedule: flexgen; FlexGen's "
                                           "policy is set by the policy.flexgen keys"));
  if (pol.parallelism.tensor != 1 || pol.parallelism.pipeline != 1 ||
      pol.parallelism.micro_batches != 1)
    c.fail("policy.parallelism.tensor",
           "flexgen is modelled on one GPU (the bench_suite cases); no tensor or pipeline "
           "parallelism");
  struct PercentPair {
    const char* gpu_key;
    const char* cpu_key;
    double sum;
  };
  const PercentPair pairs[] = {
      {"policy.flexgen.w_gpu_percent", "policy.flexgen.w_cpu_percent",
       fg.w_gpu_percent + fg.w_cpu_percent},
      {"policy.flexgen.cache_gpu_percent", "policy.flexgen.cache_cpu_percent",
       fg.cache_gpu_percent + fg.cache_cpu_percent},
      {"policy.flexgen.act_gpu_percent", "policy.flexgen.act_cpu_percent",
       fg.act_gpu_percent + fg.act_cpu_percent}};
  for (const auto& p : pairs)
    if (p.sum > 100 + 1e-9)
      c.fail(c.given(p.cpu_key) ? p.cpu_key : p.gpu_key, "the GPU and CPU percentages sum to " +
                                                             format_number(p.sum) +
                                                             "; at most 100 (the rest is on disk)");
  // OptLM.__init__ raises NotImplementedError unless the activations are all on one device; the
  // cost model likewise forces hg + hc == 1 (experimental/cost_model.py, solve_lp).
  const bool act_one_device = fg.act_gpu_percent == 100 || fg.act_cpu_percent == 100 ||
                              (fg.act_gpu_percent == 0 && fg.act_cpu_percent == 0);
  const char* act_key = c.given("policy.flexgen.act_cpu_percent")
                            ? "policy.flexgen.act_cpu_percent"
                            : "policy.flexgen.act_gpu_percent";
  if (!act_one_device)
    c.fail(act_key,
           "FlexGen keeps activations 100% on one device (OptLM.__init__ raises otherwise): "
           "act_gpu_percent 100, act_cpu_percent 100, or both 0 (disk)");
  if (fg.act_gpu_percent == 0 && fg.act_cpu_percent == 0)
    c.fail(act_key,
           "activations on disk are not supported by FlexGen's runtime (cost_model.py: "
           "\"runtime does not support hidden on disk\")");
  // A compressed cache lives on one device only (assert in SelfAttention.init_cache_one_gpu_batch).
  if (fg.compress_cache && fg.cache_gpu_percent != 100 && fg.cache_cpu_percent != 100 &&
      fg.cache_disk_percent() != 100)
    c.fail("policy.flexgen.compress_cache",
           "a compressed KV cache must be 100% on one device (FlexGen asserts it)");
  // OptLM.generate asserts that the number of prompts is gpu_batch_size x num_gpu_batches.
  const long long block =
      static_cast<long long>(fg.gpu_batch_size) * static_cast<long long>(fg.num_gpu_batches);
  if (s.inference.batch != block)
    c.fail("workload.batch", "must be policy.flexgen.gpu_batch_size x num_gpu_batches = " +
                                 std::to_string(block) + " (FlexGen's OptLM.generate asserts it)");
  const bool disk = fg.w_disk_percent() > 1e-9 || fg.cache_disk_percent() > 1e-9;
  if (disk && s.hardware.nvme.count <= 0)
    c.fail(fg.w_disk_percent() > 1e-9 ? "policy.flexgen.w_cpu_percent"
                                      : "policy.flexgen.cache_cpu_percent",
           "a disk share needs a drive (hardware.nvme.model, count >= 1)");
}

void check_layout(const ScenarioCheck& c) {
  const Scenario& s = c.scenario();
  const Policy& pol = s.policy;
  const LlmSpec& m = s.model;
  // ZeRO-Inference's data-parallel ranks: one source for the prefetch depth (the ZeRO-3 bucket),
  // and the ZeRO-3 settings only where there are partitions to gather, or where the stack's
  // one-GPU gather follows DeepSpeed v0.7's coordinator, whose calls they set (model/stack.hpp
  // zero3_gather_copies_v07).
  if (pol.parallelism.data > 1 && !pol.stack.zero3_partitioning) {
    std::vector<std::string> with;
    for (const std::string& name : stack_names())
      if (execution_stack(name).zero3_partitioning) with.push_back(name);
    c.fail("policy.parallelism.data",
           "policy.stack " + pol.stack.name +
               " has no partitioned data parallelism (DeepSpeed ZeRO-3's, each rank holding a "
               "1/N share of the weights and all-gathering every layer); use a stack that has "
               "it (" +
               join(with) + "), or run one GPU per scenario");
  }
  if (pol.parallelism.data > 1 && c.given("policy.prefetch_layers"))
    c.fail("policy.prefetch_layers",
           "not used with policy.parallelism.data > 1: the gathers run ahead as DeepSpeed's "
           "policy.zero3.prefetch_bucket_size and policy.zero3.max_live_parameters allow");
  // The persistence threshold also decides, on one GPU, what a stack with ZeRO-3's persistence
  // fetches (model/stack.hpp zero3_persistence).
  if (pol.parallelism.data == 1 && !pol.stack.zero3_gather_copies_v07)
    for (const std::string& path : c.given_under("policy.zero3.")) {
      if (path == "policy.zero3.param_persistence_threshold") {
        if (!pol.stack.zero3_persistence)
          c.fail(path, "not used by policy.stack " + pol.stack.name +
                           ", whose offload keeps no parameter on the GPU between passes "
                           "(no ZeRO-3 persistence)");
        continue;
      }
      c.fail(path,
             "applies to policy.parallelism.data > 1 only (ZeRO-Inference's "
             "partitioned weights over several GPUs), or to a stack whose one-GPU gather "
             "follows DeepSpeed v0.7's coordinator (policy.stack hf-deepspeed-0.7)");
    }
  check_flexgen(c);
  if (pol.schedule == Schedule::kFlexGenBlock && s.inference.batch % pol.gpu_batches != 0)
    c.fail("policy.gpu_batches",
           "must divide workload.batch (" + std::to_string(s.inference.batch) + ")");
  const InferenceWorkload& w = s.inference;
  const long long positions = static_cast<long long>(w.prompt_tokens) + w.gen_tokens;
  // Only where the catalog (or an override) gives the model's context length; a spec without a
  // source keeps the struct's default, which is not a fact about this model. Past it, a learned
  // position table has no row, and some stacks refuse (ExecutionStack::enforces_trained_context);
  // rotary and ALiBi models otherwise run (TensorRT-LLM's published GPT-J 6B and Falcon-180B
  // rows at 2,048 + 2,048 tokens, both models trained to 2,048).
  if (m.sources.count("max_positions") && positions > m.max_positions &&
      (m.learned_positions || pol.stack.enforces_trained_context))
    c.fail("workload.gen_tokens",
           "workload.prompt_tokens + workload.gen_tokens = " + std::to_string(positions) +
               " exceeds the model's maximum positions (context length) of " +
               std::to_string(m.max_positions) + " (model.max_positions), which " +
               (m.learned_positions ? m.name + "'s learned position table cannot go past"
                                    : "policy.stack " + pol.stack.name + " refuses to go past"));
  // The simulator walks every layer once per generated token (per micro-batch and GPU batch),
  // a few events each: time grows with this product. The limit is above every real model at its
  // full context (126 layers x 131072 tokens = 1.65e7 for Llama-3.1-405B) and about a minute of
  // simulation.
  const int micro = std::max(1, std::min(pol.parallelism.micro_batches, w.batch));
  const int gpu_batches = pol.batches_per_fetch();
  const double steps = (m.layers + 2.0) * w.gen_tokens * micro * gpu_batches;
  if (steps > kMaxInferenceLayerSteps)
    c.fail("workload.gen_tokens",
           "model.layers + 2 (" + std::to_string(m.layers + 2) + ") x workload.gen_tokens (" +
               std::to_string(w.gen_tokens) + ") x micro-batches (" + std::to_string(micro) +
               ") x GPU batches (" + std::to_string(gpu_batches) + ") = " + format_number(steps) +
               " simulated layer steps, above the limit of " +
               format_number(kMaxInferenceLayerSteps));
}

}  // namespace

const WorkloadChecks inference_checks{nullptr, &check_layout};

}  // namespace tiersim::config
