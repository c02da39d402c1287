#pragma once
// Execution stacks: the software that turns a transformer into GPU kernels. The same model on the
// same GPU runs at very different speeds as eager PyTorch (Hugging Face transformers with
// DeepSpeed) and inside an optimised serving engine (TensorRT-LLM, vLLM): fused attention, fused
// elementwise epilogues, a handful of launches per layer, tensor-core GEMMs in FP8. Each stack is
// one row of the table in stack.cpp; the models branch on these properties, never on the name.
#include <optional>
#include <string>
#include <vector>

#include "model/attention_kernel.hpp"
#include "model/hardware.hpp"
#include "model/llm.hpp"

namespace tiersim {

// How a serving engine admits requests into its paged KV cache (sim/workloads/serving/).
enum class KvAdmission {
  // vLLM: a request is admitted when its prompt's blocks are free (less a 1% watermark); a decode
  // that finds no free block preempts the most recently admitted running request.
  kPromptBlocks,
  // TensorRT-LLM's default capacity scheduler policy, GUARANTEED_NO_EVICT: a request is admitted
  // only when the blocks of its prompt plus its maximum output are free beyond what the running
  // requests still need to finish, so no running request is ever paused or evicted.
  kGuaranteedNoEvict,
};

struct ExecutionStack {
  std::string name;
  std::string description;
  // Attention as one fused kernel (FlashAttention, TensorRT-LLM's context FMHA): the s x s score
  // and probability matrices stay in on-chip memory, so prefill neither stores nor streams them.
  bool fused_attention = false;
  // The fused kernel's published achieved rate, by GPU generation, head size, mask and sequence
  // length (model/attention_kernel.hpp), at which prefill attention runs instead of the GEMM rate
  // (model/perf.hpp prefill_attention_s). kUnpublished: the GEMM rate.
  FusedAttentionKernel prefill_attention_kernel = FusedAttentionKernel::kUnpublished;
  // Fraction of the dense fp16 tensor peak its GEMMs reach, with the layer's elementwise work
  // fused into them. Unset: the eager figure of ExecutionModel (model/perf.hpp).
  std::optional<double> gemm_efficiency;
  // Launch and dispatch cost per transformer layer. Unset: ExecutionModel's eager figure.
  std::optional<double> layer_overhead_s;
  // Host work once per forward pass (a prefill, a decode step, a serving iteration) that the GPU
  // waits for, whatever the number of layers: scheduling and batch preparation, the copy of the
  // sampled tokens back to the host and its synchronisation, output processing. It is serialised
  // with the pass (the GPU idles); a stack that overlaps it with the next pass (asynchronous
  // scheduling, multi-step decoding) has none here. [s per pass] Unset: ExecutionModel's figure.
  std::optional<double> step_overhead_s;
  // The part of that host work that grows with the sequences in the pass. [s per sequence]
  // Unset: ExecutionModel's figure.
  std::optional<double> step_overhead_per_sequence_s;
  // Fraction of the dense FP8 tensor peak its FP8 GEMMs reach; 0 = the stack has no FP8 GEMMs
  // (8-bit weights are then dequantised to fp16 before, or inside, the GEMM).
  double fp8_gemm_efficiency = 0;
  // Fraction of the dense FP4 tensor peak its FP4 GEMMs reach (NVFP4: 4-bit weights and
  // activations, one FP8 scale per 16 elements); 0 = the stack has no FP4 GEMMs (4-bit weights
  // then run weight-only, dequantised to fp16 before, or inside, the GEMM).
  double fp4_gemm_efficiency = 0;
  // Quantised weights are expanded inside the GEMM's main loop (weight-only kernels) rather than
  // into an fp16 copy in GPU memory first.
  bool fused_dequant = false;
  // 8-bit weights carry one scale per tensor (FP8) or per output channel (INT8 weight-only), not
  // group-wise scales and minima: 1 byte per element.
  bool per_channel_8bit_scales = false;
  // Decode attention reads each sequence's K/V once per query head instead of once per KV head:
  // one thread block per query head, as TensorRT-LLM's masked multi-head attention kernel runs
  // before its XQA kernel. With grouped-query attention the KV cache then crosses the memory
  // bus heads / kv_heads times per step.
  bool kv_read_per_query_head = false;
  // Attention may run on the CPU over a KV cache in host memory (ZeRO-Inference's KV offload).
  bool host_kv_attention = true;
  // A GEMM streams its weights from memory while the tensor cores work on what already arrived,
  // so it takes the longer of the two (the roofline). False: the stack's GEMMs take the sum,
  // streaming and math one after the other, as measured for TensorRT-LLM v0.5-v0.6 (stack.cpp).
  bool gemm_hides_weight_reads = true;
  // The KV cache is one pool sized at start-up to this fraction of the GPU memory still free
  // once the weights and the activation workspace are placed; the rest stays free. 0: no pool,
  // the cache is allocated for the batch as it runs (PyTorch eager, static engines).
  double kv_pool_free_fraction = 0;
  // The serving workload's paged KV pool (model/capacity.cpp serving_capacity). False: vLLM's
  // rule, workload.gpu_memory_utilization of the GPU's memory less the weights and the profiled
  // activations. True: kv_pool_free_fraction of the memory still free once the weights, the
  // activations and the runtime are placed (TensorRT-LLM's KvCacheConfig
  // free_gpu_memory_fraction); workload.gpu_memory_utilization is then not used.
  bool serving_pool_from_free_memory = false;
  // How the serving scheduler admits requests into the KV pool.
  KvAdmission kv_admission = KvAdmission::kPromptBlocks;
  // ZeRO-3's gather copies each fetched parameter in GPU memory as DeepSpeed v0.7's
  // all_gather_coalesced does, on the gather stream, so the next parameter's host copy waits for
  // them (each copy reads and writes the bytes once). How many depends on the call that gathers
  // the parameter, alone or with others, and on the rank count (model/zero3_swap.hpp
  // zero3_v07_gather_copies, zero3_v07_gather_call_sizes). False where the one-GPU gather is the
  // host copy itself and the all-gather writes the parameter in place (DeepSpeed's later
  // NoGatherHandle, the default stack).
  bool zero3_gather_copies_v07 = false;
  // ZeRO-3 on one GPU: the gather itself moves a parameter swapped in from NVMe to the GPU, with
  // a blocking copy out of its swap buffer followed by the device copies above (DeepSpeed v0.7,
  // stack.cpp). So each tensor's NVMe read, its copy over the link and the device copies run one
  // after another; with prefetching, reads of later parameters run beside them as far as the
  // coordinator's rules and the swap buffers allow (model/zero3_swap.hpp; the inference
  // workload follows them, the weight-stream model's serial sum is the case without prefetch).
  // False: the swap buffer's copy to the GPU is asynchronous and overlaps the next read.
  bool zero3_swap_in_copy_in_gather = false;
  // ZeRO-3 with data-parallel ranks (policy.parallelism.data > 1): a module's gather is one chain
  // on one stream. Each partition's copy to the GPU is blocking (the host waits for it and for
  // everything queued on the gather stream before it, the previous module's all-gather
  // included), and the all-gather follows the copies; so within a module the copies run one
  // after another, then the all-gather, and the next module's copies start only once that
  // all-gather is done. Compute still overlaps the chain (prefetch). False: the partition copies
  // are asynchronous and overlap each other and the previous module's all-gather (stack.cpp).
  bool zero3_gather_serial_stream = false;
  // DeepSpeed ZeRO-3's persistence rule holds on one GPU too (model/layout.hpp
  // zero3_persistent): a parameter of at most policy.zero3.param_persistence_threshold elements
  // is made whole on the GPU once and never released, so no pass fetches it again (v0.7.2
  // partitioned_param_coordinator.py __params_to_release keeps `p.ds_persist` parameters;
  // stage3.py _mark_persistent_parameters sets it). Data-parallel ranks always follow the rule
  // (their weights are partitioned by ZeRO-3). False: an offloading runtime without it, whose
  // hooks copy every parameter of a module each time the module runs (Accelerate).
  bool zero3_persistence = false;
  // Data-parallel ranks share one copy of the weights as DeepSpeed ZeRO-3 does
  // (policy.parallelism.data > 1: each rank keeps a 1/N partition and all-gathers every layer
  // before it runs). The optimised stacks keep it so that a study can ask what a ZeRO-3 baseline
  // would do with their kernels and asynchronous copies (tiersim whatif varies the six-GPU
  // baseline's stack). False: Accelerate, whose hooks keep a whole model per process, so the
  // loader refuses data > 1 on it rather than running DeepSpeed's gather under its name.
  bool zero3_partitioning = true;
  // The stack refuses a sequence longer than the model's trained context (its config's
  // max_position_embeddings) even where the position encoding (rotary, ALiBi) could run past it:
  // vLLM does (vllm/config.py _get_and_verify_max_len: a max_model_len above the derived one is
  // an error unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set). False: the stack runs what it is given.
  // TensorRT-LLM v0.5-v0.7 builds an engine for any max_input_len + max_output_len (its
  // performance.md ran GPT-J 6B and Falcon-180B, both trained to 2,048 positions, at 2,048 input
  // + 2,048 output tokens), and Hugging Face's rotary embeddings grow their cos/sin cache to the
  // sequence. A model with a learned position table (OPT) is refused on every stack: it has no
  // row for a later position.
  bool enforces_trained_context = false;
  // How it keeps a multi-head latent attention model's KV cache (model/llm.hpp KvCacheForm):
  // per head, widened by kv_b_proj, as transformers does, or as the compressed latent, which
  // every tensor-parallel rank keeps whole and decode attention reads in the absorbed form.
  // Unset: the stack cannot run an MLA model at all.
  std::optional<KvCacheForm> mla_cache = KvCacheForm::kPerHead;
  // On a model's sliding-window layers (LlmSpec::sliding_layers) the cache keeps only the last
  // sliding_window tokens of a sequence, and decode and prefill attention read only those. False:
  // every token stays cached on every layer and attention runs over all of them under a mask.
  // The inference workload's batch (model/capacity.cpp), the serving workload's block pool
  // (sim/workloads/serving/serving.cpp Replica::blocks_for) and every pass's attention follow it,
  // through stack_caches_window and stack_reads_window with the properties below.
  bool window_cache = true;
  // Whether the cache still keeps only the window (window_cache) when the serving run also keeps
  // KV blocks in host DRAM or on NVMe (workload.kv_host_cache, kv_nvme_cache: a KV offloading
  // connector). False: the sliding layers then hold every token in the block pool, while
  // attention still reads only the window. vLLM turns its hybrid KV cache manager off whenever a
  // KV connector is configured ("Turning off hybrid kv cache manager because
  // `--kv-transfer-config` is set", vllm/config/vllm.py, v0.13; still unconditional in
  // vllm-project/vllm#41830, 2026-05), and unify_hybrid_kv_cache_specs then sizes each
  // sliding-window layer as a full-attention one ("The compute of layers like sliding window is
  // still saved", its warning). Only the LMCache connector keeps the window since
  // vllm-project/vllm#30166 (2025-12); the tiers here stand for vLLM's own offloading connector.
  // What TensorRT-LLM's host offload of reusable blocks does with a sliding window is not
  // established here: taken to be the same.
  bool window_cache_with_kv_tiers = false;
  // Whether the cache keeps only the window (window_cache) on a model that mixes sliding and
  // full-attention layers (LlmSpec::full_attention_layers > 0: Gemma-2, Gemma-3, gpt-oss). False:
  // every layer keeps every token, while the sliding layers' attention still reads only the
  // window. vLLM's V0 block manager had one block table for all layers, so an interleaved model
  // ran "as global-attention-only" there (vllm-project/vllm#14097, 2025-03), as V1 did until its
  // hybrid KV cache manager (vllm-project/vllm#13296; vllm-project/vllm#29796 dates the fix to
  // February 2025); TensorRT-LLM before its per-layer max_attention_window_size (v0.5-v0.7 take
  // one cyclic window for every layer) could not keep a window on some layers only.
  bool window_cache_interleaved = true;
  // Transformers' generate, which builds the cache a model's generation config names: where that
  // is the HybridCache (model/llm.hpp generation_config_hybrid_cache: Gemma-2, Gemma-3) the
  // sliding layers keep, and decode attends to, only the window even though window_cache is off.
  // Prefill still runs every pair of the prompt under the sliding mask.
  bool generation_config_cache = false;
};

// The stack scenarios get when they name none: eager PyTorch with DeepSpeed.
inline constexpr const char* kDefaultStackName = "hf-deepspeed";

// Every stack name, in table order.
const std::vector<std::string>& stack_names();
// The stack called `name`; throws ModelError listing the valid names.
const ExecutionStack& execution_stack(const std::string& name);

// How many times one decode step reads each cached K/V element: heads / kv_heads when the
// stack's decode attention reads K/V per query head, else 1.
double decode_kv_reads(const ExecutionStack& stack, int heads, int kv_heads);

// The KV cache `stack` keeps for `m`, per token and layer, and how it splits over `tp` ranks.
// An MLA model on a stack without MLA support (mla_cache unset) is refused by the loader first.
KvCacheShape stack_kv_cache(const ExecutionStack& stack, const LlmSpec& m, double bytes_per_elem,
                            double tp);

// The keys a decode query of a sequence at `context` tokens attends to, per layer on average
// under `stack`: mean_attended_context where the stack reads only the window (stack_reads_window),
// else `context`. What the cache holds is stack_cached_context.
double stack_window_context(const ExecutionStack& stack, const LlmSpec& m, double context);
// Whether a decode step on `stack` reads only the window on `m`'s sliding layers: window_cache,
// or the HybridCache of a stack that follows the model's generation config
// (generation_config_cache); false for a model without a window.
bool stack_reads_window(const ExecutionStack& stack, const LlmSpec& m);
// The tokens a sequence of `context` tokens holds in the KV cache per layer on average under
// `stack`, where `kv_tiers` says whether the run also keeps KV blocks in host DRAM or on NVMe:
// mean_window_context (at most the window, or the whole chunk, on a sliding layer) where the stack
// keeps only the window (stack_caches_window), else `context`. What a decode reads is
// stack_window_context.
double stack_cached_context(const ExecutionStack& stack, const LlmSpec& m, double context,
                            bool kv_tiers);
// Whether `stack` keeps only the window on `m`'s sliding layers: window_cache, unless the run's KV
// tiers or `m`'s full-attention layers turn it off (window_cache_with_kv_tiers,
// window_cache_interleaved), or the HybridCache of a stack that follows the model's generation
// config (generation_config_cache).
bool stack_caches_window(const ExecutionStack& stack, const LlmSpec& m, bool kv_tiers);

// True when `stack` runs the GEMMs of `weight_bits`-bit weights as FP8 tensor-core GEMMs on
// `gpu`: the stack has FP8 kernels, the weights are 8-bit and the GPU has FP8 tensor cores.
bool native_fp8_gemm(const ExecutionStack& stack, const GpuSpec& gpu, int weight_bits);
// The same for FP4: the stack has NVFP4 kernels, the weights are 4-bit and the GPU has FP4
// tensor cores (Blackwell). Elsewhere 4-bit weights run weight-only at the fp16 rate.
bool native_fp4_gemm(const ExecutionStack& stack, const GpuSpec& gpu, int weight_bits);

}  // namespace tiersim
