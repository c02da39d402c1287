#include "config/option_rows.hpp"

// Options of the serving workload.
namespace tiersim::config {

void serving_option_rows(WorkloadOptionRows& rows) {
  using VT = ValueType;
  std::vector<Option>& t = rows.workload;
  // Serving (sim/workloads/serving/): the request stream, the scheduler and the latency targets.
  // The scheduler is a workload key, not a policy key: it is part of how the service is offered
  // (and policy.schedule already names the weight-fetch schedule of offloaded inference).
  const std::vector<std::string> length_dists = {"fixed", "uniform", "lognormal"};
  t.push_back(
      // Each request's state is held for the whole run (1e9 ended in bad_alloc); ten million is
      // hours of traffic at the Azure traces' rates and minutes of simulation.
      only(range(integer("workload.requests", 1, "1000",
                         "requests to simulate (with a trace: its first N rows)",
                         F(serving.requests)),
                 1, 10'000'000),
           kServing));
  t.push_back(only(optional(number("workload.arrival_rate", "requests/s", 0, kInf, true, "",
                                   "mean arrival rate (required without workload.trace)",
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
  t.push_back(only(choice("workload.prompt_dist", length_dists, "fixed",
                          "prompt lengths: fixed (prompt_tokens), uniform in [prompt_tokens_min, "
                          "prompt_tokens], lognormal with median prompt_tokens",
                          E(serving.prompt_dist)),
                   kServing));
  t.push_back(only(integer("workload.prompt_tokens", 1, "512",
                           "prompt length (fixed), upper bound (uniform) or median (lognormal)",
                           F(serving.prompt_tokens)),
                   kServing));
  t.push_back(only(integer("workload.prompt_tokens_min", 1, "1", "uniform: shortest prompt",
                           F(serving.prompt_tokens_min)),
                   kServing));
  t.push_back(
      only(number("workload.prompt_sigma", "", 0, kInf, false, "1",
                  "lognormal: standard deviation of ln(prompt length)", F(serving.prompt_sigma)),
           kServing));
  t.push_back(
      only(choice("workload.output_dist", length_dists, "fixed",
                  "output lengths: as prompt_dist, with output_tokens", E(serving.output_dist)),
           kServing));
  t.push_back(only(integer("workload.output_tokens", 1, "128",
                           "generated tokens per request (fixed), upper bound (uniform) or median "
                           "(lognormal); the first comes out of prefill",
                           F(serving.output_tokens)),
                   kServing));
  t.push_back(only(integer("workload.output_tokens_min", 1, "1", "uniform: shortest output",
                           F(serving.output_tokens_min)),
                   kServing));
  t.push_back(
      only(number("workload.output_sigma", "", 0, kInf, false, "1",
                  "lognormal: standard deviation of ln(output length)", F(serving.output_sigma)),
           kServing));
  t.push_back(only(choice("workload.scheduler", {"static", "continuous", "chunked"}, "continuous",
                          "static: batches run to completion (ZeRO-Inference, FlexGen); "
                          "continuous: iteration-level batching with a paged KV cache (Orca, "
                          "vLLM); chunked: continuous with chunked prefill (Sarathi-Serve)",
                          E(serving.scheduler)),
                   kServing));
  t.push_back(only(integer("workload.max_batch", 1, "256",
                           "requests per batch (static) or running at once (vLLM max_num_seqs)",
                           F(serving.max_batch)),
                   kServing));
  t.push_back(only(range(opt("workload.max_wait", VT::kDuration, "s", "0s",
                             "static: longest the oldest queued request waits for a full batch",
                             F(serving.max_wait_s)),
                         0, kInf),
                   kServing));
  t.push_back(only(integer("workload.token_budget", 0, "0",
                           "tokens per iteration; 0 = the scheduler's default (chunked: 512; "
                           "continuous: max(context, 2048))",
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

}

}  // namespace tiersim::config
