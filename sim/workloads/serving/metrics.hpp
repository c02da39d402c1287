#pragma once
// The serving workload's own metrics (sim/metrics.hpp: the handle type, and the metrics several
// workloads share). sim/metrics.cpp lists them in `tiersim schema --metrics`.
#include "sim/metrics.hpp"

namespace tiersim::sim::metric {

// Serving (requests arriving over time; sim/workloads/serving/). Latencies are measured from

// each request's arrival; percentiles are nearest-rank over the measured requests, those after
// the warm-up (workload.warmup_requests) (TBT: over every gap between consecutive output tokens
// of every measured request).
inline constexpr MetricDecl kRequestsCompleted{
    "requests_completed", "requests",
    "requests served (all of them: the run ends when the last "
    "one finishes)",
    "serving"};
inline constexpr MetricDecl kWarmupRequests{
    "warmup_requests", "requests",
    "the first requests in arrival order left out of the latency, SLO, queue-stability and "
    "prefix-hit metrics (workload.warmup_requests); present where the run has a warm-up or "
    "prefix structure. Throughput, utilisation, energy and tier writes cover the whole run",
    "serving"};
inline constexpr MetricDecl kRequestsMeasured{
    "requests_measured", "requests",
    "requests the latency, SLO, queue-stability and prefix-hit metrics count: "
    "requests_completed - warmup_requests",
    "serving"};
inline constexpr MetricDecl kRequestsPerS{"requests_per_s", "requests/s",
                                          "requests_completed / total_s", "serving"};
inline constexpr MetricDecl kGoodputRequestsPerS{
    "goodput_requests_per_s", "requests/s",
    "requests meeting every latency target given (workload.slo_ttft on TTFT, workload.slo_tbt on "
    "the request's time per output token) / total_s (DistServe's goodput); with a warm-up, the "
    "measured requests' share within the targets x requests_per_s",
    "serving"};
inline constexpr MetricDecl kSloAttainmentPct{
    "slo_attainment_pct", "%",
    "share of the measured requests (after the warm-up) meeting every latency target given",
    "serving"};
inline constexpr MetricDecl kOfferedRateRequestsPerS{
    "offered_rate_requests_per_s", "requests/s",
    "arrival rate offered to the server: workload.arrival_rate, or a trace's requests over the "
    "span of its arrivals",
    "serving"};
inline constexpr MetricDecl kCapacityRequestsPerS{
    "capacity_requests_per_s", "requests/s",
    "highest arrival rate sustained within the SLO and with a stable queue (`tiersim capacity` on "
    "a serving scenario; plans with capacity_search report the run at this rate)",
    "serving"};
inline constexpr MetricDecl kQueueDelayDriftS{
    "queue_delay_drift_s", "s",
    "mean queueing delay of the last third of the requests (arrival order) minus that of the "
    "middle third: about 0 when the queue is stable, growing with the run when arrivals outpace "
    "service (tiersim capacity's stability test)",
    "serving"};
inline constexpr MetricDecl kQueueDelayMeanS{
    "queue_delay_mean_s", "s",
    "mean time from arrival to the first iteration that works on the "
    "request (scheduling delay)",
    "serving"};
inline constexpr MetricDecl kQueueDelayP50S{"queue_delay_p50_s", "s", "median queueing delay",
                                            "serving"};
inline constexpr MetricDecl kQueueDelayP99S{"queue_delay_p99_s", "s",
                                            "99th percentile of the queueing delay", "serving"};
inline constexpr MetricDecl kQueueDelayMaxS{"queue_delay_max_s", "s", "longest queueing delay",
                                            "serving"};
inline constexpr MetricDecl kTtftMeanS{
    "ttft_mean_s", "s",
    "mean time to first token: arrival to the end of the iteration that "
    "completes the request's prefill",
    "serving"};
inline constexpr MetricDecl kTtftP50S{"ttft_p50_s", "s", "median time to first token", "serving"};
inline constexpr MetricDecl kTtftP90S{"ttft_p90_s", "s",
                                      "90th percentile of the time to first token", "serving"};
inline constexpr MetricDecl kTtftP99S{"ttft_p99_s", "s",
                                      "99th percentile of the time to first token", "serving"};
inline constexpr MetricDecl kTtftMaxS{"ttft_max_s", "s", "longest time to first token", "serving"};
inline constexpr MetricDecl kTbtMeanS{
    "tbt_mean_s", "s",
    "mean time between consecutive output tokens of a request, over every "
    "token after the first (stalls from preemption included)",
    "serving"};
inline constexpr MetricDecl kTbtP50S{"tbt_p50_s", "s",
                                     "median time between tokens (to 0.1%: log-binned)", "serving"};
inline constexpr MetricDecl kTbtP90S{
    "tbt_p90_s", "s", "90th percentile of the time between tokens (to 0.1%)", "serving"};
inline constexpr MetricDecl kTbtP99S{
    "tbt_p99_s", "s", "99th percentile of the time between tokens (to 0.1%)", "serving"};
inline constexpr MetricDecl kTbtMaxS{"tbt_max_s", "s",
                                     "longest time between two tokens of a request", "serving"};
inline constexpr MetricDecl kTpotMeanS{
    "tpot_mean_s", "s",
    "mean over requests of the time per output token, (last token - first "
    "token) / (output - 1) (DistServe's TPOT; requests with one output token excluded)",
    "serving"};
inline constexpr MetricDecl kTpotP50S{
    "tpot_p50_s", "s", "median over requests of the time per output token", "serving"};
inline constexpr MetricDecl kTpotP90S{
    "tpot_p90_s", "s", "90th percentile over requests of the time per output token", "serving"};
inline constexpr MetricDecl kTpotP99S{
    "tpot_p99_s", "s", "99th percentile over requests of the time per output token", "serving"};
inline constexpr MetricDecl kE2eMeanS{
    "e2e_mean_s", "s", "mean end-to-end latency: arrival to the last token", "serving"};
inline constexpr MetricDecl kE2eP50S{"e2e_p50_s", "s", "median end-to-end latency", "serving"};
inline constexpr MetricDecl kE2eP90S{"e2e_p90_s", "s", "90th percentile of the end-to-end latency",
                                     "serving"};
inline constexpr MetricDecl kE2eP99S{"e2e_p99_s", "s", "99th percentile of the end-to-end latency",
                                     "serving"};
inline constexpr MetricDecl kE2eMaxS{"e2e_max_s", "s", "longest end-to-end latency", "serving"};
inline constexpr MetricDecl kMeanRequestsInSystem{
    "mean_requests_in_system", "requests",
    "time average of the requests queued or running (Little's L; equals requests_per_s x "
    "e2e_mean_s)",
    "serving"};
inline constexpr MetricDecl kKvCacheBlocks{
    "kv_cache_blocks", "blocks",
    "paged KV cache blocks per replica (workload.block_tokens "
    "tokens each) in the GPU memory left after weights and activations",
    "serving"};
inline constexpr MetricDecl kKvCacheMeanPct{
    "kv_cache_mean_pct", "%", "time average of the KV cache blocks in use, all replicas",
    "serving"};
inline constexpr MetricDecl kKvCacheMaxPct{
    "kv_cache_max_pct", "%", "most KV cache blocks in use at once on a replica", "serving"};
inline constexpr MetricDecl kPreemptions{
    "preemptions", "requests",
    "times a running request was preempted for KV cache blocks (and "
    "later recomputed, or swapped out with workload.preemption: swap)",
    "serving"};
inline constexpr MetricDecl kSwappedRequests{
    "swapped_requests", "requests",
    "preemptions by swap: KV blocks copied to host DRAM and back (workload.preemption: swap)",
    "serving"};
inline constexpr MetricDecl kSwapOutBytes{
    "swap_out_bytes", "bytes", "KV cache bytes swapped out to host DRAM over PCIe, all GPUs",
    "serving"};
inline constexpr MetricDecl kSwapInBytes{
    "swap_in_bytes", "bytes", "KV cache bytes swapped back in from host DRAM, all GPUs", "serving"};
inline constexpr MetricDecl kKvPrefixLookupBlocks{
    "kv_prefix_lookup_blocks", "blocks",
    "prefix caching: cacheable prompt blocks (workload.prefix_block_tokens) looked up at "
    "admission, all replicas",
    "serving"};
// The validation group whose rows measure the two prefix-caching first-token times (single
// requests with their prompt's KV cache recomputed or loaded from a lower tier,
// scenarios/validation/groups.yaml): it bands them in a report whatever the run's own group.
inline constexpr std::string_view kKvReuseGroup = "KV cache reuse";
inline constexpr MetricDecl kTtftPrefixHitMeanS{
    "ttft_prefix_hit_mean_s", "s",
    "prefix caching: mean time to first token of the requests admitted with a cached prefix "
    "(any tier)",
    "serving", kKvReuseGroup};
inline constexpr MetricDecl kTtftPrefixMissMeanS{
    "ttft_prefix_miss_mean_s", "s",
    "prefix caching: mean time to first token of the requests that found no cached prefix",
    "serving", kKvReuseGroup};
inline constexpr MetricDecl kKvHitPct{
    "kv_hit_pct", "%", "prefix caching: looked-up blocks found in any tier", "serving"};
inline constexpr MetricDecl kKvHitGpuPct{
    "kv_hit_gpu_pct", "%", "prefix caching: looked-up blocks found in GPU memory", "serving"};
inline constexpr MetricDecl kKvHitHostPct{
    "kv_hit_host_pct", "%", "prefix caching: looked-up blocks loaded from the host DRAM tier",
    "serving"};
inline constexpr MetricDecl kKvHitNvmePct{
    "kv_hit_nvme_pct", "%", "prefix caching: looked-up blocks loaded from the NVMe tier",
    "serving"};
inline constexpr MetricDecl kKvRecomputeAvoidedTokens{
    "kv_recompute_avoided_tokens", "tokens",
    "prefix caching: prompt tokens whose KV came from a cache instead of prefill", "serving"};
inline constexpr MetricDecl kKvGpuTierBlocks{
    "kv_gpu_tier_blocks", "blocks", "prefix blocks the GPU KV pools hold, all replicas", "serving"};
inline constexpr MetricDecl kKvHostTierBlocks{
    "kv_host_tier_blocks", "blocks",
    "prefix blocks the host DRAM tier holds (workload.kv_host_cache)", "serving"};
inline constexpr MetricDecl kKvNvmeTierBlocks{
    "kv_nvme_tier_blocks", "blocks", "prefix blocks the NVMe tier holds (workload.kv_nvme_cache)",
    "serving"};
inline constexpr MetricDecl kKvHostTierBytes{
    "kv_host_tier_bytes", "bytes",
    "capacity of the host DRAM KV tier per server (workload.kv_host_cache, auto resolved; 0 = "
    "none): the x axis "
    "of the report's hit rate and TTFT against tier size",
    "serving"};
inline constexpr MetricDecl kKvNvmeTierBytes{
    "kv_nvme_tier_bytes", "bytes",
    "capacity of the NVMe KV tier per server (workload.kv_nvme_cache, auto resolved; 0 = none)",
    "serving"};
inline constexpr MetricDecl kKvHostReadBytes{"kv_host_read_bytes", "bytes",
                                             "KV bytes loaded from the host DRAM tier to the GPUs",
                                             "serving"};
inline constexpr MetricDecl kKvNvmeReadBytes{"kv_nvme_read_bytes", "bytes",
                                             "KV bytes read from the NVMe tier", "serving"};
inline constexpr MetricDecl kKvHostWriteBytes{"kv_host_write_bytes", "bytes",
                                              "KV bytes copied from the GPUs to the host DRAM tier",
                                              "serving"};
inline constexpr MetricDecl kKvNvmeWriteBytes{"kv_nvme_write_bytes", "bytes",
                                              "KV bytes written to the NVMe tier", "serving"};
inline constexpr MetricDecl kNvmeDriveWritesPerDay{
    "nvme_drive_writes_per_day", "1/day",
    "NVMe tier writes per day at the run's write rate over the array's capacity (compare with "
    "the drive's DWPD rating)",
    "serving"};
inline constexpr MetricDecl kNvmeDwpdRating{
    "nvme_dwpd_rating", "1/day",
    "the drive's endurance rating (catalog dwpd: drive writes per day over its warranty, five "
    "years for the catalog's drives); present when the drive has one and the NVMe tier is used",
    "serving"};
inline constexpr MetricDecl kNvmeDwpdUsedPct{
    "nvme_dwpd_used_pct", "%",
    "nvme_drive_writes_per_day / nvme_dwpd_rating: above 100% the KV tier's writes wear the drives "
    "out before the end of their rated life",
    "serving"};
inline constexpr MetricDecl kIterations{"iterations", "iterations",
                                        "forward passes run, all replicas", "serving"};
inline constexpr MetricDecl kReplicas{
    "replicas", "replicas", "copies of the model serving the stream: gpu count / tensor degree",
    "serving"};

}  // namespace tiersim::sim::metric
