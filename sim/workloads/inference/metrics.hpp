#pragma once
// The inference workload's own metrics (sim/metrics.hpp: the handle type, and the metrics several
// workloads share). sim/metrics.cpp lists them in `tiersim schema --metrics`.
#include "sim/metrics.hpp"

namespace tiersim::sim::metric {

// Inference (ZeRO-Inference / FlexGen style offloaded generation).
inline constexpr MetricDecl kPrefillS{
    "prefill_s", "s",
    "time until the prompt of every sequence in the batch has been processed (the first forward "
    "pass over the whole batch, all pipeline micro-batches)",
    "inference"};
inline constexpr MetricDecl kTtftS{
    "ttft_s", "s",
    "time to first token: equal to prefill_s, since the first generated token comes out of "
    "prefill for the whole batch at once (static batching)",
    "inference"};
inline constexpr MetricDecl kDecodeS{
    "decode_s", "s", "total_s - prefill_s: the decode steps that produce tokens 2..gen_tokens",
    "inference"};
inline constexpr MetricDecl kDecodeSPerToken{
    "decode_s_per_token", "s",
    "decode_s / (gen_tokens - 1): one decode step, which produces one token for every sequence "
    "of the batch (0 when gen_tokens is 1)",
    "inference"};
inline constexpr MetricDecl kWeightWaitS{
    "weight_wait_s", "s",
    "time the first pipeline stage's compute waited for weights to arrive (fetch not hidden "
    "behind compute), summed over the run",
    "inference"};
inline constexpr MetricDecl kCpuAttentionS{
    "cpu_attention_s", "s",
    "CPU time spent on attention when the KV cache lives in host DRAM, summed over the run",
    "inference"};
inline constexpr MetricDecl kAllgatherBytes{
    "allgather_bytes", "bytes",
    "policy.parallelism.data > 1: bytes each GPU received in ZeRO-3's parameter all-gathers over "
    "the run (on its PCIe link, peer to peer, or on its NVLink where it has one)",
    "inference"};
inline constexpr MetricDecl kWeightsGpuFraction{
    "weights_gpu_fraction", "",
    "policy.schedule flexgen: share of the weight bytes FlexGen's whole-tensor placement puts on "
    "the GPU (can be far from the requested percentage)",
    "inference"};
inline constexpr MetricDecl kWeightsCpuFraction{
    "weights_cpu_fraction", "",
    "policy.schedule flexgen: share of the weight bytes placed in host DRAM", "inference"};
inline constexpr MetricDecl kWeightsNvmeFraction{
    "weights_nvme_fraction", "",
    "policy.schedule flexgen: share of the weight bytes placed on disk", "inference"};
inline constexpr MetricDecl kPageCacheBytes{
    "page_cache_bytes", "bytes",
    "policy.schedule flexgen with a disk share: host DRAM left over for the OS page cache "
    "through which FlexGen's memory-mapped disk tensors are read",
    "inference"};

}  // namespace tiersim::sim::metric
