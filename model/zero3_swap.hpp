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
#include <array>
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
// fetches none. The layer norms and biases (the layer's "norms_biases") are fetched only where
// they do not persist on the GPU under z's param_persistence_threshold (model/layout.hpp
// zero3_persistent; at DeepSpeed's default 1e5 they persist, so their modules' hooks fetch
// nothing). nullopt for a layer of a family whose module structure is not described here (or of
// MoE and gated FFNs).
std::optional<std::vector<std::vector<int>>> zero3_hook_steps(const LlmSpec& m,
                                                              const WeightModule& mod,
                                                              const Zero3Settings& z);

// One parameter of a module as DeepSpeed's hooks see it: its size and the tensor of
// weight_modules' module it belongs to (a bias or a norm joins the layer's "norms_biases"; BLOOM's
// fused query_key_value weight stands for q_proj, k_proj and v_proj together).
struct Zero3Param {
  double elements = 0;
  std::vector<int> tensors;  // indices into WeightModule::tensors
};
// The forward pre-hooks of one module in firing order, each with the parameters it fetches
// (iter_params of the hooked submodule: weight, then bias), persistent ones included. Modules of
// a family described by zero3_hook_steps get their Hugging Face structure (OPT, BLOOM); any other
// module one hook per tensor.
std::vector<std::vector<Zero3Param>> zero3_module_params(const LlmSpec& m, const WeightModule& mod);

// DeepSpeed v0.7's ZeRO-3 gather calls over one forward pass, steady state (the trace complete,
// persistent parameters on the GPU since their first gather): for each parameter, in the order
// of `hooks` (each hook the element counts of its parameters), the number of parameters in the
// all_gather_coalesced call that gathers it; 0 for a persistent one, which no call gathers.
// v0.7.2 and v0.7.7 alike (partitioned_param_coordinator.py fetch_sub_module and
// __all_gather_params, unchanged between them):
// - a hook gathers, in one call, those of its own parameters that nothing has gathered yet;
// - then (trace complete, stage3_prefetch_bucket_size > 0) the prefetch pops the trace's queue
//   while the elements taken are under min(bucket, max_live - gathered), taking the parameters
//   still NOT_AVAILABLE (persistent and in-flight ones are popped and skipped), and gathers them
//   all in one call;
// - a module's parameters are released after it ran, persistent ones never
//   (partitioned_param_coordinator.py __params_to_release leaves out ds_persist;
//   parameter_offload.py mark_persistent_parameters: ds_numel < threshold, where
//   model/layout.hpp zero3_persistent, the one rule here, takes later releases' <=: they differ
//   only for a parameter of exactly the threshold's size).
// Left out: with parameters on NVMe the prefetch stops at the first one not yet swapped in
// (model/zero3_swap.hpp zero3_v07_swap_schedule); the calls are taken as with every partition
// available. Where each non-persistent parameter has at least a bucket's elements (the DGX-2
// ZeRO-Inference models at the default 5e7) every call holds one parameter either way.
std::vector<int> zero3_v07_gather_call_sizes(const std::vector<std::vector<double>>& hooks,
                                             const Zero3Settings& z);

// The copies in GPU memory that v0.7's all_gather_coalesced (partition_parameters.py, v0.7.2
// and v0.7.7 alike) makes of a parameter gathered in a call of `call_params` parameters by
// `ranks` ranks, in units of the parameter's whole bytes (each copy reads and writes them once):
// - one parameter: the partition's `.to(cuda)` (the host copy) is the all-gather's input and the
//   parameter a view of its output. With several ranks the all-gather moves the data (timed
//   apart): no copy. With one rank NCCL copies the input to the output with one
//   device-to-device cudaMemcpyAsync (src/enqueue.cc: with nRanks == 1 and sendbuff !=
//   recvbuff, the collective is that copy): 1;
// - several: torch.cat of the partitions' `.to(cuda)` into this rank's slice of the flat buffer
//   (1/ranks), the all-gather in place (one rank: send and receive buffers are the same, nothing
//   moves), and AllGatherCoalescedHandle.wait's torch.cat of each parameter out of the flat
//   buffer (1): 1 + 1/ranks;
// - none (persistent): 0.
double zero3_v07_gather_copies(int call_params, int ranks);

// The copies of v0.7's gather per byte of each tensor fetched (zero3_v07_gather_copies),
// indexed by WeightModule::Kind and tensor index: the calls of one forward pass over `modules`
// (weight_modules' pass, zero3_v07_gather_call_sizes over zero3_module_params), weighted by the
// elements of the tensor's parameters and averaged over the modules of a kind (the layers of a
// model share one value, as the simulator's fetch plans share their layers' fetches).
std::array<std::vector<double>, 3> zero3_v07_tensor_gather_copies(
    const LlmSpec& m, const std::vector<WeightModule>& modules, const Zero3Settings& z, int ranks);

}  // namespace tiersim
