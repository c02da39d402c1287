#include "model/attention_kernel.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace tiersim {

namespace {

// Sequence lengths of the published benchmarks: 512 to 16K keys, doubling.
constexpr std::array<double, 6> kSeqlens = {512, 1024, 2048, 4096, 8192, 16384};

struct KernelCurve {
  int head_dim;
  bool causal;
  std::array<double, 6> tflops;  // [TFLOPS] at kSeqlens
};

struct ArchTable {
  FusedAttentionKernel kernel;
  const char* arch;
  const char* measured_on;  // catalog name of the measured board
  double peak_tflops;       // [TFLOPS] the board's dense fp16 peak at the benchmark's clock
  std::array<KernelCurve, 4> curves;
};

// FlashAttention-3 forward pass, FP16/BF16, on an H100 80GB SXM5: Shah, Bikshandi, Zhang,
// Thakkar, Ramani and Dao, "FlashAttention-3: Fast and Accurate Attention with Asynchrony and
// Low-precision" (NeurIPS 2024, arXiv 2407.08608), Figure 5 (a)-(d), the FlashAttention-3 bars.
// Batch x sequence length = 16K tokens, hidden size 2048 (32 heads of 64 or 16 of 128), the GPU
// clock fixed at 1830 MHz, "the clock speed used to calculate the 989 TFLOPS FP16 theoretical max
// throughput" (appendix C.1); FLOPs 4 x seqlen^2 x head_dim x heads, halved with the causal mask
// (section 4.1). Values as labelled on the bars. One reading of panel (c) at 512 swaps the
// FlashAttention-3 and cuDNN labels (497 / 467); 467 is taken, since in every other panel cuDNN
// is the faster of the two at 512. Head dimension 256 is left out: only its 16K points are
// available here (756 without and 642 with the mask), so larger heads take the 128 curve,
// which is lower.
// vLLM's FA3 call differs from the benchmark's (a paged KV cache of 16-token blocks read through
// a page table, grouped-query heads, variable-length sequences in one launch); no published
// measurement of that cost was found, so none is charged.
// FlashAttention-2 on other generations: the FA2 paper's A100 figures (Dao, 2023, arXiv
// 2307.08691, Figure 5) were not available as numbers here; its abstract gives only the range,
// "50-73% of the theoretical maximum FLOPs/s on A100", and Tri Dao "FA2 on A100 is already at
// around 70% theoretical max FLOPS" (Dao-AILab/flash-attention#1059), neither by sequence
// length. Those GPUs keep the stack's GEMM rate until a table by sequence length is entered.
constexpr ArchTable kHopperFa3 = {
    FusedAttentionKernel::kFlashAttention,
    "hopper",
    "H100-SXM",
    989.0,
    {{
        {64, false, {333, 392, 460, 476, 496, 497}},   // Figure 5(a)
        {64, true, {197, 265, 371, 420, 460, 473}},    // Figure 5(b)
        {128, false, {467, 565, 625, 638, 646, 648}},  // Figure 5(c)
        {128, true, {292, 423, 521, 579, 602, 616}},   // Figure 5(d)
    }},
};

constexpr std::array<const ArchTable*, 1> kTables = {&kHopperFa3};

const ArchTable* table_for(FusedAttentionKernel kernel, const std::string& arch) {
  for (const ArchTable* t : kTables)
    if (t->kernel == kernel && arch == t->arch) return t;
  return nullptr;
}

// [TFLOPS] of one curve at `seqlen`, linear in log2(seqlen), clamped at the ends.
double curve_at(const KernelCurve& c, double seqlen) {
  const double x = std::log2(std::clamp(seqlen, kSeqlens.front(), kSeqlens.back()));
  for (std::size_t i = 1; i < kSeqlens.size(); ++i) {
    const double x1 = std::log2(kSeqlens[i]);
    if (x <= x1) {
      const double x0 = std::log2(kSeqlens[i - 1]);
      const double f = (x - x0) / (x1 - x0);
      return c.tflops[i - 1] + f * (c.tflops[i] - c.tflops[i - 1]);
    }
  }
  return c.tflops.back();
}

}  // namespace

std::optional<double> fused_attention_peak_fraction(FusedAttentionKernel kernel,
                                                    const std::string& arch, int head_dim,
                                                    bool causal, double seqlen) {
  const ArchTable* t = table_for(kernel, arch);
  if (!t) return std::nullopt;
  // The curves of this mask, in rising head_dim.
  const KernelCurve* lo = nullptr;
  const KernelCurve* hi = nullptr;
  for (const KernelCurve& c : t->curves) {
    if (c.causal != causal) continue;
    if (c.head_dim <= head_dim && (!lo || c.head_dim > lo->head_dim)) lo = &c;
    if (c.head_dim >= head_dim && (!hi || c.head_dim < hi->head_dim)) hi = &c;
  }
  if (!lo) lo = hi;
  if (!hi) hi = lo;
  double tflops = curve_at(*lo, seqlen);
  if (hi != lo) {
    const double f = double(head_dim - lo->head_dim) / double(hi->head_dim - lo->head_dim);
    tflops += f * (curve_at(*hi, seqlen) - tflops);
  }
  return tflops / t->peak_tflops;
}

std::string fused_attention_measured_on(FusedAttentionKernel kernel, const std::string& arch) {
  const ArchTable* t = table_for(kernel, arch);
  return t ? t->measured_on : "";
}

}  // namespace tiersim
