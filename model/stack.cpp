#include "model/stack.hpp"

#include <utility>

#include "model/errors.hpp"
#include "model/named_table.hpp"

namespace tiersim {

namespace {

// A copy of `base` under its own name and description: each stack below is written as the stack
// it derives from plus the fields that differ, each beside the source that says why.
ExecutionStack based_on(const ExecutionStack& base, std::string name, std::string description) {
  ExecutionStack stack = base;
  stack.name = std::move(name);
  stack.description = std::move(description);
  return stack;
}

const std::vector<ExecutionStack>& stack_table() {
  static const std::vector<ExecutionStack> kStacks = [] {
    // Eager PyTorch: Hugging Face transformers modules with DeepSpeed ZeRO-Inference. Its kernel
    // efficiencies and launch overhead are ExecutionModel's (model/perf.hpp); attention
    // materialises the score matrix (transformers' eager attention); quantised weights are
    // dequantised to an fp16 copy before each GEMM and carry group-wise scales and minima
    // (DeepSpeed's group-wise weight quantisation); attention runs on the CPU when the KV cache
    // is offloaded (the transformers fork of DeepSpeedExamples' zero_inference).
    ExecutionStack hf =
        based_on(ExecutionStack{}, kDefaultStackName,
                 "eager PyTorch (Hugging Face transformers + DeepSpeed ZeRO-Inference)");
    // DeepSpeed's multi-GPU ZeRO-3 gather is one chain on the coordinator's gather stream, in
    // v0.7.2 (the ZeRO-Inference blog's release) as in the 2025 master:
    // partitioned_param_coordinator.py __all_gather_params calls all_gather_coalesced inside
    // `with torch.cuda.stream(self.__allgather_stream)`; partition_parameters.py
    // all_gather_coalesced (master: _all_gather_dtype) copies each parameter's partition with
    // `p.ds_tensor.to(torch.cuda.current_device())`, a blocking copy (no non_blocking: the host
    // synchronises that stream), torch.cat's them into the flat buffer and starts the NCCL
    // all-gather (async_op=True, which waits for that stream). fetch_sub_module waits for the
    // module's handle on the same stream (`with torch.cuda.stream(self.__allgather_stream)`:
    // handle.wait()) before it prefetches the next modules, so the next module's first blocking
    // copy waits for this module's all-gather. Only the compute stream runs beside the chain.
    hf.zero3_gather_serial_stream = true;
    hf.zero3_persistence = true;
    // transformers' DynamicCache appended every token on every layer of a sliding-window model
    // (Mistral, Phi-3), and eager and SDPA attention mask the keys outside the window while
    // computing over all of them (the sliding-window causal mask). The per-layer caches that drop
    // what falls out of the window (cache_utils' DynamicSlidingWindowLayer) came with the cache
    // refactor of 2025, after the versions these stacks stand for.
    hf.window_cache = false;
    // Except where the model's generation config asks for the HybridCache (Gemma-2, Gemma-3),
    // which generate builds: then the sliding layers keep, and decode reads, only the window.
    hf.generation_config_cache = true;

    // TensorRT-LLM / vLLM class engines.
    ExecutionStack opt = based_on(
        ExecutionStack{}, "optimized",
        "optimised serving engine (TensorRT-LLM, vLLM): fused attention, fused epilogues, few "
        "launches per layer, native FP8 GEMMs, weight-only quantised GEMMs");
    // TensorRT-LLM builds every benchmarked engine with --enable_context_fmha (NVIDIA/
    // TensorRT-LLM docs/source/performance.md, v0.6.1 build commands); FlashAttention never
    // writes the N x N score matrix to HBM (Dao et al., NeurIPS 2022, section 3.1); vLLM uses
    // FlashAttention and PagedAttention (Kwon et al., SOSP 2023, section 4).
    opt.fused_attention = true;
    // Its prefill attention runs at FlashAttention's published rates (FA3 on Hopper, FA2
    // elsewhere, as vLLM selects them: model/attention_kernel.hpp). Most rows on this stack run
    // vLLM (0.11-0.23, FA3 on Hopper); TensorRT-LLM's own context FMHA publishes no rate by
    // sequence length, and is taken to be of FlashAttention's class.
    opt.prefill_attention_kernel = FusedAttentionKernel::kFlashAttention;
    // An MLA model's cache is its compressed latent, whole on every tensor-parallel rank, and
    // decode attends over it in the absorbed form: vLLM's MLA backends since 0.7.1
    // (vllm/attention/backends/mla: "the KV cache stores the compressed latent"; FlashMLA on
    // Hopper), SGLang's DeepSeek support, TensorRT-LLM's DeepSeek-V3 (PyTorch backend, 0.18+).
    opt.mla_cache = KvCacheForm::kLatent;
    // A sliding layer keeps only its window, and its attention reads only that: vLLM's block
    // manager frees the blocks that fall behind the window (V0's sliding-window block tables; V1's
    // hybrid KV cache manager per layer type), FlashAttention's window_size skips the keys
    // outside it, and TensorRT-LLM keeps a cyclic cache of max_attention_window_size tokens per
    // layer.
    opt.window_cache = true;
    // Maximum achievable matmul rates of a tuned GEMM (stas00/ml-engineering,
    // compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS comparison table"): BF16
    // A100 SXM 271.2 of 312 TFLOPS (86.9%), A100 PCIe 252.9 (81.1%), H100 SXM 794.5 of 989
    // (80.3%); measured on an H100 SXM here, 776-779 TFLOPS bf16 at 4096-8192 rows (78-79%,
    // tools/gpu/h100-2026-11-26.md). The lower end, since a model's GEMM shapes are not the
    // sweep's best shape. A board whose catalog entry has its own GEMM sweep
    // (fp16_achieved_tflops, gemm_exposed_weight_gbps: the H100 SXM's, 730 TFLOP/s of math plus
    // the weight loads it does not hide) runs at that instead where it is lower. The biases and
    // scales eager mode applies in kernels of their own are fused into the GEMMs' epilogues; the
    // norms with their residual adds, the rotary embedding and the MLP's activation stay kernels
    // of their own, priced by their memory traffic after the GEMMs (model/perf.cpp
    // layer_elementwise_bytes).
    opt.gemm_efficiency = 0.80;
    // Same table, FP8 e4m3: H100 SXM 1402.6 of 1979 TFLOPS (70.9%), H200 1453.4 (73.4%); measured
    // here 1341-1372 on an H100 SXM (68-69%, torch._scaled_mm, the same record). The H100's shape
    // sweep (catalog fp8_achieved_tflops, 1,322) caps it on that board and its siblings.
    opt.fp8_gemm_efficiency = 0.71;
    // NVFP4 GEMMs (4-bit weights and activations, one FP8 E4M3 scale per 16 elements) on
    // Blackwell's FP4 tensor cores: TensorRT-LLM since 0.17 (2025, ModelOpt FP4 checkpoints;
    // the nvidia/*-FP4 models of docs/source/performance/perf-overview.md), vLLM's CUTLASS NVFP4
    // kernels since mid-2025 (vllm-project/vllm#20646). No maximum achievable rate is published
    // for FP4 (the MAMF table above stops at FP8, where the B200 reaches 76%): estimate, the FP8
    // share. A board with a measured FP4 rate caps it (catalog fp4_achieved_tflops); none has one.
    opt.fp4_gemm_efficiency = 0.71;
    // Estimate: a TensorRT-LLM Llama layer is about a dozen kernels (RMSNorm, fused QKV GEMM,
    // the attention plugin with rotary embedding and KV write, output GEMM, residual + RMSNorm,
    // fused gate/up GEMM, SwiGLU, down GEMM, residual), enqueued from C++ without Python
    // dispatch. Back-to-back asynchronous launches of 2.9 us kernels take 3.8 us each (3.4 us in
    // a CUDA graph): about 1 us of gap per kernel (A. Gray, "Getting Started with CUDA Graphs",
    // NVIDIA Technical Blog, 2019, developer.nvidia.com/blog/cuda-graphs/). 12 kernels x 1 us.
    opt.layer_overhead_s = 12e-6;
    // Host work per iteration: none serialised with the GPU. Most rows on this stack run vLLM's
    // V1 engine (0.11-0.23). V1 runs the API server and detokenisation in another process than
    // the engine core, and its asynchronous scheduler schedules step N+1 and applies the output
    // of step N while step N+1 runs on the GPU (vllm-project/vllm#19970, "overlapping scheduling
    // with model execution", experimental in mid-2025). It became the default in late 2025
    // (vllm-project/vllm#27614, as vllm-project/vllm-gaudi#768 names it; the SchedulerConfig
    // docstring of January 2026, vllm-project/vllm#32775: "If set to False, disable async
    // scheduling. Async scheduling helps to avoid gaps in GPU utilization"), so the rows of 0.19
    // and 0.23 run with it. Whether 0.11.1 (the ML.ENERGY rows) did is not established here; if
    // not, the serial part would be of the size of Scheduler.update_from_output, 0.142 ms for
    // 128 decoding requests and 0.287 ms for 256 (vllm-project/vllm#46112, a contributor's
    // micro-benchmark medians, V1 engine), plus schedule(): under 1% of those rows' steps.
    // The V0 engine's cost, 4 ms of GPU bubble per decode step (5-13 ms by workload) in vLLM's
    // own multi-step RFC (vllm-project/vllm#6854, July 2024), applies to no row here. TensorRT-
    // LLM's C++ executor (the MLPerf rows) has no Python request loop; its per-step figure is
    // not published.
    opt.step_overhead_s = 0.0;
    opt.step_overhead_per_sequence_s = 0.0;
    // Weight-only quantised GEMMs (TensorRT-LLM's W8A16/W4A16 kernels, vLLM's AWQ/GPTQ
    // kernels) read the packed weights and dequantise them inside the GEMM.
    opt.fused_dequant = true;
    // TensorRT-LLM scales 8-bit tensors per tensor or per channel, and its INT8/INT4
    // weight-only modes dequantise "on-the-fly in linear layers" (NVIDIA/TensorRT-LLM
    // docs/source/precision.md, v0.6): no group-wise metadata at 8 bits.
    opt.per_channel_8bit_scales = true;
    // Both engines run attention on the GPU only.
    opt.host_kv_attention = false;
    // Current engines read each K/V head once for its whole query group in decode: TensorRT-LLM's
    // XQA kernel ("reducing data loading", enabled by default, docs/source/advanced/
    // gpt-attention.md, XQA Optimization), FlashAttention-2's native MQA/GQA.
    opt.kv_read_per_query_head = false;
    // TensorRT-LLM gives the KV cache "90% of free GPU memory (after loading weights)" by default
    // (KvCacheConfig free_gpu_memory_fraction 0.9, docs/source/examples/kvcacheconfig.md). vLLM's
    // own share (gpu_memory_utilization) is the serving workload's (model/capacity.cpp
    // serving_capacity).
    opt.kv_pool_free_fraction = 0.9;

    // TensorRT-LLM as the docs/source/performance.md tables of v0.5 and v0.6.1 measured it: the
    // optimized stack, except that decode attention ran in the masked multi-head attention
    // kernel, whose "vanilla" version uses "a single CUDA thread-block per head"
    // (docs/source/gpt_attention.md of the same release, which has no other generation kernel).
    // XQA, which loads each K/V head once for its group, came later: experimental and off by
    // default at first (TRTLLM_ENABLE_XQA=1 in a later revision of performance.md), and it
    // needs a paged KV cache, which the documented Llama builds (no --paged_kv_cache) did not
    // have. It gave Llama-70B 2.4x the output throughput at input 128 / output 2048
    // (docs/source/blogs/XQA-kernel.md).
    ExecutionStack v06 = based_on(
        opt, "trtllm-v0.6",
        "TensorRT-LLM v0.5-v0.6 (its published performance tables): optimized, with decode "
        "attention reading K/V once per query head (masked MHA kernel, no XQA)");
    // TensorRT-LLM v0.5-v0.7 (Oct 2023 - Jan 2024) predate multi-head latent attention
    // (DeepSeek-V2, May 2024): they have no DeepSeek model to build.
    v06.mla_cache.reset();
    // Nor FP4 GEMMs, which came with Blackwell support (TensorRT-LLM 0.17, 2025).
    v06.fp4_gemm_efficiency = 0;
    // The blocks of one KV head's query heads are neighbours in the grid ({heads, batch}, head
    // fastest; hi_kv = hi / (heads / kv_heads) in decoderMaskedMultiheadAttentionTemplate.h), so
    // the repeated reads hit in L2: layer_kernel_s charges them at the GPU's L2 rate where the
    // catalog gives one (GpuSpec::l2_shared_read_gbps), else at the memory rate.
    v06.kv_read_per_query_head = true;
    // Its context FMHA kernels (2023) predate FlashAttention-3 and publish no achieved rate:
    // prefill attention stays at the GEMM rate.
    v06.prefill_attention_kernel = FusedAttentionKernel::kUnpublished;
    // Its GEMMs did not hide the weight stream under the math. The A100 FP16 first-token
    // latencies of the same performance.md (batch 1, v0.5) grow linearly with the prompt, and the
    // line's intercept is the time to stream the GPU's weights once (fp16, at 80% of 2039 GB/s),
    // where one overlapped roofline puts it near zero: LLaMA-7B 16 ms at 128 tokens and 133 ms at
    // 2048, intercept 8.2 ms, weights 8.3 ms; LLaMA-70B TP4 47 and 377 ms, intercept 25.0 ms,
    // weights 21.2 ms (plus 160 all-reduces); Falcon-180B TP8 61 and 509 ms, intercept 31.1 ms,
    // weights 27.6 ms (plus 160 all-reduces). GPT-J 6B (12 and 129 ms, intercept 4.2 ms, weights
    // 7.4 ms) overlaps partly. No number is taken from these rows: the rule is streaming plus
    // math, both at the stack's efficiencies. The rule itself was chosen from them, so
    // scenarios/validation/derivations.yaml lists it as derived from the four A100 rows.
    v06.gemm_hides_weight_reads = false;
    // gptSessionBenchmark of that release allocated the (non-paged) KV cache for the benchmarked
    // batch and lengths, not a share of free memory; the documented Llama builds had no
    // --paged_kv_cache.
    v06.kv_pool_free_fraction = 0;
    // One max_attention_window_size for every layer (a cyclic cache of that many tokens): a
    // model that slides on some layers only keeps every token on all of them.
    v06.window_cache_interleaved = false;
    // gptSessionBenchmark's C++ session: no published measurement of its per-step host time
    // (decoder setup, the sampling layers, the per-step synchronisation) was found, so none is
    // charged. The A100 first-token rows above bound it without giving a value: LLaMA-7B's
    // intercept (8.2 ms) is the weight stream alone (8.3 ms), leaving no room for a fixed cost;
    // LLaMA-70B TP4's (25.0 ms) leaves 3.8 ms for the 160 all-reduces and any fixed cost together.
    v06.step_overhead_s = 0.0;
    v06.step_overhead_per_sequence_s = 0.0;

    // TensorRT-LLM v0.7 as its H200 blogs measured it (docs/source/blogs/Falcon180B-H200.md and
    // XQA-kernel.md, "TensorRT-LLM v0.7a", static batches: out_tps = output_seqlen x batch_size
    // / total_latency / tp): v0.6's engine with the XQA generation kernel, which reads each K/V
    // head once for its query group ("reducing data loading", docs/source/advanced/
    // gpt-attention.md, XQA Optimization). Nothing else is taken to differ from v0.6: the same
    // GEMMs and context kernels, the KV cache allocated for the benchmarked batch. The blog's own
    // pair tests just this difference: Llama-70B on one H200, 128 in, 2,048 out, 1,227 tokens/s
    // per GPU without XQA and 2,941 with it (2.4x).
    ExecutionStack v07 = based_on(
        v06, "trtllm-v0.7",
        "TensorRT-LLM v0.7 (its H200 blogs): trtllm-v0.6 with the XQA generation kernel, decode "
        "attention reading each K/V head once for its query group");
    v07.kv_read_per_query_head = false;

    // The same with DeepSpeed v0.7: v0.7.2, the release of the ZeRO-Inference blog (2022-09), and
    // v0.7.7, the release FlexGen's DeepSpeed baseline ran (FlexGen
    // benchmark/third_party/README.md: "microsoft/DeepSpeed: v0.7.7", forked in
    // benchmark/third_party/DeepSpeed); their gather is the same code. It has no one-GPU
    // shortcut: partition_parameters.py all_gather_coalesced copies each parameter's partition to
    // the GPU (`p.ds_tensor.to(torch.cuda.current_device())`, blocking) and then copies in GPU
    // memory by the path its call takes. A call of one parameter all-gathers that copy into a new
    // buffer the parameter views: with several ranks the all-gather is the only move, with one
    // NCCL copies input to output (one copy). A call of several torch.cat's their partitions into
    // the flat buffer (1/ranks of each parameter), all-gathers in place, and
    // AllGatherCoalescedHandle.wait torch.cat's each parameter out of it (one copy; torch.cat of
    // one tensor still makes a new one). Which calls happen is the coordinator's affair
    // (model/zero3_swap.hpp zero3_v07_gather_call_sizes): under DeepSpeed's default persistence
    // threshold a Linear whose bias stays on the GPU gathers its weight alone; with threshold 0
    // (FlexGen's hf_opt.py) weight and bias go together. All of it runs on the coordinator's one
    // gather stream (partitioned_param_coordinator.py __all_gather_params and fetch_sub_module:
    // `with torch.cuda.stream(self.__allgather_stream)`), and the next blocking host copy on that
    // stream waits for the copies, so the link idles while they run.
    // Later releases give one GPU NoGatherHandle / NoGatherCoalescedHandle (`if
    // self.num_partitions == 1: return _no_gather_coalesced(params)`): one non-blocking copy
    // straight into the parameter, no device copies (the default stack).
    ExecutionStack ds07 = based_on(
        hf, "hf-deepspeed-0.7",
        "eager PyTorch with DeepSpeed v0.7 ZeRO-3 (GPU copies in the parameter gather: one per "
        "parameter gathered alone on one GPU, 1 + 1/ranks per parameter gathered with others)");
    ds07.zero3_gather_copies_v07 = true;
    // A parameter offloaded to NVMe takes the same gather: swap_in reads its partition into a
    // pinned swap buffer and points ds_tensor at it, and all_gather_coalesced copies it to the
    // GPU with the same blocking `.to()` and the copies above (v0.7.2 partition_parameters.py:
    // _ensure_availability_of_partitioned_params, then all_gather_coalesced), so in v0.7.2, the
    // release of the ZeRO-Inference blog (2022-09), as in v0.7.7, a read and the copy of what was
    // read never overlap. With prefetching, the reads of later parameters that the hooks issue
    // (__prefetch_nvme_param_partitions) run beside those copies as far as the swap buffers allow:
    // model/zero3_swap.hpp, which the inference workload follows.
    ds07.zero3_swap_in_copy_in_gather = true;

    // TensorRT-LLM as `trtllm-bench throughput` runs it in 2025 (PyTorch backend, releases
    // 0.19-1.0; the throughput tables of docs/source/performance/perf-overview.md): the optimized
    // stack (XQA decode attention, FP8 GEMMs, CUDA graphs; the overlap scheduler, on by default
    // in the PyTorch backend, prepares the next iteration while this one runs, so no host step is
    // serialised) with in-flight batching whose capacity scheduler runs its default policy,
    // GUARANTEED_NO_EVICT (SchedulerConfig capacity_scheduler_policy, default GUARANTEED_NO_EVICT;
    // docs/source/performance/performance-tuning-guide/useful-runtime-flags.md: "guarantee that
    // a started request is never paused"). cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp
    // GuaranteedNoEvictScheduler: the requests in progress are scheduled and the blocks they
    // still need to complete are reserved; pending requests are then taken in order while the
    // blocks of their prompt plus max_tokens fit in what is left (the first that does not stops
    // the scan), with no watermark. MAX_UTILIZATION, which may pause started requests, is the
    // other policy; trtllm-bench leaves the default.
    // vLLM's V0 engine (the default engine through 0.7; 0.8.0, 2025-03, made V1 the default):
    // the optimized stack with the host work of each step serialised with the GPU. V0's engine
    // loop takes the sampled tokens back to the host, turns them into Python outputs, runs the
    // scheduler and prepares the next step's input metadata while the GPU waits: "GPU is often
    // idle, waiting for CPU operations (5-13ms of GPU bubble)", each bubble "about 4ms" in the
    // profile of a decode step there (vllm-project/vllm#6854, the multi-step scheduling RFC,
    // 2024-07, V0 of 0.5). The 4 ms is taken per step, whatever the batch. Later V0 releases
    // (0.6, 2024-09) overlap the output processing with the next step, which may shrink the gap;
    // no later figure was found. A check: a fixed gap per step leaves the GPU idle the more, the
    // shorter the step, as the GPU utilisation published with the databasemart RTX 4090 runs
    // shows (64% for 1.5-3B models, 81-89% for 7-8B: scenarios/reference/dbm-*). V0's multi-step
    // scheduling (--num-scheduler-steps, off by default) would amortise the gap; V1 overlaps it
    // (the optimized stack above).
    ExecutionStack v0 = based_on(
        opt, "vllm-v0",
        "vLLM's V0 engine (default through 0.7): optimized, with about 4 ms of host work per step "
        "(output processing, scheduling, input preparation) that the GPU waits for");
    v0.step_overhead_s = 4e-3;
    v0.enforces_trained_context = true;
    // One block table for all layers: an interleaved model (Gemma-2) keeps every token.
    v0.window_cache_interleaved = false;

    ExecutionStack bench = based_on(
        opt, "trtllm-bench",
        "TensorRT-LLM 0.19-1.0 PyTorch backend as trtllm-bench runs it: optimized, KV pool of "
        "90% of free memory, GUARANTEED_NO_EVICT admission (no running request is ever evicted)");
    bench.kv_admission = KvAdmission::kGuaranteedNoEvict;
    // The pool is KvCacheConfig free_gpu_memory_fraction of the memory free after the model and
    // the runtime's buffers (trtllm-bench --kv_cache_free_gpu_mem_fraction, default 0.90;
    // perf-overview.md: "we also use a higher KV cache percentage by setting
    // --kv_cache_free_gpu_mem_fraction 0.95 ... We fall back to 0.90 or lower if out-of-memory
    // errors are encountered", without saying which rows ran which; the default is taken).
    bench.kv_pool_free_fraction = 0.90;
    bench.serving_pool_from_free_memory = true;

    // Hugging Face Accelerate's CPU offload (accelerate 0.15 with transformers 4.24, as FlexGen's
    // Hugging Face baseline runs it: benchmark/hf_ds/hf_opt.py, a device_map with the decoder
    // layers on "cpu"): dispatch_model hooks every leaf module of the offloaded layers
    // (AlignDevicesHook, offload=True); its pre_forward copies each of the module's tensors to
    // the GPU from the CPU state dict (set_module_tensor_to_device, `value.to(device)`), its
    // post_forward drops them to the meta device. So no parameter stays on the GPU between
    // passes, small ones included: eager PyTorch without ZeRO-3's persistence. Pageable memory,
    // no prefetch are the scenario's policy (pin_memory: false, prefetch_layers: 0).
    ExecutionStack acc = based_on(
        hf, "hf-accelerate",
        "eager PyTorch with Hugging Face Accelerate's offload hooks: every tensor of an offloaded "
        "module copied to the GPU each time the module runs, none kept between passes");
    acc.zero3_persistence = false;
    acc.zero3_partitioning = false;

    // Hugging Face transformers 4.36 and later on PyTorch 2.1.1 or later (offloading, where the
    // scenario offloads, as the default stack does): attention runs in PyTorch's
    // scaled_dot_product_attention, which transformers uses by default where the model has an
    // implementation and torch >= 2.1.1 (transformers docs, GPU inference, "PyTorch scaled dot
    // product attention", v4.45 to v4.49). SDPA dispatches to its FlashAttention-2 kernel (sm80
    // and later, fp16/bf16) or its memory-efficient kernel (older GPUs, or an explicit attention
    // mask, which transformers passes for padded batches); neither writes the s x s score matrix
    // to GPU memory (PyTorch docs, torch.nn.functional.scaled_dot_product_attention: "three
    // supported implementations", of which only the C++ math fallback materialises it). So
    // prefill keeps no score matrix, and its attention runs at the GEMM rate (which rate SDPA's
    // kernels reach by GPU is not published here). Everything else is the default stack's:
    // kernel launches per layer, dequantisation, and decode attention reading each KV head once
    // (the expanded copy transformers' repeat_kv makes of K and V for grouped-query models before
    // the SDPA call is left out, as it is for the default stack).
    ExecutionStack sdpa = based_on(
        hf, "hf-sdpa",
        "eager PyTorch, Hugging Face transformers 4.36 or later with its default SDPA attention "
        "(no score matrix in GPU memory)");
    sdpa.fused_attention = true;

    // The table, in the order stack_names() lists it.
    return std::vector<ExecutionStack>{hf, opt, v06, v07, ds07, v0, bench, acc, sdpa};
  }();
  return kStacks;
}

}  // namespace

const std::vector<std::string>& stack_names() {
  static const std::vector<std::string> kNames = entry_names(stack_table());
  return kNames;
}

const ExecutionStack& execution_stack(const std::string& name) {
  return named_entry(stack_table(), name, "execution stack");
}

double decode_kv_reads(const ExecutionStack& stack, int heads, int kv_heads) {
  if (!stack.kv_read_per_query_head || kv_heads <= 0) return 1.0;
  return double(heads) / double(kv_heads);
}

KvCacheShape stack_kv_cache(const ExecutionStack& stack, const LlmSpec& m, double bytes_per_elem,
                            double tp) {
  return kv_cache_shape(m, stack.mla_cache.value_or(KvCacheForm::kPerHead), bytes_per_elem, tp);
}

namespace {
// The HybridCache transformers builds for a Gemma-2 or Gemma-3 model on a stack that follows the
// model's generation config.
bool hybrid_cache(const ExecutionStack& stack, const LlmSpec& m) {
  return stack.generation_config_cache && generation_config_hybrid_cache(m);
}
}  // namespace

bool stack_reads_window(const ExecutionStack& stack, const LlmSpec& m) {
  return m.sliding_layers() > 0 && (stack.window_cache || hybrid_cache(stack, m));
}

double stack_window_context(const ExecutionStack& stack, const LlmSpec& m, double context) {
  return stack_reads_window(stack, m) ? mean_attended_context(m, context) : context;
}

bool stack_caches_window(const ExecutionStack& stack, const LlmSpec& m, bool kv_tiers) {
  if (m.sliding_layers() == 0) return false;
  if (!stack.window_cache) return hybrid_cache(stack, m);
  if (kv_tiers && !stack.window_cache_with_kv_tiers) return false;
  return m.full_attention_layers == 0 || stack.window_cache_interleaved;
}

double stack_cached_context(const ExecutionStack& stack, const LlmSpec& m, double context,
                            bool kv_tiers) {
  return stack_caches_window(stack, m, kv_tiers) ? mean_window_context(m, context) : context;
}

bool native_fp8_gemm(const ExecutionStack& stack, const GpuSpec& gpu, int weight_bits) {
  return stack.fp8_gemm_efficiency > 0 && weight_bits == 8 && gpu.fp8_tflops > 0;
}

bool native_fp4_gemm(const ExecutionStack& stack, const GpuSpec& gpu, int weight_bits) {
  return stack.fp4_gemm_efficiency > 0 && weight_bits == 4 && gpu.fp4_tflops > 0;
}

}  // namespace tiersim
