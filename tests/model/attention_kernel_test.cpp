// The published rates of fused attention kernels (model/attention_kernel.hpp): the table's points,
// its interpolation and clamping, and the generations it does not cover.
#include <catch2/catch.hpp>

#include <cmath>

#include "model/attention_kernel.hpp"

namespace model_attention_kernel_test {

using namespace tiersim;

namespace {
constexpr auto kFa = FusedAttentionKernel::kFlashAttention;
// The H100 SXM5's dense fp16 peak at the FlashAttention-3 benchmark's clock [TFLOPS].
constexpr double kPeak = 989.0;
}  // namespace

TEST_CASE("FlashAttention-3 on Hopper gives the paper's rates at its sequence lengths",
          "[model][attention_kernel]") {
  // Shah et al. 2024, Figure 5 (d) and (c): head dimension 128, causal 292 at 512 and 616 at
  // 16K, unmasked 648 at 16K; (b): head dimension 64, causal 473 at 16K.
  CHECK(*fused_attention_peak_fraction(kFa, "hopper", 128, true, 512) == Approx(292 / kPeak));
  CHECK(*fused_attention_peak_fraction(kFa, "hopper", 128, true, 16384) == Approx(616 / kPeak));
  CHECK(*fused_attention_peak_fraction(kFa, "hopper", 128, false, 16384) ==
        Approx(648 / kPeak));
  CHECK(*fused_attention_peak_fraction(kFa, "hopper", 64, true, 16384) == Approx(473 / kPeak));
  CHECK(fused_attention_measured_on(kFa, "hopper") == "H100-SXM");
}

TEST_CASE("the attention table interpolates in log sequence length and head size and clamps",
          "[model][attention_kernel]") {
  // Halfway between 2K (521) and 4K (579) in log2: sqrt(2) x 2048 keys.
  CHECK(*fused_attention_peak_fraction(kFa, "hopper", 128, true, 2048 * std::sqrt(2.0)) ==
        Approx((521 + 579) / 2.0 / kPeak));
  // Beyond 16K the 16K rate (the curves are flat there); below 512 the 512 rate.
  CHECK(*fused_attention_peak_fraction(kFa, "hopper", 128, true, 100000) ==
        Approx(616 / kPeak));
  CHECK(*fused_attention_peak_fraction(kFa, "hopper", 128, true, 16) == Approx(292 / kPeak));
  // Head size 96 (Phi-3): halfway between the 64 and 128 curves; 256 takes the 128 curve.
  CHECK(*fused_attention_peak_fraction(kFa, "hopper", 96, true, 16384) ==
        Approx((473 + 616) / 2.0 / kPeak));
  CHECK(*fused_attention_peak_fraction(kFa, "hopper", 256, false, 8192) == Approx(646 / kPeak));
  // The causal kernel is slower than the unmasked one at every length, most at short ones.
  for (double n : {512.0, 1024.0, 4096.0, 16384.0})
    CHECK(*fused_attention_peak_fraction(kFa, "hopper", 128, true, n) <
          *fused_attention_peak_fraction(kFa, "hopper", 128, false, n));
}

TEST_CASE("generations and kernels without a published table give no rate",
          "[model][attention_kernel]") {
  CHECK_FALSE(fused_attention_peak_fraction(kFa, "ampere", 128, true, 4096));
  CHECK_FALSE(fused_attention_peak_fraction(kFa, "ada", 128, true, 4096));
  CHECK_FALSE(fused_attention_peak_fraction(kFa, "blackwell", 128, true, 4096));
  CHECK_FALSE(fused_attention_peak_fraction(FusedAttentionKernel::kUnpublished, "hopper", 128,
                                            true, 4096));
  CHECK(fused_attention_measured_on(kFa, "ampere").empty());
}

}  // namespace model_attention_kernel_test
