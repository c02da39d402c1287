#pragma once
// Training state sizes: bytes per parameter of the model states by precision and optimizer, their
// ZeRO partitioning over the data-parallel ranks, activations, and what each tier (GPU, host
// DRAM, NVMe) must hold. Pure arithmetic, as in the ZeRO and ZeRO-Infinity papers; the capacity
// solver (largest model of a shape family that fits) is built on it.
#include <string>
#include <vector>

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

// DeepSpeed's buffer sizes that set ZeRO's temporary GPU and host memory: its documented
// defaults, except where the scenario gives its run's DeepSpeed config (zero_buffers).
struct ZeroBuffers {
  // stage3_max_live_parameters: gathered fp16 parameters allowed in GPU memory at once.
  double max_live_params = 1e9;
  // reduce_bucket_size (elements): gradients fused before a reduce-scatter / all-reduce.
  double reduce_bucket_elems = 5e8;
  // How many reduce buckets of that size the GPU holds: stage_1_and_2.py backward() allocates
  // ipg_buffer's buf_0, and buf_1 too with overlap_comm ("Use double buffers to avoid data access
  // conflict when overlap_comm is enabled"; v0.3.0 stage2.py the same); stage3.py one flat
  // __ipg_bucket_flat_buffer. Each is torch.empty(reduce_bucket_size): its full size, whatever
  // the model's.
  int reduce_buckets = 1;
  // sub_group_size (params): the optimizer steps the partition in sub-groups of this size; each
  // one's fp16 gradients are converted into a temporary fp32 buffer on the device running Adam.
  double sub_group_params = 1e9;
  // The NVMe optimizer swapper streams sub-groups of this size through pinned host buffers
  // (ZeRO-Infinity's configurations use 1e8 to keep the buffers small).
  double nvme_sub_group_params = 1e8;
  // allgather_bucket_size (elements): ZeRO stage 1/2 all-gathers the updated fp16 partitions in
  // shards of this size (deepspeed/runtime/zero/config.py default 5e8). The shards are views of
  // the flat fp16 group the all-gather writes in place (runtime/utils.py all_gather_dp_groups,
  // v0.3.0 stage2.py step: narrow() of each rank's partition), so they take no GPU memory of
  // their own; with one rank nothing is gathered at all.
  double allgather_bucket_elems = 5e8;
  // stage3_prefetch_bucket_size (elements): parameters fetched ahead of the submodule computing
  // (PartitionedParameterCoordinator.fetch_sub_module; default 5e7).
  double prefetch_bucket_params = 5e7;
  // stage3_max_reuse_distance (elements): a gathered parameter whose next use is closer than this
  // is not released (PartitionedParameterCoordinator.__params_to_release; default 1e9).
  double max_reuse_distance_params = 1e9;
  // offload_optimizer.buffer_count: pinned fp32 buffers of the largest sub-group the NVMe
  // optimizer swapper stages through (swap_tensor/optimizer_utils.py OptimizerSwapper; default 4).
  int optimizer_swap_buffer_count = 4;
  // offload_param.buffer_count and buffer_size (elements): the NVMe parameter swapper's pinned
  // pool, one parameter partition per buffer (swap_tensor/partitioned_param_swapper.py
  // AsyncPartitionedParameterSwapper._configure_aio; defaults 5 and 1e8).
  int param_swap_buffer_count = 5;
  double param_swap_buffer_elems = 1e8;
};

// The buffers of a training run: DeepSpeed's defaults with the scenario's zero_optimization
// settings (workload.zero.*) in place of them.
ZeroBuffers zero_buffers(const TrainingWorkload& w);

// The strategies of the ZeRO-Infinity paper's model-scale comparison, named as the papers name
// them (SC21 ZeRO-Infinity talk, slide "Democratizing Large Model Training": data parallel,
// ZeRO-Offload, ZeRO stage 3, ZeRO-Infinity CPU offload, ZeRO-Infinity NVMe).
struct ZeroStrategy {
  const char* name;  // what `tiersim capacity` prints
  int stage;         // ZeRO stage
  Tier params, gradients, optimizer;
  bool cpu_checkpointing;  // activation checkpoints in host memory
};
// In the order of that slide (one DGX-2 node): each later strategy trains at least as large a
// model there. ZeRO-Offload keeps every fp16 parameter on each GPU, so it bounds the model by one
// GPU's memory whatever the GPU count, while ZeRO-3 grows with the GPUs: on one node of 16 GPUs
// ZeRO-3 goes further, on a single GPU ZeRO-Offload does.
// data_parallel: plain data parallelism (stage 0, everything on the GPU).
// zero_offload: ZeRO-Offload (USENIX ATC'21): stage 2, fp16 parameters resident on every GPU,
//   gradients and optimizer states on the CPU (stage_1_and_2.py with offload_optimizer: cpu).
// zero3: all states partitioned over the GPUs, nothing offloaded.
// zero_infinity_cpu: stage 3 with offload_param and offload_optimizer on the CPU, activation
//   checkpoints offloaded (stage3.py).
// zero_infinity_nvme: stage 3 with parameters and optimizer states on NVMe.
const std::vector<ZeroStrategy>& zero_strategies();
// Sets the scenario's ZeRO stage, state tiers and activation offload to the strategy's.
void apply_strategy(Scenario& s, const ZeroStrategy& st);

