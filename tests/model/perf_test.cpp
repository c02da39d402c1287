// Timing rules of model/perf.hpp: one transformer layer's kernels.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "model/perf.hpp"
#include "model/stack.hpp"
#include "model/units.hpp"
#include "tests/support.hpp"

namespace model_perf_test {

using namespace tiersim;
using tiersim::test::llama7b;

namespace {

GpuSpec a100() {
  GpuSpec g;
  g.name = "a100-like";
  g.memory_mib = 81920;
  g.arch = "ampere";
  g.sm_count = 108;
  g.hbm_gbps = 2039;
  g.fp16_tflops = 312;
  return g;
}

// The memory rate memory-bound kernels reach [bytes/s].
double hbm_bytes_per_s(const GpuSpec& gpu, const ExecutionModel& em) {
  return units::gbps_to_bytes_per_s(gpu.hbm_gbps) * em.hbm_efficiency;
}

// One layer's fp16 GEMM math for `tokens` tokens at the stack's share of the peak [s].
double fp16_gemm_math_s(const LlmSpec& m, const GpuSpec& gpu, const ExecutionModel& em,
                        double tokens) {
  return layer_gemm_flops(m, tokens) /
         (units::tflops_to_flops(gpu.fp16_tflops) * em.gemm_efficiency);
}

}  // namespace

TEST_CASE(
    "memory-bound kernels (attention, the elementwise ones) are not hidden under "
    "compute-bound GEMMs",
    "[model][perf]") {
  // Decode of 384 sequences: the GEMMs (M = 384 tokens) are compute-bound on an A100, the
  // attention kernel streams the KV cache, and the norms, the rotary embedding and
  // SiLU-and-multiply stream their operands. They run one after the other, so each adds its own
  // time instead of disappearing under the GEMMs' math.
  const LlmSpec m = llama7b();
  const GpuSpec gpu = a100();
  const ExecutionModel em;
  const GemmPath gemm = gemm_path(gpu, em, Policy{});
  const double tokens = 384;
  const double kv_bytes = 0.5e9;
  const LayerPass no_kv{tokens, 0, 0, 0, 0};
  const LayerPass with_kv{tokens, 0, kv_bytes, 0, 0};
  const double hbm_rate = hbm_bytes_per_s(gpu, em);
  const double gemm_math_s = fp16_gemm_math_s(m, gpu, em, tokens);
  const double kv_s = kv_bytes / hbm_rate;
  // The case where one roofline over the whole layer would hide the KV read entirely: the math
  // outlasts every byte the layer moves.
  REQUIRE(gemm_math_s > (layer_weight_read_bytes(m, tokens, 1) +
                         layer_elementwise_bytes(m, tokens, 1, GemmPath{}) + kv_bytes) /
                            hbm_rate);
  CHECK(layer_kernel_s(m, gpu, em, with_kv, 1, gemm) - layer_kernel_s(m, gpu, em, no_kv, 1, gemm) ==
        Approx(kv_s).epsilon(1e-9));
  const double elementwise_s = layer_elementwise_bytes(m, tokens, 1, GemmPath{}) / hbm_rate;
  CHECK(layer_kernel_s(m, gpu, em, no_kv, 1, gemm) ==
        Approx(gemm_math_s + elementwise_s).epsilon(1e-9));
}

TEST_CASE("a layer's elementwise traffic: whole norms on every rank, the rest split, FP8 inputs",
          "[model][perf]") {
  const LlmSpec llama = llama7b();  // gated MLP, rotary positions
  const double h = llama.hidden, f = llama.ffn, qk = llama.q_dim() + llama.kv_dim();
  const GemmPath bf16;
  GemmPath fp8;
  fp8.math = GemmMath::kFp8;
  GemmPath fp4;
  fp4.math = GemmMath::kFp4;
  // Two fused residual norms (read hidden and residual, write both), the rotary embedding's
  // in-place queries and keys, SiLU-and-multiply (read gate and up, write the product), 2 bytes.
  CHECK(layer_elementwise_bytes(llama, 1, 1, bf16) ==
        Approx(2 * 4 * h * 2 + 2 * qk * 2 + 3 * f * 2));
  // Tensor parallelism splits the rotary and the activation, not the norms.
  CHECK(layer_elementwise_bytes(llama, 1, 2, bf16) ==
        Approx(2 * 4 * h * 2 + (2 * qk * 2 + 3 * f * 2) / 2));
  // Before FP8 GEMMs the normalised states and the product are written in one byte.
  CHECK(layer_elementwise_bytes(llama, 1, 1, bf16) - layer_elementwise_bytes(llama, 1, 1, fp8) ==
        Approx(2 * h + f));
  // Before NVFP4 GEMMs, in 4 bits and a one-byte scale per 16 elements.
  CHECK(layer_elementwise_bytes(llama, 1, 1, bf16) - layer_elementwise_bytes(llama, 1, 1, fp4) ==
        Approx((2 * h + f) * (2 - kNvfp4BytesPerElem)));
  // A plain MLP with a learned position table: ReLU reads and writes the inner width, no rotary.
  LlmSpec opt = llama;
  opt.ffn_kind = FfnKind::kMlp;
  opt.learned_positions = true;
  CHECK(layer_elementwise_bytes(opt, 3, 1, bf16) == Approx(3 * (2 * 4 * h * 2 + 2 * f * 2)));
  // An MoE: its top-k experts' activations, then their outputs summed into one hidden state
  // (read k, write one), whole on each rank.
  LlmSpec moe = llama;
  moe.experts = 8;
  moe.experts_per_token = 2;
  CHECK(layer_elementwise_bytes(moe, 1, 2, bf16) ==
        Approx(2 * 4 * h * 2 + (2 * qk * 2 + 3 * 2 * f * 2) / 2 + 3 * h * 2));
  // MLA rotates only each query head's rotary part and the shared rotary key, and normalises
  // its two latents.
  LlmSpec mla = llama;
  mla.kv_lora_rank = 512;
  mla.qk_rope_dim = 64;
  mla.q_lora_rank = 1536;
  CHECK(layer_elementwise_bytes(mla, 1, 1, bf16) ==
        Approx(2 * 4 * h * 2 + 2 * (llama.heads * 64 + 64) * 2 + 2 * (1536 + 512) * 2 + 3 * f * 2));
}

TEST_CASE("a stack whose GEMMs do not hide the weight stream pays streaming plus math",
          "[model][perf]") {
  // Batch-1 prefill of 128 tokens: weight streaming and math take about as long as each other,
  // so the roofline (the longer) and the serial sum differ by almost a factor of two.
  const LlmSpec m = llama7b();
  const GpuSpec gpu = a100();
  Policy p;
  p.stack = execution_stack("trtllm-v0.6");
  const ExecutionModel em = with_stack(ExecutionModel{}, p.stack);
  const GemmPath serial = gemm_path(gpu, em, p);
  CHECK_FALSE(serial.hides_weight_reads);
  GemmPath overlapped = serial;
  overlapped.hides_weight_reads = true;
  const double tokens = 128;
  const LayerPass pass{tokens, 0, 0, 0, 0};
  const double math_s = fp16_gemm_math_s(m, gpu, em, tokens);
  const double hbm_rate = hbm_bytes_per_s(gpu, em);
  const double stream_s = layer_weight_read_bytes(m, tokens, 1) / hbm_rate;
  // The elementwise kernels between the GEMMs add their own time either way.
  const double elementwise_s = layer_elementwise_bytes(m, tokens, 1, GemmPath{}) / hbm_rate;
  CHECK(layer_kernel_s(m, gpu, em, pass, 1, serial) ==
        Approx(math_s + stream_s + elementwise_s).epsilon(1e-9));
  CHECK(layer_kernel_s(m, gpu, em, pass, 1, overlapped) ==
        Approx(std::max(math_s, stream_s) + elementwise_s).epsilon(1e-9));
  // The other stacks keep the roofline.
  Policy opt;
  opt.stack = execution_stack("optimized");
  CHECK(gemm_path(gpu, with_stack(ExecutionModel{}, opt.stack), opt).hides_weight_reads);
  CHECK(gemm_path(gpu, ExecutionModel{}, Policy{}).hides_weight_reads);
}

TEST_CASE(
    "KV re-reads by the query heads of one KV head are served from L2 where its rate is known",
    "[model][perf]") {
  // A decode attention kernel that reads each KV head once per query head (8 query heads per KV
  // head) moves the distinct bytes from device memory once and all eight reads through L2.
  const LlmSpec m = llama7b();
  GpuSpec gpu = a100();
  const ExecutionModel em;
  const GemmPath gemm = gemm_path(gpu, em, Policy{});
  const double distinct = 0.25e9, reads = 8.0;
  const LayerPass none{1, 0, 0, 0, 0};
  LayerPass reread{1, 0, distinct * reads, 0, 0};
  reread.kv_distinct_read_bytes = distinct;
  const LayerPass all_distinct{1, 0, distinct * reads, 0, 0};
  const double hbm_rate = hbm_bytes_per_s(gpu, em);
  const auto attention_s = [&](const LayerPass& pass) {
    return layer_kernel_s(m, gpu, em, pass, 1, gemm) - layer_kernel_s(m, gpu, em, none, 1, gemm);
  };
  // No L2 rate in the catalog: every read at the device-memory rate, as if all were distinct.
  gpu.l2_shared_read_gbps = -1;
  CHECK(attention_s(reread) == attention_s(all_distinct));
  CHECK(attention_s(reread) == Approx(distinct * reads / hbm_rate).epsilon(1e-9));
  // With one: the slower of the distinct bytes from memory and every read from L2.
  gpu.l2_shared_read_gbps = 4600;
  const double l2_s = distinct * reads / units::gbps_to_bytes_per_s(4600);
  CHECK(attention_s(reread) == Approx(std::max(distinct / hbm_rate, l2_s)).epsilon(1e-9));
  CHECK(attention_s(reread) < attention_s(all_distinct));
  // An L2 slower than memory never makes the kernel faster than reading everything once.
  gpu.l2_shared_read_gbps = 1;
  CHECK(attention_s(reread) >= distinct / hbm_rate);
}

namespace {

GpuSpec pcie_gpu(double link_gbps) {
  GpuSpec g;
  g.name = "pcie-gpu";
  g.pcie_gen = 4;
  g.pcie_lanes = 16;
  g.pcie_h2d_gbps = link_gbps;
  g.pcie_d2h_gbps = link_gbps;
  return g;
}

}  // namespace

TEST_CASE("ring collectives move (N-1)/N of the buffer per rank, twice for an all-reduce",
          "[perf][collective]") {
  CHECK(ring_allgather_bytes(1200.0, 1) == 0.0);
  CHECK(ring_allgather_bytes(1200.0, 2) == Approx(600.0));
  CHECK(ring_allgather_bytes(1200.0, 6) == Approx(1000.0));
  CHECK(ring_reduce_scatter_bytes(1200.0, 4) == Approx(900.0));
  CHECK(ring_allreduce_bytes(1200.0, 4) == Approx(1800.0));
  CHECK(ring_allreduce_bytes(1200.0, 1) == 0.0);
}

TEST_CASE("a tensor-parallel layer all-reduces its fp16 hidden states twice",
          "[perf][collective]") {
  LlmSpec m;
  m.hidden = 4096;
  // 10 tokens: 10 x 4096 x 2 bytes of hidden states; a ring all-reduce over 4 GPUs sends
  // 2 x 3/4 of them from each GPU; after attention and after the FFN.
  CHECK(tensor_parallel_layer_bytes(m, 10, 4) == Approx(2 * 2 * 0.75 * 10 * 4096 * 2));
  CHECK(tensor_parallel_layer_bytes(m, 10, 4) == 2 * ring_allreduce_bytes(10 * 4096 * 2.0, 4));
  CHECK(tensor_parallel_layer_bytes(m, 10, 1) == 0.0);
}

TEST_CASE("the GPUs' link kind comes from the catalog's NVLink and peer-access data",
          "[perf][collective]") {
  GpuSpec gpu = a100();
  HostSpec host;
  gpu.nvlink_gbps = 300;
  CHECK(peer_link_kind(gpu, host) == PeerLinkKind::kNvlink);
  gpu.pcie_p2p = false;  // NVLink does not need PCIe peer access
  CHECK(peer_link_kind(gpu, host) == PeerLinkKind::kNvlink);
  gpu.nvlink_gbps = 0;
  CHECK(peer_link_kind(gpu, host) == PeerLinkKind::kPcieHost);
  gpu.pcie_p2p = true;
  CHECK(peer_link_kind(gpu, host) == PeerLinkKind::kPcieP2p);
  // A platform that blocks peer access sends even capable boards through host memory.
  host.gpu_p2p = false;
  CHECK(peer_link_kind(gpu, host) == PeerLinkKind::kPcieHost);
  CHECK(std::string(to_string(PeerLinkKind::kPcieHost)) == "pcie-host");
}

TEST_CASE("collectives through host memory keep a share of the link's rate in each direction",
          "[perf][collective]") {
  GpuSpec gpu = a100();
  gpu.nvlink_gbps = 0;
  HostSpec host;
  const double copy_gbps = std::min(h2d_gbps(gpu, host), d2h_gbps(gpu, host));
  // Peer-to-peer over PCIe: the link's copy rate.
  gpu.pcie_p2p = true;
  CHECK(gpu_peer_gbps(gpu, host) == Approx(copy_gbps));
  // Through host memory (no peer access on the boards, or the platform blocks it): every rank
  // sends and receives at once through the host, which keeps 3.9 of the 10.31 GB/s one
  // direction alone gets (NVIDIA/nccl#384, two GPUs over NCCL's SHM transport).
  gpu.pcie_p2p = false;
  CHECK(gpu_peer_gbps(gpu, host) == Approx(copy_gbps * 3.9 / 10.31));
  gpu.pcie_p2p = true;
  host.gpu_p2p = false;
  CHECK(gpu_peer_gbps(gpu, host) == Approx(copy_gbps * 3.9 / 10.31));
  // NVLink is its own link, peer access or not.
  gpu.nvlink_gbps = 300;
  CHECK(gpu_peer_gbps(gpu, host) == 300);
}

TEST_CASE("a vocab-parallel head's logits are gathered once per pass for the sampled rows",
          "[perf][collective]") {
  LlmSpec m;
  m.vocab = 128256;  // Llama-3.1-8B
  GpuSpec gpu = a100();
  gpu.nvlink_gbps = 0;
  gpu.pcie_p2p = false;
  const HostSpec host;
  // 256 sampled rows of fp16 logits; on two GPUs each sends its half of the vocabulary.
  const TensorParallelComm two = tensor_parallel_logits_comm(gpu, host, m, 256, 2);
  CHECK(two.link == PeerLinkKind::kPcieHost);
  CHECK(two.collectives == 1);
  CHECK(two.bytes == Approx(256 * 128256 * 2.0 / 2));
  CHECK(two.bytes == ring_allgather_bytes(256 * 128256 * 2.0, 2));
  // An all-gather is half an all-reduce's ring steps: NCCL's base plus (ranks - 1) steps.
  CHECK(two.latency_s == Approx(ring_allgather_latency_s(PeerLinkKind::kPcieHost, 2)));
  CHECK(ring_allgather_latency_s(PeerLinkKind::kPcieHost, 2) * 1e6 == Approx(6.6 + 2.55));
  CHECK(ring_allgather_latency_s(PeerLinkKind::kNvlink, 8) <
        ring_allreduce_latency_s(PeerLinkKind::kNvlink, 8));
  // Four GPUs send three quarters of the rows each; nothing without sampled rows or for one GPU.
  CHECK(tensor_parallel_logits_comm(gpu, host, m, 256, 4).bytes == Approx(256 * 128256 * 1.5));
  CHECK(tensor_parallel_logits_comm(gpu, host, m, 0, 2).seconds(25e9) == 0.0);
  CHECK(tensor_parallel_logits_comm(gpu, host, m, 256, 1).seconds(25e9) == 0.0);
  CHECK(ring_allgather_latency_s(PeerLinkKind::kPcieHost, 1) == 0.0);
}

TEST_CASE("a ring all-reduce's latency follows NCCL's ring model by link kind",
          "[perf][collective]") {
  // One rank exchanges nothing.
  CHECK(ring_allreduce_latency_s(PeerLinkKind::kPcieHost, 1) == 0.0);
  // 6.6 us base + 2 x (ranks - 1) steps.
  CHECK(ring_allreduce_latency_s(PeerLinkKind::kNvlink, 2) == Approx(7.8e-6));
  // The published measurements the PCIe step latencies come from, eight GPUs each: 24.1-24.6 us
  // with peer access (RTX PRO 6000), 42.1-42.6 us through host memory (RTX 4090).
  CHECK(ring_allreduce_latency_s(PeerLinkKind::kPcieP2p, 8) * 1e6 == Approx(24.35).margin(0.3));
  CHECK(ring_allreduce_latency_s(PeerLinkKind::kPcieHost, 8) * 1e6 == Approx(42.35).margin(0.3));
  for (double ranks : {2.0, 4.0, 8.0}) {
    CHECK(ring_allreduce_latency_s(PeerLinkKind::kNvlink, ranks) <
          ring_allreduce_latency_s(PeerLinkKind::kPcieP2p, ranks));
    CHECK(ring_allreduce_latency_s(PeerLinkKind::kPcieP2p, ranks) <
          ring_allreduce_latency_s(PeerLinkKind::kPcieHost, ranks));
  }
  CHECK(ring_allreduce_latency_s(PeerLinkKind::kPcieP2p, 4) <
        ring_allreduce_latency_s(PeerLinkKind::kPcieP2p, 8));
}

TEST_CASE("a tensor-parallel layer pays two all-reduces' latency on top of their bytes",
          "[perf][collective]") {
  LlmSpec m;
  m.hidden = 5120;  // Qwen3-32B
  GpuSpec gpu = a100();
  gpu.pcie_p2p = false;
  const HostSpec host;
  const double bytes_per_s = 25e9;
  const TensorParallelComm decode = tensor_parallel_layer_comm(gpu, host, m, 8, 2);
  CHECK(decode.link == PeerLinkKind::kPcieHost);
  CHECK(decode.collectives == 2);
  CHECK(decode.bytes == tensor_parallel_layer_bytes(m, 8, 2));
  CHECK(decode.latency_s == Approx(2 * ring_allreduce_latency_s(PeerLinkKind::kPcieHost, 2)));
  CHECK(decode.seconds(bytes_per_s) == Approx(decode.latency_s + decode.bytes / bytes_per_s));
  // Eight decode tokens move 80 KB per all-reduce (6.6 us for both at 25 GB/s): the latency
  // (2 x 11.7 us) is most of the link time.
  CHECK(decode.latency_s > 3 * decode.bytes / bytes_per_s);
  // A 2,048-token prefill chunk moves 256 times the bytes: there the bytes are.
  const TensorParallelComm prefill = tensor_parallel_layer_comm(gpu, host, m, 2048, 2);
  CHECK(prefill.latency_s == decode.latency_s);
  CHECK(prefill.bytes / bytes_per_s > 5 * prefill.latency_s);
  // One GPU pays nothing.
  const TensorParallelComm one = tensor_parallel_layer_comm(gpu, host, m, 8, 1);
  CHECK(one.collectives == 0);
  CHECK(one.seconds(bytes_per_s) == 0.0);
}

TEST_CASE("a ZeRO-3 all-gather takes (N-1)/N of the gathered bytes on each GPU's link",
          "[perf][zero3]") {
  const GpuSpec gpu = pcie_gpu(25);
  HostSpec host;
  host.pcie_gen = 5;
  const double layer_bytes = 1.2e9;
  for (int n : {2, 3, 6, 8}) {
    const Zero3GatherTraffic t = zero3_gather_traffic(gpu, host, n, 0, layer_bytes);
    CHECK(t.gather_bytes == Approx(layer_bytes * (n - 1) / n));
    CHECK_FALSE(t.gather_on_peer_link);
    // Direct attach: nothing shared, so the time is the bytes over the one link's rate.
    CHECK(t.uplink_bytes == 0.0);
    const double seconds = t.gather_bytes / units::gbps_to_bytes_per_s(h2d_gbps(gpu, host));
    CHECK(seconds == Approx((n - 1.0) / n * layer_bytes / 25e9));
  }
  // NVLink GPUs gather over their peer link.
  GpuSpec nvlink = gpu;
  nvlink.nvlink_gbps = 300;
  CHECK(zero3_gather_traffic(nvlink, host, 4, 0, layer_bytes).gather_on_peer_link);
}

TEST_CASE("GPUs behind one PCIe switch share its uplink for their partitions' host copies",
          "[perf][zero3]") {
  const GpuSpec gpu = pcie_gpu(25);
  HostSpec host;
  host.pcie_gen = 5;
  host.gpus_per_pcie_switch = 8;
  const double host_bytes = 6e9, layer_bytes = 1.2e9;
  // Six ranks behind one switch: each copies 1/6 over its own link, the uplink carries all six;
  // their ring stays inside the switch.
  const Zero3GatherTraffic one = zero3_gather_traffic(gpu, host, 6, host_bytes, layer_bytes);
  CHECK(one.partition_bytes == Approx(1e9));
  CHECK(one.gpus_behind_switch == 6);
  CHECK(one.uplink_bytes == Approx(6e9));
  // Three per switch over two switches: three partitions and the ring's edge into the switch.
  host.gpus_per_pcie_switch = 3;
  const Zero3GatherTraffic two = zero3_gather_traffic(gpu, host, 6, host_bytes, layer_bytes);
  CHECK(two.gpus_behind_switch == 3);
  CHECK(two.uplink_bytes == Approx(3e9 + layer_bytes * 5 / 6));
  // The uplink's default rate: x16 of the host's generation at the GPU link's copy efficiency.
  CHECK(pcie_switch_uplink_gbps(gpu, host) ==
        Approx(25.0 / pcie_link_gbps(4, 16) * pcie_link_gbps(5, 16)));
  host.pcie_switch_uplink_gbps = 40;
  CHECK(pcie_switch_uplink_gbps(gpu, host) == 40.0);
}

TEST_CASE("one rank is the single-GPU fetch: its whole host part, no gather, no shared uplink",
          "[perf][zero3]") {
  HostSpec host;
  host.gpus_per_pcie_switch = 4;
  const Zero3GatherTraffic t = zero3_gather_traffic(pcie_gpu(25), host, 1, 5e9, 1.2e9);
  CHECK(t.partition_bytes == 5e9);
  CHECK(t.gather_bytes == 0.0);
  CHECK(t.uplink_bytes == 0.0);
  CHECK(t.gpus_behind_switch == 0);
}

TEST_CASE("ZeRO-3's prefetch runs whole layers ahead as its bucket and live limit allow",
          "[perf][zero3]") {
  Zero3Settings z;
  const double layer = 12.0 * 7168 * 7168;  // an OPT-30B layer's matrices
  // DeepSpeed's defaults (bucket 5e7 < a layer): the next layer only.
  CHECK(zero3_prefetch_modules(z, layer) == 1);
  // DeepSpeedExamples' run_model.py: bucket and live limit of 2 hidden^2.
  z.prefetch_bucket_size = z.max_live_parameters = 2.0 * 7168 * 7168;
  CHECK(zero3_prefetch_modules(z, layer) == 1);
  // A bucket of three layers with room for them: three ahead.
  z.prefetch_bucket_size = 3 * layer;
  z.max_live_parameters = 1e12;
  CHECK(zero3_prefetch_modules(z, layer) == 3);
  // ... unless the live limit leaves room for only two besides the one computing.
  z.max_live_parameters = 3 * layer;
  CHECK(zero3_prefetch_modules(z, layer) == 2);
  z.prefetch_bucket_size = 0;
  CHECK(zero3_prefetch_modules(z, layer) == 0);
}

TEST_CASE("a kernel's time says what bound it", "[model][perf][power]") {
  const GpuSpec gpu = a100();
  const ExecutionModel em;
  // Math-bound: its compute time is its time; memory-bound: its memory time is.
  const KernelTime math = gpu_kernel(gpu, em, 1e12, 1e6);
  CHECK(math.s == gpu_kernel_s(gpu, em, 1e12, 1e6));
  CHECK(math.compute_s == math.s);
  CHECK(math.memory_s < math.s);
  const KernelTime stream = gpu_kernel(gpu, em, 1e6, 1e10);
  CHECK(stream.memory_s == stream.s);
  CHECK(stream.compute_s < 1e-3 * stream.s);
}

TEST_CASE("a layer's kernel time is the sum of its kernels, split by what bound each",
          "[model][perf][power]") {
  const LlmSpec m = llama7b();
  const GpuSpec gpu = a100();
  const ExecutionModel em;
  const GemmPath gemm = gemm_path(gpu, em, Policy{});
  // Prefill of a long prompt is bound by math; one decode token by the weight stream.
  LayerPass prefill{4096, attention_flops(m, 4096, 4096), 0, 0, 0};
  LayerPass decode{1, attention_flops(m, 1, 4096), 4096 * 5e5, 5e5, 0};
  for (const LayerPass& pass : {prefill, decode}) {
    const KernelTime k = layer_kernel(m, gpu, em, pass, 1, gemm);
    CHECK(k.s == layer_kernel_s(m, gpu, em, pass, 1, gemm));
    CHECK(k.s >= std::max(k.compute_s, k.memory_s));
  }
  const KernelTime p = layer_kernel(m, gpu, em, prefill, 1, gemm);
  const KernelTime d = layer_kernel(m, gpu, em, decode, 1, gemm);
  CHECK(p.compute_s > 0.9 * p.s);
  CHECK(d.memory_s > 0.9 * d.s);
}

TEST_CASE("a pass's host work is charged once, on its head, as GPU idle time",
          "[model][perf][step]") {
  const LlmSpec m = llama7b();
  const GpuSpec gpu = a100();
  ExecutionModel none;
  none.step_overhead_s = 0;
  none.step_overhead_per_sequence_s = 0;
  ExecutionModel host = none;
  host.step_overhead_s = 2e-3;
  host.step_overhead_per_sequence_s = 5e-6;
  const double head_elements = double(m.vocab) * m.hidden;
  for (const double sequences : {1.0, 8.0, 256.0}) {
    INFO("sequences " << sequences);
    CHECK(step_host_s(host, sequences) == Approx(2e-3 + 5e-6 * sequences));
    const KernelTime a = edge_module(m, gpu, none, true, sequences, sequences, head_elements, 1);
    const KernelTime b = edge_module(m, gpu, host, true, sequences, sequences, head_elements, 1);
    CHECK(b.s - a.s == Approx(step_host_s(host, sequences)));
    // The GPU waits: no compute or memory time is added (model/power.hpp prices a gap as idle).
    CHECK(b.compute_s == a.compute_s);
    CHECK(b.memory_s == a.memory_s);
    // The embedding does not carry it: one charge per pass.
    CHECK(edge_module_s(m, gpu, host, false, sequences, 0, head_elements, 1) ==
          edge_module_s(m, gpu, none, false, sequences, 0, head_elements, 1));
  }
  // A stack's own figures replace the execution model's; a stack without them keeps its figures.
  ExecutionStack with;
  with.step_overhead_s = 1e-3;
  with.step_overhead_per_sequence_s = 2e-6;
  CHECK(with_stack(host, with).step_overhead_s == 1e-3);
  CHECK(with_stack(host, with).step_overhead_per_sequence_s == 2e-6);
  CHECK(with_stack(host, ExecutionStack{}).step_overhead_s == 2e-3);
}
TEST_CASE("a striped request reaches each drive in chunk-size pieces, so its first data does not "
          "wait for a drive's whole share",
          "[model][perf][nvme]") {
  // md RAID-0 maps a request chunk by chunk (default chunk 512 KiB) and submits the pieces at
  // once: a 16 MiB block is 4 MiB a drive on 4 drives and 2 MiB on 8, but 512 KiB pieces on both.
  // Before, the first request's latency was a whole share at queue depth 1, twice as long on 4
  // drives as on 8, a cost that more drives shrank.
  NvmeArray array;
  array.model.read.peak_gbps = 7.25;
  array.model.read.stream_gbps = 7.25;
  array.model.read.latency_us = 65;
  array.model.write = array.model.read;
  HostSpec host;
  AioConfig aio;  // DeepSpeedExamples zero_inference run_model.py: 16 MiB, depth 64, 8 threads
  const double piece = 512.0 * 1024.0;
  const double tensor = 470e6;
  array.count = 4;
  const NvmeArrayTiming four = nvme_array_timing(array, host, aio, tensor);
  array.count = 8;
  const NvmeArrayTiming eight = nvme_array_timing(array, host, aio, tensor);
  CHECK(four.read_latency_s == Approx(array.model.read.latency_s(piece, 1)).epsilon(1e-12));
  CHECK(eight.read_latency_s == Approx(four.read_latency_s).epsilon(1e-12));
  // The pieces of every outstanding request keep a drive as busy as the requests' shares would:
  // the same bytes in flight, each drive near its peak.
  CHECK(four.read_gbps > 0.97 * 4 * 7.25);
  CHECK(eight.read_gbps > 0.97 * 8 * 7.25);
  // A share below one chunk is the piece itself.
  array.count = 64;
  const NvmeArrayTiming many = nvme_array_timing(array, host, aio, tensor);
  CHECK(many.read_latency_s ==
        Approx(array.model.read.latency_s(aio.block_size_bytes / 64, 1)).epsilon(1e-12));
  CHECK(many.read_latency_s < four.read_latency_s);
}

TEST_CASE("independent readers fill the array's queues together", "[model][perf][nvme]") {
  // ZeRO-3's data-parallel ranks each swap in their own partition through their own aio handle:
  // N readers of a partition each keep their window of requests in flight at once.
  NvmeArray array;
  array.count = 8;
  array.model.read.peak_gbps = 3.5;
  array.model.read.stream_gbps = 3.5;
  array.model.read.latency_us = 80;
  array.model.write = array.model.read;
  HostSpec host;
  AioConfig aio;  // DeepSpeed's defaults: 1 MiB, depth 8, one thread
  aio.block_size_bytes = 1024.0 * 1024.0;
  aio.queue_depth = 8;
  aio.threads = 1;
  const double tensor = 400e6;
  const NvmeArrayTiming one = nvme_array_timing(array, host, aio, tensor);
  const NvmeArrayTiming four = nvme_array_timing(array, host, aio, tensor / 4, 4);
  // The same operating point as one reader with four times the window.
  AioConfig wide = aio;
  wide.threads = 4;
  const NvmeArrayTiming one_wide = nvme_array_timing(array, host, wide, tensor);
  CHECK(four.read_gbps == Approx(one_wide.read_gbps).epsilon(1e-12));
  CHECK(four.read_gbps > 1.2 * one.read_gbps);
  CHECK(four.read_gbps <= 8 * 3.5);
  CHECK(four.read_latency_s == Approx(one.read_latency_s).epsilon(1e-12));
  // A partition of fewer requests than the window: all readers' requests, and no more.
  const NvmeArrayTiming small = nvme_array_timing(array, host, aio, 2 * aio.block_size_bytes, 4);
  const NvmeArrayTiming eight_requests =
      nvme_array_timing(array, host, aio, 8 * aio.block_size_bytes);
  CHECK(small.read_gbps == Approx(eight_requests.read_gbps).epsilon(1e-12));
  // One reader: as before.
  CHECK(nvme_array_timing(array, host, aio, tensor, 1).read_gbps == one.read_gbps);
}

namespace {

// An H100 SXM as the catalog gives it (the FlashAttention-3 benchmark's board).
GpuSpec h100() {
  GpuSpec g;
  g.name = "h100-like";
  g.memory_mib = 81559;
  g.arch = "hopper";
  g.sm_count = 132;
  g.hbm_gbps = 3350;
  g.fp16_tflops = 989;
  return g;
}

}  // namespace

TEST_CASE("long-context prefill attention of a fused stack runs at the kernel's published rate",
          "[model][perf][attention]") {
  const LlmSpec m = llama7b();
  REQUIRE(m.head_dim() == 128);
  const ExecutionStack& opt = execution_stack("optimized");
  const ExecutionModel em = with_stack(ExecutionModel{}, opt);
  const GpuSpec gpu = h100();
  // One 16,384-token prompt in one chunk: FlashAttention-3's causal rate at 16K keys, 616 TFLOPS
  // (Shah et al. 2024, Figure 5(d)), below the stack's GEMM rate (80% of 989).
  const double whole_flops = attention_flops(m, 16384, 16385 / 2.0);
  CHECK(prefill_attention_s(m, gpu, em, opt, PrefillChunk{16384, 0, 1}, 1) ==
        Approx(whole_flops / 616e12));
  CHECK(whole_flops / 616e12 > 1.25 * whole_flops / gemm_flops_per_s(gpu, em));
  // A chunk after 83,616 cached tokens (the last chunk of a 100K prompt): its causal block at
  // the causal rate for 16K keys, its pairs with the cached tokens unmasked at the 16K+ rate
  // (648, Figure 5(c)).
  CHECK(prefill_attention_s(m, gpu, em, opt, PrefillChunk{16384, 83616, 1}, 1) ==
        Approx(whole_flops / 616e12 + attention_flops(m, 16384, 83616) / 648e12));
  // Short chunks run further below: 1,024 tokens at 423 TFLOPS; eight sequences of them eight
  // times as long; under tensor parallelism each GPU holds half the heads.
  const double short_s = attention_flops(m, 1024, 1025 / 2.0) / 423e12;
  CHECK(prefill_attention_s(m, gpu, em, opt, PrefillChunk{1024, 0, 1}, 1) == Approx(short_s));
  CHECK(prefill_attention_s(m, gpu, em, opt, PrefillChunk{1024, 0, 8}, 1) ==
        Approx(8 * short_s));
  CHECK(prefill_attention_s(m, gpu, em, opt, PrefillChunk{1024, 0, 1}, 2) ==
        Approx(short_s / 2));
  // A board whose sustained rate is measured below the kernel's share of its peak is capped.
  GpuSpec capped = gpu;
  capped.fp16_achieved_tflops = 300;
  CHECK(prefill_attention_s(m, capped, em, opt, PrefillChunk{16384, 0, 1}, 1) ==
        Approx(whole_flops / 300e12));
}

TEST_CASE("eager stacks and GPUs without a published attention rate keep the GEMM rate",
          "[model][perf][attention]") {
  const LlmSpec m = llama7b();
  const PrefillChunk chunk{8192, 4096, 2};
  const double flops = 2 * attention_flops(m, 8192, 4096 + 8193 / 2.0);
  // Eager PyTorch on Hopper: no fused kernel, whatever the table holds.
  ExecutionStack eager = execution_stack(kDefaultStackName);
  eager.prefill_attention_kernel = FusedAttentionKernel::kFlashAttention;
  const ExecutionModel eager_em = with_stack(ExecutionModel{}, eager);
  CHECK(prefill_attention_s(m, h100(), eager_em, eager, chunk, 1) ==
        Approx(flops / gemm_flops_per_s(h100(), eager_em)));
  // The optimized stack on an A100 (no FlashAttention-2 table by sequence length) and
  // TensorRT-LLM v0.6 on Hopper (no published rate of its kernels).
  const ExecutionStack& opt = execution_stack("optimized");
  const ExecutionModel opt_em = with_stack(ExecutionModel{}, opt);
  CHECK(prefill_attention_s(m, a100(), opt_em, opt, chunk, 1) ==
        Approx(flops / gemm_flops_per_s(a100(), opt_em)));
  const ExecutionStack& v06 = execution_stack("trtllm-v0.6");
  CHECK(prefill_attention_s(m, h100(), opt_em, v06, chunk, 1) ==
        Approx(flops / gemm_flops_per_s(h100(), opt_em)));
}

TEST_CASE("boost-clock rates run at the share a board keeps under its power limit",
          "[model][perf][power]") {
  // An H100-like board with measured boost-clock GEMM rates (the shape sweep) and the shares of
  // them it keeps held at full math rate under its limit (tools/gpu/power_probe.py).
  GpuSpec gpu = h100();
  gpu.fp16_achieved_tflops = 730;
  gpu.fp8_achieved_tflops = 1322;
  gpu.fp8_tflops = 1979;
  GpuSpec limited = gpu;
  limited.fp16_power_limited_share = 0.8628;
  limited.fp8_power_limited_share = 0.8344;
  const ExecutionStack& opt = execution_stack("optimized");
  const ExecutionModel em = with_stack(ExecutionModel{}, opt);
  CHECK(power_limited_share(gpu, false) == 1.0);
  CHECK(power_limited_share(limited, true) == 0.8344);
  // The fp16 GEMM rate: the measured rate at the share.
  CHECK(gemm_flops_per_s(gpu, em) == Approx(730e12));
  CHECK(gemm_flops_per_s(limited, em) == Approx(730e12 * 0.8628));
  // A rate the stack's efficiency sets below that (a training pass's end-to-end share of the
  // peak, itself measured over long runs) is not cut again.
  ExecutionModel slow = em;
  slow.gemm_efficiency = 0.45;
  CHECK(gemm_flops_per_s(limited, slow) == Approx(989e12 * 0.45));
  // FP8 GEMMs at their own share: a layer of FP8 products takes 1/0.8344 of the math time.
  Policy p;
  p.weight_bits = 8;
  p.stack = opt;
  const GemmPath fp8 = gemm_path(limited, em, p);
  REQUIRE(fp8.math == GemmMath::kFp8);
  const LlmSpec m = llama7b();
  LayerPass pass;
  pass.tokens = 8192;
  const KernelTime k = layer_kernel(m, limited, em, pass, 1, fp8);
  const KernelTime k_full = layer_kernel(m, gpu, em, pass, 1, gemm_path(gpu, em, p));
  CHECK(k.compute_s - k_full.compute_s == Approx(layer_gemm_flops(m, 8192) / (1322e12 * 0.8344) -
                                                 layer_gemm_flops(m, 8192) / 1322e12));
  // Fused prefill attention: the kernel's published rate is a boost-clock figure too.
  const PrefillChunk chunk{16384, 0, 1};
  CHECK(prefill_attention_s(m, limited, em, opt, chunk, 1) ==
        Approx(prefill_attention_s(m, gpu, em, opt, chunk, 1) / 0.8628));
}

TEST_CASE(
    "a measured board's GEMMs add their exposed weight loads to the math, never below the "
    "weight stream",
    "[model][perf][gemm]") {
  const LlmSpec m = llama7b();
  GpuSpec gpu = h100();
  gpu.fp8_tflops = 1979;
  const ExecutionStack& opt = execution_stack("optimized");
  const ExecutionModel em = with_stack(ExecutionModel{}, opt);
  Policy p;
  p.stack = opt;
  const GemmPath gemm = gemm_path(gpu, em, p);
  REQUIRE(gemm.hides_weight_reads);
  const LayerPass prefill{8192, 0, 0, 0, 0};
  const LayerPass decode{8, 0, 0, 0, 0};
  const KernelTime p0 = layer_kernel(m, gpu, em, prefill, 1, gemm);
  const KernelTime d0 = layer_kernel(m, gpu, em, decode, 1, gemm);
  // The layer's elementwise kernels, after the GEMMs, at the memory rate.
  const double hbm_rate = hbm_bytes_per_s(gpu, em);
  const double elementwise_s = layer_elementwise_bytes(m, 8192, 1, gemm) / hbm_rate;
  const double weight_bytes = layer_active_params(m) * 2.0;
  // Unmeasured: the longer of math and weight stream.
  CHECK(p0.s == Approx(std::max(p0.compute_s, weight_bytes / hbm_rate) + elementwise_s));
  CHECK(d0.s == Approx(std::max(d0.compute_s, d0.memory_s)));
  GpuSpec measured = gpu;
  measured.fp16_achieved_tflops = 730;
  measured.gemm_exposed_weight_gbps = 5850;
  const KernelTime p1 = layer_kernel(m, measured, em, prefill, 1, gemm);
  const KernelTime d1 = layer_kernel(m, measured, em, decode, 1, gemm);
  // A long prefill: math at the achieved rate plus the weights at the exposed rate.
  CHECK(p1.compute_s == Approx(layer_gemm_flops(m, 8192) / 730e12));
  CHECK(p1.s == Approx(p1.compute_s + weight_bytes / 5850e9 + elementwise_s));
  // A thin decode GEMM: still the weight stream from device memory.
  CHECK(d1.s == Approx(d1.memory_s));
  CHECK(d1.s == Approx(d0.s));
  // FP8 GEMMs read their own rates: the achieved FP8 rate caps the stack's share of the peak.
  Policy fp8 = p;
  fp8.weight_bits = 8;
  const GemmPath g8 = gemm_path(gpu, em, fp8);
  REQUIRE(g8.math == GemmMath::kFp8);
  measured.fp8_achieved_tflops = 1322;
  measured.fp8_gemm_exposed_weight_gbps = 8740;
  const KernelTime p8 = layer_kernel(m, measured, em, prefill, 1, g8);
  CHECK(p8.compute_s == Approx(layer_gemm_flops(m, 8192) / 1322e12));
  CHECK(p8.s == Approx(p8.compute_s + layer_active_params(m) / 8740e9 +
                       layer_elementwise_bytes(m, 8192, 1, g8) / hbm_rate));
}

TEST_CASE("a layer's prefill attention math adds to its attention kernel under the roofline",
          "[model][perf][attention]") {
  const LlmSpec m = llama7b();
  const GpuSpec gpu = h100();
  const ExecutionStack& opt = execution_stack("optimized");
  const ExecutionModel em = with_stack(ExecutionModel{}, opt);
  Policy p;
  p.stack = opt;
  const GemmPath gemm = gemm_path(gpu, em, p);
  LayerPass pass{4096, 0, 0, 0, 0};
  const KernelTime without = layer_kernel(m, gpu, em, pass, 1, gemm);
  pass.prefill_attention_s = prefill_attention_s(m, gpu, em, opt, PrefillChunk{4096, 0, 1}, 1);
  const KernelTime with = layer_kernel(m, gpu, em, pass, 1, gemm);
  // The math is the attention kernel's time, and it counts as math for the power model.
  CHECK(with.s - without.s == Approx(pass.prefill_attention_s));
  CHECK(with.compute_s - without.compute_s == Approx(pass.prefill_attention_s));
  CHECK(with.memory_s == without.memory_s);
  // Where the kernel's memory traffic takes longer (a large KV read beside it), the math hides
  // under it: the kernel's roofline.
  pass.kv_read_bytes = 10 * pass.prefill_attention_s * 3350e9;
  pass.kv_distinct_read_bytes = pass.kv_read_bytes;
  LayerPass read_only = pass;
  read_only.prefill_attention_s = 0;
  CHECK(layer_kernel(m, gpu, em, pass, 1, gemm).s ==
        Approx(layer_kernel(m, gpu, em, read_only, 1, gemm).s));
}
}  // namespace model_perf_test

