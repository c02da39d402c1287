#pragma once
// Achieved throughput of the fused attention kernels that serving engines run for prefill, from
// the kernels' published benchmarks. A fused attention kernel does not run at the rate of the
// stack's GEMMs: its two matmuls per tile are interleaved with the online softmax (exponentials
// on the special-function units, row maxima and rescaling), and the causal mask leaves tiles
// half-empty along the diagonal, so it reaches a smaller share of the tensor-core peak, and a
// smaller one still at short sequences (fewer key tiles per query tile to amortise each query
// tile's prologue and epilogue over). Pure data and lookup; model/perf.hpp prefill_attention
// applies it.
#include <optional>
#include <string>

namespace tiersim {

// The fused attention kernel an execution stack runs for prefill (ExecutionStack,
// model/stack.hpp).
enum class FusedAttentionKernel {
  // No published rate for the stack's kernel: prefill attention runs at the stack's GEMM rate.
  kUnpublished,
  // FlashAttention as vLLM ships it (vllm-project/flash-attention): FlashAttention-3 on Hopper,
  // FlashAttention-2 on other NVIDIA GPUs. vLLM selects FA3 on compute capability 9.x and FA2
  // otherwise (vllm-project/vllm#12093, "Flash Attention 3 Support", merged 2025-01; default on
  // Hopper since v0.7.0, vllm-project/vllm#15231; get_flash_attn_version: `if
  // device_capability[0] == 9: fa_version = 3`, vllm-project/vllm#14244).
  kFlashAttention,
};

// Achieved fraction of the dense fp16/bf16 tensor peak of the kernel's forward pass on a GPU of
// generation `arch` (GpuSpec::arch) for heads of `head_dim`, with a causal mask or without, where
// each query attends to `seqlen` keys. FLOPs are counted as the kernels' benchmarks count them: 4
// x seqlen^2 x head_dim per head without a mask, half of that with one. Interpolated linearly in
// log2(seqlen) and in head_dim between the published points, clamped at the table's ends
// (sequences beyond 16K keys run at the 16K rate: the published curves are flat by 8-16K).
// nullopt where no published table covers the generation: the caller keeps the GEMM rate. The
// fractions are of the measured board's peak at the benchmark's clock, applied to every GPU of
// the generation at its own catalog peak (the way the catalog's rates_from carries a measured
// sibling's achieved fraction to a GPU without measurements).
std::optional<double> fused_attention_peak_fraction(FusedAttentionKernel kernel,
                                                    const std::string& arch, int head_dim,
                                                    bool causal, double seqlen);

// The board the generation's table was measured on ("" where there is no table), for the
// catalog listing and for messages: GPUs of the generation other than this one inherit its
// fraction of peak.
std::string fused_attention_measured_on(FusedAttentionKernel kernel, const std::string& arch);

}  // namespace tiersim
