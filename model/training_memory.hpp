#pragma once
// Training state sizes: bytes per parameter of the model states by precision and optimizer, their
// ZeRO partitioning over the data-parallel ranks, activations, and what each tier (GPU, host
// DRAM, NVMe) must hold. Pure arithmetic, as in the ZeRO and ZeRO-Infinity papers; the capacity
// solver (largest model of a shape family that fits) is built on it.
#include <string>

#include "model/capacity.hpp"
#include "model/llm.hpp"
#include "model/perf.hpp"
#include "model/scenario.hpp"

namespace tiersim {

// Bytes per parameter of each kind of model state.
struct StateBytes {
  double params = 0;     // the working copy the GPU computes with (fp16/bf16 or fp32)
  double grads = 0;      // gradients at the working precision
  double optimizer = 0;  // fp32 master weights (mixed precision only) + optimizer moments
  double total() const { return params + grads + optimizer; }
};
// Mixed-precision Adam: 2 + 2 + (4 master + 4 momentum + 4 variance) = 16 B/param (ZeRO, SC20).
StateBytes state_bytes_per_param(TrainingWorkload::Precision precision,
                                 TrainingWorkload::Optimizer optimizer);

// DeepSpeed's buffer sizes that set ZeRO's temporary GPU memory (its documented defaults). They
// are properties of the software stack, the same for every scenario.
struct ZeroBuffers {
  // stage3_max_live_parameters: gathered fp16 parameters allowed in GPU memory at once.
  double max_live_params = 1e9;
  // reduce_bucket_size (elements): gradients fused before a reduce-scatter / all-reduce.
  double reduce_bucket_elems = 5e8;
  // sub_group_size (params): the optimizer steps the partition in sub-groups of this size; each
  // one's fp16 gradients are converted into a temporary fp32 buffer on the device running Adam.
  double sub_group_params = 1e9;
  // The NVMe optimizer swapper streams sub-groups of this size through pinned host buffers
  // (ZeRO-Infinity's configurations use 1e8 to keep the buffers small).
  double nvme_sub_group_params = 1e8;
};

// How the job maps onto GPUs. Ranks are symmetric, so one rank stands for all.
struct TrainingLayout {
  int data_parallel = 1;   // gpu_count * nodes / (tensor * pipeline)
  int ranks_per_node = 1;  // data-parallel ranks sharing one host's DRAM, NVMe and CPUs
  double micro_batch = 1;  // sequences per rank per iteration
};
TrainingLayout training_layout(const Scenario& s);

// Model states one rank holds after ZeRO partitioning (bytes), before placement on tiers:
// stage 1 partitions the optimizer states, stage 2 also the gradients, stage 3 also the params.
struct RankStates {
  double params = 0;
  double grads = 0;
  double optimizer = 0;
};
RankStates rank_states(const LlmSpec& m, const TrainingWorkload& w, int data_parallel);

// Activation memory of one rank (bytes) for `micro_batch` sequences of `seq` tokens, fp16.
// Per layer and sequence the stored activations are seq*h*(34 + 5*heads*seq/h) bytes
// (Korthikanti et al. 2022, no sequence parallelism, eager attention). With activation
// checkpointing only each layer's input (2*seq*h bytes) is kept, plus one layer's full set while
// it is recomputed. The loss adds fp16 logits and their fp32 softmax.
double activation_bytes(const LlmSpec& m, double micro_batch, int seq, bool checkpointing);

// The training scenario's memory per tier (GPU per rank, host DRAM and NVMe per node).
CapacityReport training_capacity(const Scenario& s, const ExecutionModel& em);

// The `step`-th model of the shape family grown from `base` (step >= 1). kWidthDepth: hidden =
// 64*step, heads of 64, FFN and KV heads in the base's ratios, layers = round(hidden * base
// layers / base hidden) (the fixed aspect ratio of the GPT-3 family the ZeRO papers scale);
// kLayers: the base's width with `step` layers.
LlmSpec scaled_model(const LlmSpec& base, TrainingWorkload::Shape shape, int step);

struct CapacitySearch {
  bool found = false;   // false when even the smallest model of the family does not fit
  int step = 0;         // largest step that fits
  LlmSpec model;        // that model
  double params = 0;    // its parameter count
  std::string limit;    // why the next step does not fit (its shortfall)
};
// Largest model of the scenario's shape family that fits every tier. Memory grows monotonically
// with the step, so a bracketing search finds the boundary exactly.
CapacitySearch largest_trainable(const Scenario& s, const ExecutionModel& em);

}  // namespace tiersim
