#include "config/option_rows.hpp"

// Options of the serving workload.
namespace tiersim::config {

void serving_option_rows(WorkloadOptionRows& rows) {
  using VT = ValueType;
  std::vector<Option>& t = rows.workload;
  // Serving (sim/workloads/serving/): the request stream, the scheduler and the latency targets.
  // The scheduler is a workload key, not a policy key: it is part of how the service is offered
  // (and policy.schedule already names the weight-fetch schedule of offloaded inference).
  t.push_back(
      // Each request's state is held for the whole run (1e9 ended in bad_alloc); ten million is
      // hours of traffic at the Azure traces' rates and minutes of simulation.
      only(range(integer("workload.requests", 1, "1000",
                         "requests to simulate (with a trace: its first N rows)",
                         F(serving.requests)),
                 1, 10'000'000),
           kServing));
  t.push_back(only(optional(number("workload.arrival_rate", "requests/s", 0, kInf, true, "",
                                   "mean arrival rate (required without workload.trace); the "
                                   "first request arrives at time 0, each gap after a request, as "
                                   "serving benchmarks send them",
                                   F(serving.arrival_rate_per_s))),
                   kServing));
  t.push_back(only(number("workload.arrival_cv", "", 0, kInf, false, "1",
                          "coefficient of variation of the gamma inter-arrival gaps: 1 = Poisson, "
                          "> 1 bursty, 0 evenly spaced",
                          F(serving.arrival_cv)),
                   kServing));
  t.push_back(only(optional(opt("workload.trace", VT::kPath, "", "",
                                "request trace CSV: Azure LLM inference trace (TIMESTAMP, "
                                "ContextTokens, GeneratedTokens; 2023 or 2024 timestamps) or "
                                "arrival_s,prompt_tokens,output_tokens",
                                F(serving.trace))),
                   kServing));
  // Prompt and output lengths are drawn by the same rule (request_stream.cpp draw_length), so
  // each has the same four keys, workload.<name>_dist, _tokens, _tokens_min and _sigma, which
  // differ only in the name, the default length and the help of the first two.
  struct LengthRows {
    std::string name;
    const char* tokens_default;
    const char* dist_help;
    const char* tokens_help;
    std::function<FieldRef(Scenario&)> dist, tokens, tokens_min, sigma;
  };
  const LengthRows length_rows[] = {
      {"prompt", "512",
       "prompt lengths: fixed (prompt_tokens), uniform in [prompt_tokens_min, prompt_tokens], "
       "lognormal with median prompt_tokens",
       "prompt length (fixed), upper bound (uniform) or median (lognormal)", E(serving.prompt_dist),
       F(serving.prompt_tokens), F(serving.prompt_tokens_min), F(serving.prompt_sigma)},
      {"output", "128", "output lengths: as prompt_dist, with output_tokens",
       "generated tokens per request (fixed), upper bound (uniform) or median (lognormal); the "
       "first comes out of prefill",
       E(serving.output_dist), F(serving.output_tokens), F(serving.output_tokens_min),
       F(serving.output_sigma)},
  };
  for (const LengthRows& r : length_rows) {
    const std::string key = "workload." + r.name;
    t.push_back(
        only(choice(key + "_dist", {"fixed", "uniform", "lognormal"}, "fixed", r.dist_help, r.dist),
             kServing));
    t.push_back(
        only(integer(key + "_tokens", 1, r.tokens_default, r.tokens_help, r.tokens), kServing));
    // Batch inference calls the output gen_tokens.
    if (r.name == "output") t.back().counterpart_of = {"workload.gen_tokens"};
    t.push_back(
        only(integer(key + "_tokens_min", 1, "1", "uniform: shortest " + r.name, r.tokens_min),
             kServing));
    t.push_back(only(number(key + "_sigma", "", 0, kInf, false, "1",
                            "lognormal: standard deviation of ln(" + r.name + " length)", r.sigma),
                     kServing));
  }
  t.push_back(only(
      choice("workload.scheduler", {"static", "continuous", "chunked", "inflight"}, "continuous",
             "static: batches run to completion (ZeRO-Inference, FlexGen); "
             "continuous: iteration-level batching with a paged KV cache (Orca, "
             "vLLM); chunked: continuous with chunked prefill (Sarathi-Serve); "
             "inflight: TensorRT-LLM's in-flight batching without context chunking "
             "(decodes, then whole prompts, up to token_budget = max_num_tokens)",
             E(serving.scheduler)),
      kServing));
  t.push_back(only(integer("workload.max_batch", 1, "256",
                           "requests per batch (static) or running at once (vLLM max_num_seqs)",
                           F(serving.max_batch)),
                   kServing));
  t.back().counterpart_of = {"workload.batch"};
  t.push_back(only(range(opt("workload.max_wait", VT::kDuration, "s", "0s",
                             "static: longest the oldest queued request waits for a full batch",
                             F(serving.max_wait_s)),
                         0, kInf),
                   kServing));
  t.push_back(only(integer("workload.token_budget", 0, "0",
                           "tokens per iteration; 0 = the scheduler's default (chunked: 512; "
                           "continuous: max(context, 2048); inflight: 8192)",
                           F(serving.token_budget)),
                   kServing));
  t.push_back(only(integer("workload.block_tokens", 1, "16", "tokens per paged KV cache block",
                           F(serving.block_tokens)),
                   kServing));
  t.push_back(only(number("workload.gpu_memory_utilization", "", 0, 1, true, "0.9",
                          "share of each GPU's memory the server uses (weights, activations, "
                          "KV cache)",
                          F(serving.gpu_memory_utilization)),
                   kServing));
  t.push_back(only(choice("workload.preemption", {"recompute", "swap"}, "recompute",
                          "what a request preempted for KV blocks loses (vLLM preemption_mode): "
                          "recompute: its cache, prefilled again on resumption; swap: nothing, its "
                          "blocks are copied to host DRAM over PCIe and back before it resumes "
                          "(vLLM's V0 engine; V1 always recomputes)",
                          E(serving.preemption)),
                   kServing));
  const std::size_t admission_row = t.size();
  t.push_back(only(
      choice("workload.kv_admission", {"stack", "prompt_blocks", "guaranteed_no_evict"}, "stack",
             "how requests enter the KV pool: stack: policy.stack's rule; "
             "prompt_blocks: when the prompt's blocks are free, preempting the newest "
             "request when a decode finds none (vLLM); guaranteed_no_evict: only when "
             "the prompt's and the whole output's blocks are free beyond the running "
             "requests' needs, never preempting (TensorRT-LLM's default capacity "
             "scheduler policy)",
             E(serving.kv_admission)),
      kServing));
  t.push_back(only(range(opt("workload.swap_space", VT::kSize, "bytes", "4GiB",
                             "host DRAM per GPU for swapped KV blocks (vLLM swap_space, 4 GiB "
                             "default); a swap-out that does not fit aborts the run, as vLLM does",
                             F(serving.swap_space_bytes)),
                         0, kInf),
                   kServing));
  t.push_back(
      only(optional(range(opt("workload.slo_ttft", VT::kDuration, "s", "",
                              "time-to-first-token target for goodput", F(serving.slo_ttft_s)),
                          0, kInf, true)),
           kServing));
  t.push_back(only(optional(range(opt("workload.slo_tbt", VT::kDuration, "s", "",
                                      "time-between-tokens target for goodput (a request's "
                                      "mean gap between its output tokens)",
                                      F(serving.slo_tbt_s)),
                                  0, kInf, true)),
                   kServing));
  t.push_back(
      only(integer("workload.seed", 0, "1",
                   "random seed of the request stream (same seed, same requests)", F(serving.seed)),
           kServing));
  t.push_back(only(optional(range(
                       opt("workload.warmup_requests", VT::kInt, "requests", "",
                           "the first requests in arrival order, left out of the latency, SLO, "
                           "queue-stability and prefix-hit metrics (the warm-up of the queue and "
                           "the KV cache); fewer than workload.requests. Unset: requests / 20 "
                           "where requests carry prefix structure (turns, shared prefixes, a "
                           "Mooncake or conversation trace), else 0 (a run from an empty server, "
                           "as published serving benchmarks measure)",
                           F(serving.warmup_requests)),
                       0, kInf)),
                   kServing));

  // Prefix reuse (sim/workloads/serving/prefix_stream.hpp) and the KV cache tiers
  // (sim/workloads/serving/kv_tiers.hpp).
  const std::size_t first_prefix_row = t.size();
  t.push_back(only(number("workload.turns", "turns", 1, kInf, false, "1",
                          "synthetic conversations: mean turns per session (geometric); each "
                          "turn's prompt is the history plus new tokens; 1 = single requests",
                          F(serving.turns)),
                   kServing));
  t.push_back(only(range(opt("workload.think_time", VT::kDuration, "s", "30s",
                             "synthetic conversations: mean time from a turn's arrival to the "
                             "next turn's (exponential)",
                             F(serving.think_time_s)),
                         0, kInf),
                   kServing));
  const std::size_t think_min_row = t.size();
  t.push_back(only(range(opt("workload.think_time_min", VT::kDuration, "s", "0s",
                             "synthetic conversations: shortest time from a turn's arrival to "
                             "the next turn's; a gap is think_time_min plus an exponential with "
                             "mean think_time - think_time_min (a coding agent's next call waits "
                             "for its answer and its tool); at most think_time",
                             F(serving.think_time_min_s)),
                         0, kInf),
                   kServing));
  t.push_back(only(integer("workload.shared_prefixes", 0, "0",
                           "synthetic: shared system prompts in the pool (0 = none); each session "
                           "draws one with a Zipf popularity",
                           F(serving.shared_prefixes)),
                   kServing));
  t.push_back(only(integer("workload.shared_prefix_tokens", 0, "0",
                           "synthetic: tokens of each shared system prompt",
                           F(serving.shared_prefix_tokens)),
                   kServing));
  t.push_back(only(number("workload.prefix_zipf", "", 0, kInf, false, "1",
                          "Zipf exponent of the shared prompts' popularity (rank k drawn with "
                          "weight k^-s)",
                          F(serving.prefix_zipf)),
                   kServing));
  t.push_back(only(integer("workload.prefix_block_tokens", 1, "512",
                           "tokens per hashed KV cache block, the unit of prefix reuse and of the "
                           "DRAM and NVMe tiers (Mooncake traces: 512; LMCache chunk_size 256)",
                           F(serving.prefix_block_tokens)),
                   kServing));
  t.push_back(only(flag("workload.prefix_caching", "true",
                        "reuse the KV cache of a request's cached prefix blocks instead of "
                        "recomputing them (vLLM enable_prefix_caching)",
                        F(serving.prefix_caching)),
                   kServing));
  const std::size_t gpu_prefix_row = t.size();
  t.push_back(only(flag("workload.gpu_prefix_caching", "true",
                        "keep freed prefix blocks in the GPU's paged pool for reuse; false: "
                        "cached prefixes come only from the DRAM and NVMe tiers (vLLM "
                        "--no-enable-prefix-caching with a KV offloading connector)",
                        F(serving.gpu_prefix_caching)),
                   kServing));
  // `auto` sizes a tier from the memory model (model/capacity.hpp, serving_kv_tiers): all the
  // DRAM or drive space the run leaves free. None of the modelled systems sizes its tier so by
  // default: LMCache's max_local_cpu_size defaults to 5 GB and max_local_disk_size to 0 (LMCache
  // docs, configuration); vLLM's OffloadingConnector requires cpu_bytes_to_use
  // (vllm/v1/kv_offload/cpu.py, CPUOffloadingSpec); SGLang HiCache sizes its host pool as
  // --hicache-ratio x the GPU's KV pool, or --hicache-size GB (SGLang docs, "HiCache Best
  // Practices"). `auto` answers "the most this server could hold".
  const auto auto_size = [](Option o) {
    o.accepts_auto = true;
    return o;
  };
  t.push_back(only(auto_size(range(opt("workload.kv_host_cache", VT::kSize, "bytes", "0",
                                       "host DRAM tier for KV blocks, per server (0 = none); "
                                       "auto = the host's DRAM less what the run keeps there "
                                       "(weights, pinned buffers, swap space, the OS reserve)",
                                       F(serving.kv_host_cache_bytes)),
                                   0, kInf)),
                   kServing));
  t.push_back(only(auto_size(range(opt("workload.kv_nvme_cache", VT::kSize, "bytes", "0",
                                       "NVMe tier for KV blocks, per server, on the hardware.nvme "
                                       "array (0 = none); auto = the drives' capacity less the "
                                       "weights stored on them",
                                       F(serving.kv_nvme_cache_bytes)),
                                   0, kInf)),
                   kServing));
  t.push_back(only(choice("workload.kv_write", {"write_through", "write_back"}, "write_through",
                          "when a block reaches the lower tiers: write_through: as soon as it is "
                          "computed (SGLang HiCache write_through, LMCache store); write_back: "
                          "when the tier above evicts it",
                          E(serving.kv_write)),
                   kServing));
  t.push_back(only(choice("workload.kv_load", {"always", "if_faster"}, "always",
                          "a prefix found on the NVMe tier: always: loaded (vLLM's KV connectors "
                          "and LMCache load every hit); if_faster: loaded only when the array "
                          "reads it sooner than prefill recomputes it, else recomputed from the "
                          "first block only the NVMe tier holds (an all-or-nothing, per-request "
                          "form of the trade-off that Cake, Jin et al., ICML 2025, "
                          "arXiv:2410.03065, schedules chunk by chunk, loading and computing at "
                          "once)",
                          E(serving.kv_load)),
                   kServing));
  // These keys go into the resolved YAML (and so the scenario's hash) only where one of them is
  // not at its default: scenarios without prefix reuse resolve as they did before the keys existed.
  const auto in_use = [](const Scenario& s) {
    const ServingWorkload& w = s.serving;
    const ServingWorkload d;
    return w.turns != d.turns || w.think_time_s != d.think_time_s ||
           w.shared_prefixes != d.shared_prefixes ||
           w.shared_prefix_tokens != d.shared_prefix_tokens || w.prefix_zipf != d.prefix_zipf ||
           w.prefix_block_tokens != d.prefix_block_tokens ||
           w.prefix_caching != d.prefix_caching ||
           w.kv_host_cache_bytes != d.kv_host_cache_bytes ||
           w.kv_nvme_cache_bytes != d.kv_nvme_cache_bytes || w.kv_write != d.kv_write ||
           w.kv_load != d.kv_load;
  };
  for (std::size_t i = first_prefix_row; i < t.size(); ++i) t[i].emit_when = in_use;
  // Added later than the others: each goes in only where it is not at its default, so that the
  // scenarios that set the other keys keep their hashes.
  t[gpu_prefix_row].emit_when = [](const Scenario& s) { return !s.serving.gpu_prefix_caching; };
  t[think_min_row].emit_when = [](const Scenario& s) { return s.serving.think_time_min_s > 0; };
  t[admission_row].emit_when = [](const Scenario& s) {
    return s.serving.kv_admission != ServingWorkload::Admission::kStack;
  };
}

}  // namespace tiersim::config