namespace model_perf_test {

TEST_CASE("NVMe array: reads and writes issued together share the drives request by request",
          "[model][perf]") {
  tiersim::NvmeArrayTiming t;
  t.read_gbps = 6.0;
  t.write_gbps = 3.0;
  t.read_latency_s = 80e-6;
  t.write_latency_s = 15e-6;
  const double r = 1.2e9, w = 0.3e9;
  // One direction alone is what it was.
  CHECK(t.mixed_s(r, 0).read_done_s == Approx(t.read_s(r)));
  CHECK(t.mixed_s(r, 0).busy_s() == Approx(t.read_s(r)));
  CHECK(t.mixed_s(0, w).busy_s() == Approx(t.write_s(w)));
  CHECK(t.mixed_s(0, w).read_done_s == 0);
  // Fewer writes than reads: the reads finish after all of them (shared time, no interference),
  // and the drives are busy as long as each direction alone.
  const auto m = t.mixed_s(r, w);
  CHECK(m.read_done_s == Approx(t.read_latency_s + r / 6e9 + w / 3e9));
  CHECK(m.read_busy_s == Approx(t.read_s(r)));
  CHECK(m.write_busy_s == Approx(w / 3e9));
  // More writes than reads: the reads wait for as many write bytes as they read; the rest of the
  // writes run alone after them.
  const auto big = t.mixed_s(r, 4 * r);
  CHECK(big.read_done_s == Approx(t.read_latency_s + r / 6e9 + r / 3e9));
  CHECK(big.busy_s() == Approx(t.read_latency_s + r / 6e9 + 4 * r / 3e9));
  // Interference lengthens the shared window by 4 f (1 - f) x of it.
  tiersim::NvmeArrayTiming x = t;
  x.mix_interference = 0.5;
  const double f = r / (r + w), window = r / 6e9 + w / 3e9;
  CHECK(x.mixed_s(r, w).read_done_s ==
        Approx(t.read_latency_s + window * (1 + 4 * f * (1 - f) * 0.5)));
}

TEST_CASE("training passes run at the published training share of each generation's peak",
          "[perf][training]") {
  // End-to-end rates with the recompute counted: 48% on a V100 (MegatronLM V1.0), 43.7% HFU on an
  // A100 (Megatron-LM README), 54.7% HFU on an H100 (llm-foundry); GPUs of other generations keep
  // the execution model's GEMM efficiency.
  const ExecutionModel em;
  GpuSpec v100 = a100();
  v100.arch = "volta";
  CHECK(training_pass_efficiency(v100, em) == Approx(0.48));
  CHECK(training_pass_efficiency(a100(), em) == Approx(0.437));
  GpuSpec h100 = a100();
  h100.arch = "hopper";
  CHECK(training_pass_efficiency(h100, em) == Approx(0.547));
  GpuSpec a6000 = a100();
  a6000.arch = "ampere-ga10x";
  CHECK(training_pass_efficiency(a6000, em) == em.gemm_efficiency);
}

}  // namespace model_perf_test
