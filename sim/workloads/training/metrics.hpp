#pragma once
// The training workload's own metrics (sim/metrics.hpp: the handle type, and the metrics several
// workloads share). sim/metrics.cpp lists them in `tiersim schema --metrics`.
#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/metrics.hpp"

namespace tiersim::sim::metric {

// Training.
inline constexpr MetricDecl kMaxParamsB{
    "max_params_b", "1e9 params",
    "params_auto: the largest model of the shape family that fits, in billions of parameters",
    "training"};
inline constexpr MetricDecl kMaxParamsLayers{
    "max_params_layers", "layers", "params_auto: layers of that largest model", "training"};
inline constexpr MetricDecl kMaxParamsHidden{
    "max_params_hidden", "", "params_auto: hidden size of that largest model", "training"};
inline constexpr MetricDecl kGpuMemoryBytes{"gpu_memory_bytes", "bytes",
                                            "training: GPU memory needed per GPU", "training"};
inline constexpr MetricDecl kCpuMemoryBytes{"cpu_memory_bytes", "bytes",
                                            "training: host DRAM needed per node", "training"};
inline constexpr MetricDecl kNvmeMemoryBytes{"nvme_memory_bytes", "bytes",
                                             "training: NVMe capacity needed per node", "training"};
inline constexpr MetricDecl kParamsB{"params_b", "1e9 params",
                                     "parameters of the trained model, in billions", "training"};
inline constexpr MetricDecl kIterationS{
    "iteration_s", "s", "time of one training iteration in steady state", "training"};
inline constexpr MetricDecl kSamplesPerS{"samples_per_s", "samples/s", "global_batch / iteration_s",
                                         "training"};
inline constexpr MetricDecl kTokensPerS{"tokens_per_s", "tokens/s",
                                        "global_batch x sequence_tokens / iteration_s", "training"};
inline constexpr MetricDecl kAchievedTflopsPerGpu{
    "achieved_tflops_per_gpu", "TFLOP/s",
    "model FLOPs (forward + backward, no recompute, as MFU counts them) per GPU per second",
    "training"};
inline constexpr MetricDecl kOptimizerStepS{
    "optimizer_step_s", "s", "time of the optimizer step within one iteration", "training"};
inline constexpr MetricDecl kForwardBackwardS{
    "forward_backward_s", "s",
    "time of the forward and backward passes within one iteration, until the last gradient has "
    "reached its tier (DeepSpeed's forward + backward timers)",
    "training"};
inline constexpr MetricDecl kCpuAdamS{
    "cpu_adam_s", "s",
    "CPU Adam's pass over one iteration's optimizer partition on the node's CPUs, without the "
    "gradient unscaling and the copies around it (the latency ZeRO-Offload's Table 4 measures)",
    "training"};
inline constexpr MetricDecl kParamGatherWaitS{
    "param_gather_wait_s", "s",
    "time per iteration compute waited for ZeRO-3 parameter gathers (not hidden by prefetch)",
    "training"};
inline constexpr MetricDecl kDataParallel{
    "data_parallel", "ranks", "data-parallel degree: GPUs x nodes / (tensor x pipeline)",
    "training"};
inline constexpr MetricDecl kCheckpointStallS{
    "checkpoint_stall_s", "s", "time a periodic checkpoint adds to the iteration it follows",
    "training"};
inline constexpr MetricDecl kCheckpointOverheadPct{
    "checkpoint_overhead_pct", "%",
    "checkpoint_stall_s as a share of the time between checkpoints including the stall",
    "training"};

// The memory metric of a capacity tier ("gpu", "cpu" or "nvme"; model/capacity.hpp TierMemory).
// Throws std::logic_error for another tier.
inline const MetricDecl& tier_memory_metric(std::string_view tier) {
  if (tier == "gpu") return kGpuMemoryBytes;
  if (tier == "cpu") return kCpuMemoryBytes;
  if (tier == "nvme") return kNvmeMemoryBytes;
  throw std::logic_error("no memory metric for tier '" + std::string(tier) + "'");
}

}  // namespace tiersim::sim::metric
