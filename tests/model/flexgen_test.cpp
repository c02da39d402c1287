// FlexGen's placement rule (flex_opt.py init_weight_list / get_choice), its KV-cache split
// (pytorch_backend.py TorchMixedDevice.init_cache_one_gpu_batch) and its GPU working set.
#include <catch2/catch.hpp>

#include <algorithm>

#include "model/capacity.hpp"
#include "model/layout.hpp"
#include "model/perf.hpp"

namespace model_flexgen_test {

using namespace tiersim;

namespace {

// OPT's attention block as FlexGen lists it: four h x h matrices, each followed by its bias,
// then the layer norm's weight and bias.
std::vector<double> attention_list(double h) {
  return {h * h, h, h * h, h, h * h, h, h * h, h, h, h};
}
// The MLP block: fc1 (4h x h), its bias (4h), fc2 (h x 4h), its bias, the layer norm.
std::vector<double> mlp_list(double h) {
  return {4 * h * h, 4 * h, 4 * h * h, h, h, h};
}

LlmSpec opt(int layers, int hidden, int heads) {
  LlmSpec m;
  m.name = "opt-test";
  m.family = "opt";
  m.layers = layers;
  m.hidden = hidden;
  m.ffn = 4 * hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.vocab = 50272;
  m.learned_positions = true;
  m.max_positions = 2048;
  return m;
}

}  // namespace

TEST_CASE("FlexGen places whole tensors by their midpoint, disk then CPU then GPU",
          "[model][layout][flexgen]") {
  const double h = 7168;  // OPT-30B
  SECTION(
      "--percent 20 80: only the out projection and the small tensors at the end reach the GPU") {
    const auto att = flexgen_tensor_homes(attention_list(h), 0, 80, 20);
    // w_q, w_k, w_v midpoints at ~12.5/37.5/62.5% -> CPU; w_out at ~87.5% -> GPU.
    CHECK(att[0] == Tier::kCpu);
    CHECK(att[2] == Tier::kCpu);
    CHECK(att[4] == Tier::kCpu);
    CHECK(att[6] == Tier::kGpu);
    CHECK(att[8] == Tier::kGpu);  // layer norm, at the very end
    CHECK(att[1] == Tier::kCpu);  // q's bias sits right after w_q: ~25% -> CPU, not the GPU
    const auto mlp = flexgen_tensor_homes(mlp_list(h), 0, 80, 20);
    CHECK(mlp[0] == Tier::kCpu);  // fc1 at 25%
    CHECK(mlp[2] == Tier::kCpu);  // fc2 at ~75%
    CHECK(mlp[5] == Tier::kGpu);
  }
  SECTION("--percent 0 50 (50% disk): w_q, w_k and fc1 on disk, w_v, w_out and fc2 on the CPU") {
    const auto att = flexgen_tensor_homes(attention_list(h), 50, 50, 0);
    CHECK(att[0] == Tier::kNvme);
    CHECK(att[2] == Tier::kNvme);
    CHECK(att[4] == Tier::kCpu);
    CHECK(att[6] == Tier::kCpu);
    const auto mlp = flexgen_tensor_homes(mlp_list(h), 50, 50, 0);
    CHECK(mlp[0] == Tier::kNvme);
    CHECK(mlp[2] == Tier::kCpu);
  }
  SECTION("--percent 4 96: no matrix reaches the GPU") {
    const auto att = flexgen_tensor_homes(attention_list(h), 0, 96, 4);
    for (int i : {0, 2, 4, 6}) CHECK(att[static_cast<std::size_t>(i)] == Tier::kCpu);
    const auto mlp = flexgen_tensor_homes(mlp_list(h), 0, 96, 4);
    CHECK(mlp[0] == Tier::kCpu);
    CHECK(mlp[2] == Tier::kCpu);
  }
  SECTION("all on one device") {
    for (Tier t : flexgen_tensor_homes(attention_list(h), 0, 0, 100)) CHECK(t == Tier::kGpu);
    for (Tier t : flexgen_tensor_homes(attention_list(h), 0, 100, 0)) CHECK(t == Tier::kCpu);
    for (Tier t : flexgen_tensor_homes(attention_list(h), 100, 0, 0)) CHECK(t == Tier::kNvme);
  }
}

TEST_CASE("the effective weight split differs from the requested one", "[model][layout][flexgen]") {
  const LlmSpec m = opt(48, 7168, 56);  // OPT-30B's shape
  FlexGenPolicy fg;
  fg.w_gpu_percent = 20;
  fg.w_cpu_percent = 80;
  const Placement eff = flexgen_weight_placement(flexgen_sublayers(m, fg));
  // One h x h matrix of the 12 h^2 per layer (8.3%) plus the embeddings' placement.
  CHECK(eff.gpu < 0.12);
  CHECK(eff.gpu > 0.05);
  CHECK(eff.gpu + eff.cpu == Approx(1.0));
  fg.w_gpu_percent = 0;
  fg.w_cpu_percent = 50;
  const Placement half = flexgen_weight_placement(flexgen_sublayers(m, fg));
  CHECK(half.nvme == Approx(0.5).margin(0.02));
  CHECK(half.gpu == Approx(0.0).margin(1e-3));
}

TEST_CASE("compressed weights take 0.5625 bytes per element", "[model][layout][flexgen]") {
  const LlmSpec m = opt(2, 1024, 16);
  FlexGenPolicy fg;
  fg.compress_weight = true;
  const auto subs = flexgen_sublayers(m, fg);
  const auto& att = subs[1];
  REQUIRE(att.kind == FlexGenSubLayer::Kind::kAttention);
  CHECK(att.tensors[0].bytes == Approx(1024.0 * 1024 * 0.5625));
  CHECK(att.tensors[1].bytes == Approx(1024.0 * 2));  // biases are never compressed
}

TEST_CASE("the KV cache is split by whole sequences", "[model][layout][flexgen]") {
  FlexGenPolicy fg;
  fg.gpu_batch_size = 10;
  fg.cache_gpu_percent = 25;
  fg.cache_cpu_percent = 50;
  const FlexGenCacheSplit s = flexgen_cache_split(fg, 8);
  CHECK(s.gpu_seqs == 2);  // int(80 * 0.25) = 20 -> floor to 16 = 2 sequences
  CHECK(s.cpu_seqs == 5);
  CHECK(s.disk_seqs == 3);
  fg.cache_gpu_percent = 0;
  fg.cache_cpu_percent = 0;
  CHECK(flexgen_cache_split(fg, 8).disk_seqs == 10);
  fg.cache_gpu_percent = 25;
  fg.cache_cpu_percent = 75;  // no disk share: the CPU takes the rest
  const FlexGenCacheSplit nd = flexgen_cache_split(fg, 8);
  CHECK(nd.gpu_seqs == 2);
  CHECK(nd.cpu_seqs == 8);
  CHECK(nd.disk_seqs == 0);
}

namespace {

Scenario t4_scenario(const LlmSpec& m, const FlexGenPolicy& fg, int prompt, int gen = 32) {
  Scenario s;
  s.hardware.gpu.name = "T4";
  s.hardware.gpu.memory_mib = 15360;
  s.hardware.gpu.memory_reserved_mib = 393;
  s.hardware.gpu.arch = "turing";
  s.hardware.gpu.sm_count = 40;
  s.hardware.host.dram_gb = 223;
  s.hardware.nvme.count = 4;
  s.hardware.nvme.drive.capacity_tb = 0.375;
  s.model = m;
  s.policy.schedule = Schedule::kFlexGen;
  s.policy.flexgen = fg;
  s.inference.batch = fg.gpu_batch_size * fg.num_gpu_batches;
  s.inference.prompt_tokens = prompt;
  s.inference.gen_tokens = gen;
  return s;
}

}  // namespace

TEST_CASE("FlexGen's GPU working set: one GPU batch, two staged sub-layers",
          "[model][capacity][flexgen]") {
  ExecutionModel em;
  const LlmSpec m30 = opt(48, 7168, 56);
  FlexGenPolicy fg;
  fg.w_gpu_percent = 20;
  fg.w_cpu_percent = 80;
  fg.cache_gpu_percent = 0;
  fg.cache_cpu_percent = 100;
  fg.act_gpu_percent = 0;
  fg.act_cpu_percent = 100;
  fg.gpu_batch_size = 48;
  fg.num_gpu_batches = 3;
  fg.cpu_cache_compute = true;
  // FlexGen's published OPT-30B policy (bench_suite.py 30b_1x1, prompt 512) fits a 16 GB T4.
  const CapacityReport ok = flexgen_capacity(t4_scenario(m30, fg, 512), em);
  CHECK(ok.fits);
  double staged = 0, activations = 0;
  for (const auto& it : ok.tiers[0].items) {
    if (it.what.find("staged") != std::string::npos) staged = it.bytes;
    if (it.what.find("prefill peak") != std::string::npos) activations = it.bytes;
  }
  // Two consecutive sub-layers' off-GPU matrices in fp16: an MLP (8 h^2) with the next attention
  // block (3 h^2: its out projection is GPU-homed), or the last MLP with the output embedding's
  // CPU-homed copy of the token embedding (v x h), whichever is larger.
  const double h = 7168;
  CHECK(staged == Approx(std::max(8 * h * h + 3 * h * h, 8 * h * h + 50272 * h) * 2).epsilon(0.01));
  CHECK(activations > 0);
  // The working set grows with the GPU batch, not with the number of GPU batches.
  fg.num_gpu_batches = 12;
  const CapacityReport more = flexgen_capacity(t4_scenario(m30, fg, 512), em);
  CHECK(more.tiers[0].required_bytes == Approx(ok.tiers[0].required_bytes));
  fg.num_gpu_batches = 3;
  fg.gpu_batch_size = 480;
  CHECK_FALSE(flexgen_capacity(t4_scenario(m30, fg, 512), em).fits);
  // Without CPU attention every decode step ships the K/V prefix of two GPU batches to the GPU:
  // with a long generation after a short prompt that, not the prefill, sets the peak.
  fg.gpu_batch_size = 48;
  const CapacityReport on_cpu = flexgen_capacity(t4_scenario(m30, fg, 64, 1984), em);
  fg.cpu_cache_compute = false;
  const CapacityReport shipped = flexgen_capacity(t4_scenario(m30, fg, 64, 1984), em);
  CHECK(shipped.tiers[0].required_bytes > on_cpu.tiers[0].required_bytes);
  bool decode_peak = false;
  for (const auto& it : shipped.tiers[0].items)
    decode_peak = decode_peak || it.what.find("decode peak") != std::string::npos;
  CHECK(decode_peak);
}

TEST_CASE("4-bit decompression reads the packed codes at half a byte per element",
          "[model][perf][flexgen]") {
  // compression.py TorchCompressedDevice.decompress: `packed >> 4` and `packed & 0xF` each read
  // the whole packed tensor and write a uint8 temporary as large; the two copies into the fp16
  // output each read one temporary. Four passes over N/2 bytes for N elements (4 bits each),
  // besides the fp16 writes and the div_ / add_ passes.
  const double packed_per_elem = 4.0 / 8.0;
  const double fp16_passes = (2.0 + 2.0) * 2;  // div_(scale), add_(min): read + write fp16
  for (double strided_write : {1.0, 2.0}) {
    const double copies_write = 2 * strided_write;
    const double packed_traffic =
        flexgen_decompress_bytes_per_elem(strided_write) - fp16_passes - copies_write;
    CHECK(packed_traffic == Approx(6 * packed_per_elem));  // 2 reads + 2 writes + 2 reads
  }
  CHECK(kFlexGenCacheDecompressBytesPerElem > kFlexGenWeightDecompressBytesPerElem);
  // The cache's stride-2 copies half-fill each 32-byte sector: read in and written back, 2 + 2 B
  // per output element and copy (Nsight Compute on an H100: 18.8 B per element in all).
  CHECK(kFlexGenCacheDecompressBytesPerElem == Approx(19.0));
  CHECK(kFlexGenWeightDecompressBytesPerElem == Approx(13.0));
}

TEST_CASE("a codec call is memory-bound on large tensors and launch-bound on one row",
          "[model][perf][flexgen]") {
  GpuSpec gpu;
  gpu.fp16_tflops = 65;
  gpu.hbm_gbps = 320;
  const ExecutionModel em;
  const double rate = 320e9 * em.hbm_efficiency;
  // OPT-175B prefill K of one GPU batch (48 x 512 x 12288): the passes dominate.
  const double big = 48.0 * 512 * 12288;
  CHECK(flexgen_codec_s(gpu, em, big, kFlexGenCompressBytesPerElem, 1, kFlexGenCompressKernels) ==
        Approx(big * kFlexGenCompressBytesPerElem / rate));
  // One decode row of the same batch: 13 eager launches cost more than moving 0.6M elements.
  const double row = 48.0 * 12288;
  CHECK(flexgen_codec_s(gpu, em, row, kFlexGenCompressBytesPerElem, 2, kFlexGenCompressKernels) ==
        Approx(2 * kFlexGenCompressKernels * eager_kernel_s(em)));
  CHECK(eager_kernel_s(em) * kEagerKernelsPerLayer == Approx(em.layer_overhead_s));
  // Compression makes ten passes over the fp16 input (min, max, sub, mul_, clamp_, round_, to, and
  // the packing's strided reads): far more traffic than the 0.5625 B per element it stores.
  CHECK(kFlexGenCompressBytesPerElem == Approx(26.5));
}
}  // namespace model_flexgen_test
