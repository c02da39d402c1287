#include "config/option_rows.hpp"

// Options of the inference workload: the batch and sequence lengths, and FlexGen's command line
// (policy.flexgen.*, policy.schedule flexgen).
namespace tiersim::config {

void inference_option_rows(WorkloadOptionRows& rows) {
  std::vector<Option>& t = rows.workload;
  t.push_back(only(required(integer("workload.batch", 1, "", "sequences decoded together",
                                    F(inference.batch))),
                   kInference));
  t.back().counterpart_of = {"workload.max_batch"};  // serving's sequences running at once
  t.push_back(only(required(integer("workload.prompt_tokens", 1, "", "prompt length per sequence",
                                    F(inference.prompt_tokens))),
                   kInference));
  t.push_back(only(required(integer("workload.gen_tokens", 1, "",
                                    "generated tokens per sequence (the first comes from prefill)",
                                    F(inference.gen_tokens))),
                   kInference));
  t.back().counterpart_of = {"workload.output_tokens"};  // serving's name for it

  // Policy rows.
  std::vector<Option>& p = rows.policy;
  // DeepSpeed's multi-GPU ZeRO-Inference: data-parallel ranks over partitioned (ZeRO-3) weights,
  // and the ZeRO-3 settings that shape its parameter gathers (model/scenario.hpp Zero3Settings).
  // Written to the resolved YAML only when they leave their defaults, so scenarios written
  // before these keys existed keep their resolved text and hash.
  {
    Option o = only(integer("policy.parallelism.data", 1, "1",
                            "data-parallel ranks of DeepSpeed's multi-GPU ZeRO-Inference (ZeRO-3): "
                            "each GPU runs workload.batch / data sequences of its own, holds 1/data "
                            "of every partitioned parameter (on the GPU or offloaded per "
                            "policy.weights) and all-gathers each layer's parameters before it "
                            "runs; hardware.gpu.count = tensor x pipeline x data",
                            F(policy.parallelism.data)),
                    kInference);
    o.emit_when = [](const Scenario& s) { return s.policy.parallelism.data != 1; };
    p.push_back(std::move(o));
  }
  // One key of a family whose rows differ only in these; each family's loop below adds the type,
  // range and emit rule its keys share.
  struct Row {
    const char* key;
    const char* def;
    const char* help;
    std::function<FieldRef(Scenario&)> field;
  };
  const Row zero3_rows[] = {
      {"policy.zero3.param_persistence_threshold", "1e5",
       "stage3_param_persistence_threshold: parameters of at most this many elements stay whole "
       "on every GPU, never partitioned or gathered",
       F(policy.zero3.param_persistence_threshold)},
      {"policy.zero3.prefetch_bucket_size", "5e7",
       "stage3_prefetch_bucket_size: elements of upcoming parameters gathered ahead of use (0 = "
       "no prefetch); sets how many layers the gathers run ahead (policy.prefetch_layers is not "
       "used with policy.parallelism.data > 1)",
       F(policy.zero3.prefetch_bucket_size)},
      {"policy.zero3.max_live_parameters", "1e9",
       "stage3_max_live_parameters: gathered elements allowed in GPU memory at once; the "
       "prefetch takes at most what the layer computing leaves of it",
       F(policy.zero3.max_live_parameters)},
  };
  for (const Row& r : zero3_rows) {
    Option o = only(number(r.key, "elements", 0, 1e15, false, r.def, r.help, r.field), kInference);
    const std::string key = r.key;
    o.emit_when = [key](const Scenario& s) {
      // One GPU: only for a stack whose gather follows DeepSpeed v0.7's coordinator
      // (model/stack.hpp zero3_gather_copies_v07), or where the scenario set it.
      return s.policy.parallelism.data != 1 || s.policy.stack.zero3_gather_copies_v07 ||
             s.provenance.source(key) == "override";
    };
    p.push_back(std::move(o));
  }
  // FlexGen's command line (FMInference/FlexiGen flexgen/flex_opt.py add_parser_arguments and the
  // Policy dataclass), schedule flexgen only. The six percentages are its --percent numbers; the
  // disk share of each pair is the rest of 100 (Policy.w_disk_percent, cache_disk_percent).
  const std::pair<const char*, const char*> percents[] = {
      {"w_gpu_percent", "percentage of weights on the GPU (--percent, 1st)"},
      {"w_cpu_percent", "percentage of weights on the CPU (--percent, 2nd); disk = the rest"},
      {"cache_gpu_percent", "percentage of the KV cache on the GPU (--percent, 3rd)"},
      {"cache_cpu_percent",
       "percentage of the KV cache on the CPU (--percent, 4th); disk = the rest"},
      {"act_gpu_percent", "percentage of activations on the GPU (--percent, 5th)"},
      {"act_cpu_percent",
       "percentage of activations on the CPU (--percent, 6th); activations must be 100% on one "
       "device"}};
  const std::function<FieldRef(Scenario&)> percent_fields[] = {
      F(policy.flexgen.w_gpu_percent),     F(policy.flexgen.w_cpu_percent),
      F(policy.flexgen.cache_gpu_percent), F(policy.flexgen.cache_cpu_percent),
      F(policy.flexgen.act_gpu_percent),   F(policy.flexgen.act_cpu_percent)};
  const char* percent_defaults[] = {"100", "0", "100", "0", "100", "0"};
  for (int i = 0; i < 6; ++i)
    p.push_back(only(number(std::string("policy.flexgen.") + percents[i].first, "%", 0, 100, false,
                            percent_defaults[i], percents[i].second, percent_fields[i]),
                     kInference));
  p.push_back(only(integer("policy.flexgen.gpu_batch_size", 1, "4",
                           "sequences per GPU batch (--gpu-batch-size); workload.batch must be "
                           "gpu_batch_size x num_gpu_batches",
                           F(policy.flexgen.gpu_batch_size)),
                   kInference));
  p.push_back(only(integer("policy.flexgen.num_gpu_batches", 1, "1",
                           "GPU batches served by each loaded layer (--num-gpu-batches)",
                           F(policy.flexgen.num_gpu_batches)),
                   kInference));
  const Row flexgen_flags[] = {
      {"policy.flexgen.cpu_cache_compute", "false",
       "decode attention on the CPU in fp32 over the CPU/disk KV cache (--cpu-cache-compute); "
       "false: the K/V prefix is copied to the GPU every step",
       F(policy.flexgen.cpu_cache_compute)},
      {"policy.flexgen.overlap", "true",
       "load the next layer's weights and the next GPU batch's cache while computing (--overlap)",
       F(policy.flexgen.overlap)},
      {"policy.flexgen.pin_weight", "true",
       "CPU-resident weight matrices in pinned memory (--pin-weight); false: each load stages "
       "through a fresh pinned copy",
       F(policy.flexgen.pin_weight)},
      {"policy.flexgen.compress_weight", "false",
       "4-bit group-wise weight matrices, group 64 (--compress-weight)",
       F(policy.flexgen.compress_weight)},
      {"policy.flexgen.debug_fewer_batch", "false",
       "--debug-mode fewer_batch: the prefill is timed, each decode token is projected from "
       "layers 10..19 of the first one (FlexGen's benchmark mode)",
       F(policy.flexgen.debug_fewer_batch)},
      {"policy.flexgen.compress_cache", "false",
       "4-bit group-wise KV cache, group 64 (--compress-cache)", F(policy.flexgen.compress_cache)},
  };
  for (const Row& r : flexgen_flags)
    p.push_back(only(flag(r.key, r.def, r.help, r.field), kInference));
}

}  // namespace tiersim::config