// Elements of the largest operator ZeRO-3 gathers at once (DeepSpeed gathers per submodule, not
// per layer): the largest Linear (an FFN matrix, or a q/o projection) split into `linear_tiles`
// tiles by TiledLinear, or the token embedding table (an Embedding, which TiledLinear does not
// split).
double largest_operator_params(const LlmSpec& m, int linear_tiles);

// GPU bytes of gathered (full) fp16 parameters under ZeRO-3: the operator computing, the prefetch
// bucket fetched ahead of it, and, with activation checkpointing, the recomputed layer's
// parameters kept for its backward pass up to stage3_max_reuse_distance elements (the layer's
// recompute is followed at once by its backward, so its parameters are reused within that
// distance and not released).
double gathered_params_bytes(const LlmSpec& m, const TrainingWorkload& w, const ZeroBuffers& zb);

// Elements of the largest optimizer sub-group of one rank's partition (stage3.py
// initialize_optimizer_states: largest_numel). With the optimizer on NVMe the sub-group size is
// nvme_sub_group_params.
double largest_sub_group_params(double partition_params, const TrainingWorkload& w,
                                const ZeroBuffers& zb);

// Host bytes per rank of the gradient buffers DeepSpeed allocates when the optimizer runs on the
// CPU (mixed precision):
// - ZeRO stage 1/2 (stage_1_and_2.py initialize_optimizer_states): an fp32 gradient partition,
//   4 B per element of the rank's partition.
// - ZeRO stage 3 (stage3.py): grad_partitions_flat_buffer over the whole partition at
//   gradient_accumulation_dtype, which engine.get_data_types sets to the model dtype (fp16/bf16,
//   2 B) unless data_types.grad_accum_dtype says otherwise. The fp32 gradients are never held
//   whole: see fp32_grad_sub_group_bytes.
// - ZeRO stage 3 of DeepSpeed 0.3.15-0.5 (w.zero3_host_grads kFp32Partition): an fp32 buffer per
//   sub-group over the whole partition, 4 B per element; none when the optimizer states are on
//   NVMe (the fp32 gradients are swapped out with them).
double host_grad_partition_bytes(double partition_params, const TrainingWorkload& w);
// Whether the host gradient partition above is fp32 (CPU Adam steps from it directly).
bool host_grads_are_fp32(const TrainingWorkload& w);
// Host bytes per rank of the fp32 gradient buffer of one (the largest) sub-group that stage 3
// converts each sub-group's gradients into for CPU Adam (stage3.py initialize_optimizer_states:
// gradient_buffer = zeros(largest_numel), pinned).
double fp32_grad_sub_group_bytes(double partition_params, const TrainingWorkload& w,
                                 const ZeroBuffers& zb);
// Host bytes per rank of the NVMe optimizer swapper's pinned buffers: buffer_count fp32 buffers of
// the largest sub-group (OptimizerSwapper.__init__ in swap_tensor/optimizer_utils.py).
// Host bytes per rank of the NVMe parameter swapper's pinned pool: buffer_count buffers of
// buffer_size elements at the working precision, each holding one parameter partition; a
// partition larger than buffer_size needs a larger buffer_size (get_buffer asserts it fits), so
// the buffers grow to the largest operator's partition.
double param_swap_buffer_bytes(const LlmSpec& m, const TrainingWorkload& w, int data_parallel,
                               const ZeroBuffers& zb);
double optimizer_swap_buffer_bytes(double partition_params, const TrainingWorkload& w,
                                   const ZeroBuffers& zb);

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

// Bytes of activations one layer keeps per token for its backward, fp16, apart from the attention
// scores (Korthikanti et al. 2022's accounting at the layer's own widths: 34h for a GPT layer;
// grouped-query K and V, MLA's latents, a gated MLP, an MoE layer's routed and shared experts
// (`with_experts`) each as wide as the model makes them).
double layer_token_activation_bytes(const LlmSpec& m, bool with_experts);
// Activation memory of one rank (bytes) for `micro_batch` sequences of `seq` tokens, fp16.
// Per layer and sequence the stored activations are seq*(layer_token_activation_bytes +
// 5*heads*seq) bytes (seq*h*(34 + 5*heads*seq/h) for a GPT layer; Korthikanti et al. 2022, no
// sequence parallelism, eager attention). With activation
// checkpointing only each layer's input (2*seq*h bytes) is kept, plus the larger of one layer's
// full set while it is recomputed and the loss's fp16 logits with their fp32 softmax, which are
// freed before the first recompute; without it, every layer's set and the logits together.
double activation_bytes(const LlmSpec& m, double micro_batch, int seq, bool checkpointing);
// The activation checkpoints alone (every layer's fp16 input, 2*seq*h bytes per sequence): the
// part of activation_bytes that cpu_checkpointing moves to host memory.
double activation_checkpoint_bytes(const LlmSpec& m, double micro_batch, int seq);

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
