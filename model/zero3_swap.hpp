#pragma once
// DeepSpeed v0.7's ZeRO-3 parameter coordinator on one GPU with the parameters on NVMe: the order
// in which its fetch thread issues swap-in reads, waits for them and gathers (copies to the GPU)
// each parameter over one forward pass. A pure model of the code's rules, no timing: the
// simulator times the steps (sim/workloads/inference/inference.cpp fetch_module).
//
// The rules, deepspeed v0.7.2 (the release of the ZeRO-Inference blog, 2022-09):
// - every module has a forward pre-hook, the param-less ones too (parameter_offload.py
//   _register_hooks_recursively, pre_sub_module_forward_function -> fetch_sub_module), and every
//   hook runs the prefetch below, whether or not it fetches a parameter of its own;
// - fetch_sub_module gathers the hook's own parameter if nothing has yet (a parameter still on
//   NVMe is swapped in synchronously, one whose read is in flight waits for it), then the
//   prefetch: the gather of the parameters next in the trace, up to stage3_prefetch_bucket_size
//   elements and what stage3_max_live_parameters leaves beside those already gathered, stopping
//   at the first parameter still on NVMe (`_is_currently_on_nvme ... break`); a parameter whose
//   read is in flight is gathered too, after waiting for it;
// - then __prefetch_nvme_param_partitions issues swap-ins for the parameters after those, while
//   the elements considered are at most twice those gathered ahead and not yet used
//   (`numel_considered > 2 * numel_in_flight` ends it) and swap buffers are free
//   (available_swap_in_buffers);
// - every wait for a read waits for all reads in flight (partition_parameters.py
//   _ensure_availability_of_partitioned_params -> partitioned_param_swapper.py synchronize_reads);
// - a parameter holds its swap buffer from its swap-in until it is released after its module ran
//   (_partition_param -> remove_partition_and_release_buffers), gathered ahead or not;
// - with stage3_prefetch_bucket_size 0 neither prefetch runs: each parameter is swapped in and
//   gathered in its own hook.
// Left out: parameters that are never swapped (persistent or below the aio size): they are
// available throughout and add only their few elements to `numel_considered`.
#include <optional>
#include <span>
#include <vector>

#include "model/layout.hpp"
#include "model/llm.hpp"
#include "model/scenario.hpp"

namespace tiersim {

// What the fetch thread does, in order.
struct Zero3SwapAction {
  enum class Kind {
    kIssue,   // issue the swap-in read of `param` (asynchronous; it takes a swap buffer)
    kWait,    // wait for every read in flight (synchronize_reads)
    kGather,  // copy `param` from its swap buffer to the GPU (blocking)
  } kind = Kind::kIssue;
  int param = -1;  // -1 for kWait
};

// One forward pass: `hook_params` lists the module hooks in the order they fire, each the index of
// the NVMe parameter it fetches or -1 for a hook that fetches none (a container, a dropout or
// activation module, a layer norm whose parameters persist). Parameters are numbered in the order
// of their hooks, each used once; `param_elements` gives their sizes [elements]. `swap_buffers` is
// offload_param.buffer_count. Every parameter is gathered once, after its read and a wait.
std::vector<Zero3SwapAction> zero3_v07_swap_schedule(std::span<const double> param_elements,
                                                     std::span<const int> hook_params,
                                                     const Zero3Settings& z, int swap_buffers);

// The forward pre-hooks of one of weight_modules' modules (model/layout.hpp) in the order they
// fire under Hugging Face transformers, each the indices into mod.tensors of the parameter it
// fetches (several for a fused parameter, BLOOM's query_key_value), empty for a hook that
// fetches none. The layer norms and biases (the layer's "norms_biases") persist on the GPU under
// the default stage3_param_persistence_threshold, so their modules' hooks fetch nothing. nullopt
// for a layer of a family whose module structure is not described here (or of MoE and gated
// FFNs).
std::optional<std::vector<std::vector<int>>> zero3_hook_steps(const LlmSpec& m,
                                                              const WeightModule& mod);

}  // namespace tiersim
