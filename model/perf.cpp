#include "model/perf.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "model/attention_kernel.hpp"
#include "model/layout.hpp"
#include "model/units.hpp"

namespace tiersim {

ExecutionModel with_stack(ExecutionModel em, const ExecutionStack& stack) {
  if (stack.gemm_efficiency) em.gemm_efficiency = *stack.gemm_efficiency;
  if (stack.layer_overhead_s) em.layer_overhead_s = *stack.layer_overhead_s;
  if (stack.step_overhead_s) em.step_overhead_s = *stack.step_overhead_s;
  if (stack.step_overhead_per_sequence_s)
    em.step_overhead_per_sequence_s = *stack.step_overhead_per_sequence_s;
  return em;
}

GemmPath gemm_path(const GpuSpec& gpu, const ExecutionModel& em, const Policy& p) {
  GemmPath g;
  g.efficiency = em.gemm_efficiency;
  if (native_fp8_gemm(p.stack, gpu, p.weight_bits)) {
    g.math = GemmMath::kFp8;
    g.efficiency = p.stack.fp8_gemm_efficiency;
  } else if (native_fp4_gemm(p.stack, gpu, p.weight_bits)) {
    g.math = GemmMath::kFp4;
    g.efficiency = p.stack.fp4_gemm_efficiency;
  }
  if (p.weight_bits < 16 && p.stack.fused_dequant)
    g.weight_bytes_per_elem = matrix_bytes_per_weight(p);
  g.hides_weight_reads = p.stack.gemm_hides_weight_reads;
  return g;
}

double step_host_s(const ExecutionModel& em, double sequences) {
  return em.step_overhead_s + em.step_overhead_per_sequence_s * std::max(sequences, 0.0);
}

double eager_kernel_s(const ExecutionModel& em) {
  return em.layer_overhead_s / kEagerKernelsPerLayer;
}

double power_limited_share(const GpuSpec& gpu, bool fp8) {
  const double share = fp8 ? gpu.fp8_power_limited_share : gpu.fp16_power_limited_share;
  return share > 0 ? share : 1.0;
}

double gemm_flops_per_s(const GpuSpec& gpu, const ExecutionModel& em) {
  // The stack's share of the peak, capped by what the board sustains where that is measured
  // (a power-capped T4 holds far less than its boost-clock peak; model/hardware.hpp): a rate
  // measured at the boost clock, at the share the board keeps under its power limit.
  double rate = units::tflops_to_flops(gpu.fp16_tflops) * em.gemm_efficiency;
  if (gpu.fp16_achieved_tflops > 0)
    rate = std::min(
        rate, units::tflops_to_flops(gpu.fp16_achieved_tflops) * power_limited_share(gpu, false));
  return rate;
}

KernelTime gpu_kernel(const GpuSpec& gpu, const ExecutionModel& em, double flops, double bytes) {
  KernelTime k;
  k.compute_s = flops / gemm_flops_per_s(gpu, em);
  k.memory_s = bytes / (units::gbps_to_bytes_per_s(gpu.hbm_gbps) * em.hbm_efficiency);
  k.s = std::max(k.compute_s, k.memory_s);
  return k;
}

namespace {
struct TrainingPassEfficiency {
  const char* arch;
  double fraction;  // achieved hardware FLOPs / dense fp16 peak
};
// Published end-to-end training rates, FLOPs counted with the recompute:
// - volta: NVIDIA ADLR, "MegatronLM's Supercharged V1.0" (nv-adlr.github.io/MegatronLMV1, 2020):
//   the 1.2B GPT-2 baseline on one V100 of a DGX-2H "achieves 62.4 teraFLOPs which is 48% of the
//   theoretical peak FLOPS for a single GPU". The same post's weak-scaling table gives that run's
//   iteration (1,288 ms at batch 8 of 1,024 tokens): 8 FLOPs per parameter and token (forward,
//   its recompute and the backward's two) x 1.2e9 x 8,192 / 1.288 s = 61 TFLOPS, so the figure
//   counts the recompute.
// - ampere: NVIDIA/Megatron-LM README, table of model and hardware FLOPs utilization on Selene's
//   A100 80GB (Korthikanti et al. 2022 define HFU as counting the recompute): 43.7% HFU for the
//   22B GPT, the smallest model of the table (the larger ones, on more GPUs, reach 52.8-57.0%).
// - hopper: MosaicML llm-foundry, scripts/train/benchmarking/README.md, "H100 80GB BF16" table
//   (HFU counts the recompute of activation checkpointing): the rows with checkpointing on, one
//   node of 8 GPUs and sequences of at most 2,048 tokens, 7B-30B MPT models: 50.82, 51.68, 59.03
//   and 57.11%, mean 54.7%. Another stack (Composer/FSDP with FlashAttention), the one hardware-
//   FLOPs figure for Hopper found; its A100 rows reach 73.7-79.3% where Megatron-LM's reach 43.7%,
//   so on Hopper this share is as much the stack's as the GPU's.
constexpr TrainingPassEfficiency kTrainingPassEfficiency[] = {
    {"volta", 0.48},
    {"ampere", 0.437},
    {"hopper", 0.547},
};
}  // namespace

double training_pass_efficiency(const GpuSpec& gpu, const ExecutionModel& em) {
  for (const auto& e : kTrainingPassEfficiency)
    if (gpu.arch == e.arch) return e.fraction;
  return em.gemm_efficiency;
}

double gpu_kernel_s(const GpuSpec& gpu, const ExecutionModel& em, double flops, double bytes) {
  return gpu_kernel(gpu, em, flops, bytes).s;
}

double cpu_attention_s(const HostSpec& host, const ExecutionModel& em, const CpuAttentionWork& w) {
  const int sockets = std::max(1, host.sockets);
  const double gflops = w.fp32 ? host.cpu_fp32_gflops : host.cpu_fp16_gflops;
  const double rate = gflops * units::kGiga * sockets;
  const double compute_s = rate > 0 ? w.flops / rate : 0;
  const double dram_bytes_per_s =
      units::gbps_to_bytes_per_s(host.dram_gbps) * em.cpu_dram_efficiency;
  const double memory_s = w.dram_bytes / dram_bytes_per_s;
  return std::max(compute_s, memory_s) + fresh_pages_s(host, em, w.fresh_bytes, cpu_threads(host));
}

double cpu_threads(const HostSpec& host) {
  return double(std::max(1, host.cores_per_socket)) * std::max(1, host.sockets);
}

double pageable_copy_gbps(const HostSpec& host, double unmeasured_gbps) {
  return host.pageable_copy_gbps > 0 ? host.pageable_copy_gbps : unmeasured_gbps;
}

double pageable_h2d_gbps(const HostSpec& host, double unmeasured_gbps) {
  return host.pageable_h2d_gbps > 0 ? host.pageable_h2d_gbps
                                    : pageable_copy_gbps(host, unmeasured_gbps);
}

double fresh_pages_s(const HostSpec& host, const ExecutionModel& em, double bytes, double threads) {
  if (bytes <= 0) return 0;
  const double per_thread_gbps = host.page_fault_gbps > 0 ? host.page_fault_gbps
                                 : host.virtual_machine   ? em.fresh_page_fault_gbps
                                                          : em.bare_metal_page_fault_gbps;
  const double dram_bytes_per_s =
      units::gbps_to_bytes_per_s(host.dram_gbps) * em.cpu_dram_efficiency;
  const double fault_bytes_per_s = std::min(
      std::max(1.0, threads) * units::gbps_to_bytes_per_s(per_thread_gbps), dram_bytes_per_s);
  return bytes / fault_bytes_per_s + bytes / units::gbps_to_bytes_per_s(em.fresh_page_free_gbps);
}

namespace {
double link_cap_gbps(const GpuSpec& gpu, const HostSpec& host) {
  // A copy engine achieves about 80% of the link's payload rate (TLP headers, flow control).
  return 0.8 * pcie_link_gbps(std::min(gpu.pcie_gen, host.pcie_gen), gpu.pcie_lanes);
}
}  // namespace

double h2d_gbps(const GpuSpec& gpu, const HostSpec& host) {
  const double cap = link_cap_gbps(gpu, host);
  return gpu.pcie_h2d_gbps > 0 ? std::min(gpu.pcie_h2d_gbps, cap / 0.8) : cap;
}

double d2h_gbps(const GpuSpec& gpu, const HostSpec& host) {
  const double cap = link_cap_gbps(gpu, host);
  return gpu.pcie_d2h_gbps > 0 ? std::min(gpu.pcie_d2h_gbps, cap / 0.8) : cap;
}

double pinned_copies_s(const GpuSpec& gpu, double copies, double bytes, double bytes_per_s) {
  if (bytes <= 0) return 0.0;
  const double fixed_s =
      gpu.pcie_copy_overhead_us > 0 ? copies * gpu.pcie_copy_overhead_us * units::kMicro : 0.0;
  return fixed_s + bytes / bytes_per_s;
}

namespace {
// Share of one GPU's link copy rate that each direction keeps when collectives run through host
// memory (no peer access: NCCL's SHM transport, each byte written to pinned host memory by the
// sender and read back by the receiver), where every rank sends and receives at once. Derived
// from one published measurement (NVIDIA/nccl#384, NCCL 2.4.8, two GPUs on PCIe Gen3 x16 with
// NCCL_P2P_DISABLE=1, one channel): all-reduce 3.9 GB/s bus bandwidth against 10.31 GB/s for
// broadcast (reduce 9.62), which moves the same bytes per GPU in one direction only; the NCCL
// maintainer's answer there: broadcast and reduce on two GPUs "only flow in one direction,
// contrary to other operations which are bidirectional. Some components (in particular some
// CPUs) do not handle bidirectional traffic well". 3.9 / 10.31 = 0.378. The one-direction figure
// is 82% of Gen3 x16's 12.6 GB/s, the share a copy engine reaches (link_cap_gbps), so the
// bidirectional share applies to the link's copy rate. No two-GPU measurement of a GeForce
// RTX 4090 pair through host memory was found to check it on Gen4.
constexpr double kHostPathBidirectionalShare = 3.9 / 10.31;
}  // namespace

double gpu_peer_gbps(const GpuSpec& gpu, const HostSpec& host) {
  if (gpu.nvlink_gbps > 0) return gpu.nvlink_gbps;
  // Peer-to-peer over PCIe through the root complex or a switch: about the host-copy rate.
  const double copy_gbps = std::min(h2d_gbps(gpu, host), d2h_gbps(gpu, host));
  if (peer_link_kind(gpu, host) == PeerLinkKind::kPcieHost)
    return copy_gbps * kHostPathBidirectionalShare;
  return copy_gbps;
}

double ring_allgather_bytes(double bytes, double ranks) {
  return ranks > 1 ? bytes * (ranks - 1) / ranks : 0.0;
}

double ring_reduce_scatter_bytes(double bytes, double ranks) {
  return ring_allgather_bytes(bytes, ranks);
}

double ring_allreduce_bytes(double bytes, double ranks) {
  // A reduce-scatter, then an all-gather of the reduced shards.
  return ranks > 1 ? 2 * bytes * (ranks - 1) / ranks : 0.0;
}

PeerLinkKind peer_link_kind(const GpuSpec& gpu, const HostSpec& host) {
  if (gpu.nvlink_gbps > 0) return PeerLinkKind::kNvlink;
  return gpu.pcie_p2p && host.gpu_p2p ? PeerLinkKind::kPcieP2p : PeerLinkKind::kPcieHost;
}

const char* to_string(PeerLinkKind kind) {
  switch (kind) {
    case PeerLinkKind::kNvlink: return "nvlink";
    case PeerLinkKind::kPcieP2p: return "pcie-p2p";
    case PeerLinkKind::kPcieHost: return "pcie-host";
  }
  return "?";
}

namespace {
// [us] NCCL's base latency of a ring collective at its low-latency (LL) protocol, the one it
// picks for the small messages of decode: NCCL 2.18-2.19 src/graph/tuning.cc, baseLat[Ring][LL]
// = 6.6 us.
constexpr double kNcclRingBaseUs = 6.6;
// [us] Hardware latency of one ring step by link kind:
// - NVLink: NCCL 2.18-2.19 tuning.cc hwLat[NVLINK][Ring][LL] = 0.6 us. Two H100 SXM GPUs measure
//   about 6 us per small all-reduce under CUDA graphs (NVIDIA/nccl#1259, NCCL 2.20.5, NVLSTree),
//   against 6.6 + 2 x 0.6 = 7.8 us here.
// - PCIe peer-to-peer: derived from one published measurement, not NCCL's 1.0 us
//   (hwLat[PCI][Ring][LL]), which undershoots it: NCCL all-reduces of 256 B to 64 KB on eight
//   RTX PRO 6000 Blackwell boards with PCIe Gen5 P2P behind switches take 24.1-24.6 us
//   (voipmonitor/rtx6kpro hardware/pcie-bandwidth.md, "Custom Allreduce vs NCCL"): (24.35 - 6.6)
//   / 14 steps = 1.27 us. Four V100s behind a PLX switch with P2P measure 19.4 us at 4 KB under
//   a CUDA graph (haohervchb/sglang-V100#2), against 6.6 + 6 x 1.27 = 14.2 us here.
// - PCIe through host memory: derived from one published measurement: an 8-byte NCCL ring
//   all-reduce on eight GeForce RTX 4090s (no peer access) takes 42.14-42.56 us
//   (NVIDIA/nccl#1530): (42.35 - 6.6) / 14 = 2.55 us. Two RTX 4090s without P2P exchange 8 bytes
//   (alltoall_perf, one step each way) in 11.3-11.9 us (tinygrad/open-gpu-kernel-modules#17),
//   against 6.6 + 2 x 2.55 = 11.7 us here.
constexpr double kRingStepUs[] = {0.6, 1.27, 2.55};
// All-reduces per transformer layer under Megatron-LM tensor parallelism (after attention and
// after the FFN; Shoeybi et al., 2019, section 3).
constexpr double kTensorParallelAllreducesPerLayer = 2.0;
}  // namespace

namespace {
// NCCL's ring latency model for `steps` ring steps on `kind` links.
double ring_latency_s(PeerLinkKind kind, double steps) {
  return (kNcclRingBaseUs + steps * kRingStepUs[static_cast<int>(kind)]) * units::kMicro;
}
}  // namespace

double ring_allreduce_latency_s(PeerLinkKind kind, double ranks) {
  if (ranks <= 1) return 0.0;
  return ring_latency_s(kind, 2.0 * (ranks - 1));
}

double ring_allgather_latency_s(PeerLinkKind kind, double ranks) {
  if (ranks <= 1) return 0.0;
  return ring_latency_s(kind, ranks - 1);
}

TensorParallelComm tensor_parallel_layer_comm(const GpuSpec& gpu, const HostSpec& host,
                                              const LlmSpec& m, double tokens, double tp) {
  TensorParallelComm c;
  c.link = peer_link_kind(gpu, host);
  if (tp <= 1) return c;
  c.collectives = kTensorParallelAllreducesPerLayer;
  c.bytes = tensor_parallel_layer_bytes(m, tokens, tp);
  c.latency_s = c.collectives * ring_allreduce_latency_s(c.link, tp);
  return c;
}

TensorParallelComm tensor_parallel_logits_comm(const GpuSpec& gpu, const HostSpec& host,
                                               const LlmSpec& m, double rows, double tp) {
  TensorParallelComm c;
  c.link = peer_link_kind(gpu, host);
  if (tp <= 1 || rows <= 0) return c;
  c.collectives = 1;
  // vLLM's LogitsProcessor._get_logits runs the vocab-parallel head on the sampled rows only and
  // gathers the shards (tensor_model_parallel_all_gather, or tensor_model_parallel_gather to rank
  // 0 where the platform asks for it: each rank's shard crosses the ring once either way) in the
  // model's dtype, before the sampler casts them to fp32: rows x vocab x 2 bytes.
  c.bytes = ring_allgather_bytes(rows * m.vocab * 2.0, tp);
  c.latency_s = ring_allgather_latency_s(c.link, tp);
  return c;
}

double tensor_parallel_layer_bytes(const LlmSpec& m, double tokens, double tp) {
  // Each all-reduce is of the layer's fp16 hidden states.
  return kTensorParallelAllreducesPerLayer * ring_allreduce_bytes(tokens * m.hidden * 2.0, tp);
}

double pcie_switch_uplink_gbps(const GpuSpec& gpu, const HostSpec& host) {
  if (host.pcie_switch_uplink_gbps > 0) return host.pcie_switch_uplink_gbps;
  // The share of the theoretical rate the GPU's own link achieves (its measured copy rate where
  // the catalog has one), applied to an x16 uplink of the host's generation.
  const double own_link = pcie_link_gbps(std::min(gpu.pcie_gen, host.pcie_gen), gpu.pcie_lanes);
  const double efficiency = own_link > 0 ? h2d_gbps(gpu, host) / own_link : 0.8;
  return efficiency * pcie_link_gbps(host.pcie_gen, 16);
}

Zero3GatherTraffic zero3_gather_traffic(const GpuSpec& gpu, const HostSpec& host, int ranks,
                                        double host_bytes, double gathered_bytes) {
  Zero3GatherTraffic t;
  const int n = std::max(1, ranks);
  t.partition_bytes = host_bytes / n;
  t.gather_bytes = ring_allgather_bytes(gathered_bytes, n);
  t.gather_on_peer_link = gpu.nvlink_gbps > 0;
  const int per_switch = host.gpus_per_pcie_switch;
  // One rank has nobody to contend with: the single-GPU path, which models no switch.
  if (per_switch <= 0 || n == 1) return t;
  t.gpus_behind_switch = std::min(n, per_switch);
  t.uplink_bytes = t.gpus_behind_switch * t.partition_bytes;
  // A ring over several switches enters this switch once: one neighbour's sends, the same
  // (ranks - 1) / ranks of the gathered bytes each rank receives. NVLink gathers bypass PCIe.
  const int switches = (n + per_switch - 1) / per_switch;
  if (switches > 1 && !t.gather_on_peer_link) t.uplink_bytes += t.gather_bytes;
  return t;
}

int zero3_prefetch_modules(const Zero3Settings& z, double module_elements) {
  if (z.prefetch_bucket_size <= 0 || z.max_live_parameters <= 0 || module_elements <= 0) return 0;
  const double room = std::min(z.prefetch_bucket_size, z.max_live_parameters - module_elements);
  return std::max(1, static_cast<int>(std::floor(std::max(0.0, room) / module_elements)));
}

namespace {
// [bytes] The largest piece of one request a drive is given (nvme_array_timing): md RAID-0's
// default chunk (mdadm(8), --chunk: 512 KiB).
constexpr double kDrivePieceBytes = 512.0 * 1024.0;
}  // namespace

NvmeArrayTiming nvme_array_timing(const NvmeArray& nvme, const HostSpec& host, const AioConfig& aio,
                                  double transfer_bytes, int readers) {
  NvmeArrayTiming t;
  if (nvme.count <= 0) return t;
  const double drives = nvme.count;
  const double block = std::max(4096.0, aio.block_size_bytes);
  // A transfer smaller than the reader's window cannot keep every slot busy. Independent readers
  // each keep their own window full, so the array sees all their requests together.
  const double n_readers = std::max(1, readers);
  const double requests = n_readers * std::max(1.0, std::ceil(transfer_bytes / block));
  const double outstanding =
      std::min(requests, n_readers * std::max(1.0, double(aio.threads) * double(aio.queue_depth)));
  // RAID-0 stripes each request over every drive: each drive sees a 1/N share of every request,
  // and gets it in pieces of at most one chunk (Linux md RAID-0 maps a request chunk by chunk and
  // submits every piece at once; md's default chunk is 512 KiB, mdadm(8) --chunk). A lone drive's
  // request is split the same way by the block layer at its largest request (max_sectors_kb,
  // capped at 1280 KiB by default since Linux 6.7, 512 KiB before; lower where the drive's MDTS
  // is): the same order, so one size serves both. So a request's share keeps a drive as busy as
  // its pieces together, and the first data lands after one piece, not one share: with a
  // 16 MiB block, 4 MiB a drive on 4 drives and 2 MiB on 8 but 512 KiB pieces on both, the time
  // to the first completed piece does not shrink as drives are added.
  const double block_per_drive = std::max(4096.0, block / drives);
  const double piece = std::min(block_per_drive, kDrivePieceBytes);
  const double pieces_per_request = block_per_drive / piece;
  auto array_gbps = [&](const SsdDirectionModel& m) {
    double per_drive = m.bandwidth_gbps(piece, outstanding * pieces_per_request);
    double array = per_drive * drives;
    // The host's kernel I/O path (block layer, RAID, interrupts) caps the aggregate; it adds its
    // time per byte to the drives'.
    if (host.nvme_io_gbps > 0) array = 1.0 / (1.0 / array + 1.0 / host.nvme_io_gbps);
    return array;
  };
  t.read_gbps = array_gbps(nvme.model.read);
  t.write_gbps = array_gbps(nvme.model.write);
  t.read_latency_s = nvme.model.read.latency_s(piece, 1);
  t.write_latency_s = nvme.model.write.latency_s(piece, 1);
  t.mix_interference = nvme.model.mix_interference;
  return t;
}

NvmeArrayTiming::Mixed NvmeArrayTiming::mixed_s(double read_bytes, double write_bytes) const {
  Mixed m;
  const bool reads = read_bytes > 0, writes = write_bytes > 0;
  if (!reads) {
    m.write_busy_s = writes ? write_s(write_bytes) : 0.0;
    return m;
  }
  if (!writes) {
    m.read_done_s = m.read_busy_s = read_s(read_bytes);
    return m;
  }
  const double t_read = 1.0 / units::gbps_to_bytes_per_s(read_gbps);
  const double t_write = 1.0 / units::gbps_to_bytes_per_s(write_gbps);
  const double shared_writes = std::min(read_bytes, write_bytes);
  const double f = read_bytes / (read_bytes + shared_writes);
  const double window_s = (read_bytes + shared_writes) *
                          mixed_seconds_per_byte(f, t_read, t_write, mix_interference);
  m.read_done_s = read_latency_s + window_s;
  // The window's time goes to each direction in proportion to what it would take alone.
  const double read_alone = read_bytes * t_read, write_alone = shared_writes * t_write;
  m.read_busy_s = read_latency_s + window_s * read_alone / (read_alone + write_alone);
  m.write_busy_s = window_s * write_alone / (read_alone + write_alone) +
                   (write_bytes - shared_writes) * t_write;
  return m;
}

double nvme_drained_read_s(const NvmeArray& nvme, const HostSpec& host, const AioConfig& aio,
                           double bytes) {
  if (bytes <= 0) return 0;
  const double block = std::max(4096.0, aio.block_size_bytes);
  const double requests = std::ceil(bytes / block);
  double t = 0;
  for (double i = 0; i < requests; i += 1) {
    const double left = bytes - i * block;
    t += std::min(block, left) /
         units::gbps_to_bytes_per_s(nvme_array_timing(nvme, host, aio, left).read_gbps);
  }
  return t;
}

double layer_weight_read_bytes(const LlmSpec& m, double tokens, double tp) {
  return layer_read_params(m, tokens) * 2.0 / tp;
}

double layer_elementwise_bytes(const LlmSpec& m, double tokens, double tp, const GemmPath& gemm) {
  // The elementwise kernels of one decoder layer as the serving engines launch them (vLLM's
  // LlamaDecoderLayer and OPTDecoderLayer; TensorRT-LLM's fused residual RMSNorm and SwiGLU
  // plugins). Each reads its 16-bit operands and writes its result, at the next GEMM's input
  // width where a GEMM reads it (an FP8 or NVFP4 GEMM's activations are quantised by the kernel
  // before it).
  // TensorRT-LLM applies the rotary embedding in a pre-processing kernel of the context phase
  // and inside the masked-MHA kernel in generation (docs/source/gpt_attention.md, v0.6-v0.7);
  // it is counted for every token, which a decode step's few tokens leave a small error:
  // - two norms, each fused with the residual add before it: the hidden state and the residual
  //   read, the residual and the normalised state written. Tensor parallelism leaves every rank
  //   the whole hidden state after each all-reduce (Megatron-LM's layer), so every rank runs them
  //   whole;
  // - the rotary embedding (a model without a learned position table) rewrites its rank's
  //   queries and keys in place; under MLA only each query head's rotary part and the one shared
  //   rotary key, and the latents' two norms (q_a_layernorm, kv_a_layernorm in DeepSeek-V2's
  //   attention) read and write the query and KV latents;
  // - the MLP's activation on the rank's share of the inner width: a gated MLP's SiLU-and-multiply
  //   reads gate and up and writes their product, a plain MLP's ReLU or GELU reads and writes it.
  //   An MoE token's width is its top-k experts' and the shared experts'; their outputs are then
  //   summed into one hidden state (vLLM's moe_sum, TensorRT-LLM's finalize-routing kernel),
  //   whole on every rank. A mixed MoE (dense and expert layers) is averaged over its layers, as
  //   layer_active_params is.
  // Eager PyTorch launches more of them (an RMSNorm in fp32 is several kernels); not counted.
  const double gemm_input_bytes = gemm.math == GemmMath::kFp8   ? 1.0
                                  : gemm.math == GemmMath::kFp4 ? kNvfp4BytesPerElem
                                                                : 2.0;
  const double h = m.hidden;
  const double k = m.experts_per_token;
  const double expert_width = double(m.ffn) * k + double(m.shared_ffn);
  const double combine = (k + (m.shared_ffn > 0 ? 1.0 : 0.0)) * h * 2.0 + h * 2.0;
  double inner = m.experts > 1 ? expert_width : double(m.ffn);
  double moe_combine = m.experts > 1 ? combine : 0.0;
  if (m.mixed_layers()) {
    const double n = m.expert_layers();
    inner = (n * expert_width + (m.layers - n) * double(m.dense_mlp_width())) / m.layers;
    moe_combine = n * combine / m.layers;
  }
  const double norms = 2.0 * (3.0 * h * 2.0 + h * gemm_input_bytes);
  double rotary = 0;
  if (m.mla())
    rotary = 2.0 * (double(m.heads) / tp * m.qk_rope_dim + m.qk_rope_dim) * 2.0 +
             2.0 * (double(m.q_lora_rank) + m.kv_lora_rank) * 2.0;
  else if (!m.learned_positions)
    rotary = 2.0 * (double(m.q_dim()) + m.kv_dim()) * 2.0 / tp;
  const double reads = m.ffn_kind == FfnKind::kGated ? 2.0 : 1.0;
  const double activation = inner * (reads * 2.0 + gemm_input_bytes) / tp;
  return tokens * (norms + rotary + activation + moe_combine);
}

double layer_dequant_s(const GpuSpec& gpu, const ExecutionModel& em, const Policy& p,
                       double module_elements, double tp) {
  if (p.weight_bits >= 16 || p.stack.fused_dequant) return 0;
  return gpu_kernel_s(
      gpu, em, 0,
      module_elements * (bytes_per_weight(p.weight_bits, p.quant_group_size) + 2.0) / tp);
}

double prefill_pairs(const PrefillChunk& c) {
  return c.sequences * c.queries * (c.offset + (c.queries + 1) / 2);
}

double prefill_attention_s(const LlmSpec& m, const GpuSpec& gpu, const ExecutionModel& em,
                           const ExecutionStack& stack, const PrefillChunk& c, double tp) {
  if (c.queries <= 0 || c.sequences <= 0) return 0;
  const double gemm_rate = gemm_flops_per_s(gpu, em);
  // The new tokens against themselves (causal) and against the offset (every pair).
  const double diagonal_flops =
      attention_flops(m, c.sequences * c.queries, (c.queries + 1) / 2) / tp;
  const double offset_flops = attention_flops(m, c.sequences * c.queries, c.offset) / tp;
  // The kernel's rate for `keys` keys per query, with the mask or without; the GEMM rate where
  // no published rate covers this GPU.
  auto rate = [&](bool causal, double keys) {
    if (!stack.fused_attention) return gemm_rate;
    const std::optional<double> fraction = fused_attention_peak_fraction(
        stack.prefill_attention_kernel, gpu.arch, m.head_dim(), causal, keys);
    if (!fraction) return gemm_rate;
    // The kernel's published rate and the board's achieved GEMM rate are both boost-clock
    // figures: under the power limit, both at the board's share.
    double r = units::tflops_to_flops(gpu.fp16_tflops) * *fraction;
    if (gpu.fp16_achieved_tflops > 0)
      r = std::min(r, units::tflops_to_flops(gpu.fp16_achieved_tflops));
    return r * power_limited_share(gpu, false);
  };
  double s = diagonal_flops / rate(true, c.queries);
  if (offset_flops > 0) s += offset_flops / rate(false, c.offset);
  // A stack that keeps only the window runs a sliding layer's queries against at most
  // sliding_window keys each: the pairs causal_pairs counts, at the kernel's rate for the keys
  // each part spans.
  const int sliding = m.sliding_layers();
  if (sliding > 0 && stack.window_cache && c.offset + c.queries > m.sliding_window) {
    const double w = m.sliding_window;
    const CausalPairs pairs = m.chunked_attention ? chunked_causal_pairs(c.queries, c.offset, w)
                                                  : causal_pairs(c.queries, c.offset, w);
    double windowed =
        attention_flops(m, c.sequences, pairs.diagonal) / tp / rate(true, std::min(c.queries, w));
    if (pairs.cached > 0)
      windowed +=
          attention_flops(m, c.sequences, pairs.cached) / tp / rate(false, std::min(c.offset, w));
    const double share = double(sliding) / m.layers;
    s = (1 - share) * s + share * windowed;
  }
  return s;
}

double layer_kernel_s(const LlmSpec& m, const GpuSpec& gpu, const ExecutionModel& em,
                      const LayerPass& pass, double tp, const GemmPath& gemm) {
  return layer_kernel(m, gpu, em, pass, tp, gemm).s;
}

namespace {
// FP8 and FP4 GEMMs at their own rate: the stack's share of the board's dense peak for that
// precision, capped by what the board reaches where that is measured.
double low_precision_gemm_flops_per_s(const GpuSpec& gpu, const GemmPath& gemm) {
  const bool fp8 = gemm.math == GemmMath::kFp8;
  double rate = units::tflops_to_flops(fp8 ? gpu.fp8_tflops : gpu.fp4_tflops) * gemm.efficiency;
  const double achieved_tflops = fp8 ? gpu.fp8_achieved_tflops : gpu.fp4_achieved_tflops;
  if (achieved_tflops > 0)
    rate = std::min(rate, units::tflops_to_flops(achieved_tflops) *
                              (fp8 ? power_limited_share(gpu, true) : 1.0));
  return rate;
}
}  // namespace

KernelTime layer_kernel(const LlmSpec& m, const GpuSpec& gpu, const ExecutionModel& em,
                        const LayerPass& pass, double tp, const GemmPath& gemm) {
  // A layer is a sequence of kernels on one stream, each finishing before the next starts: the
  // weight GEMMs (with the elementwise work between them) and the attention kernel, which reads
  // and writes the KV cache (and, eager, the score matrices). Each kernel is bound by its own
  // resource (the roofline is a per-kernel bound: Williams, Waterman and Patterson, "Roofline",
  // CACM 52(4), 2009), so a compute-bound GEMM does not hide a memory-bound attention kernel:
  // the layer takes the sum of the kernels' rooflines, not the roofline of their sum.
  const double gemm_flops = layer_gemm_flops(m, pass.tokens) / tp;
  // Every expert some token of the pass was routed to is read, though each token computes only
  // its top-k (model/llm.hpp layer_read_params).
  const double weight_bytes = layer_read_params(m, pass.tokens) * gemm.weight_bytes_per_elem / tp;
  // Attention runs at the fp16 rate.
  KernelTime attention;
  if (pass.kv_distinct_read_bytes >= 0 && pass.kv_distinct_read_bytes < pass.kv_read_bytes &&
      gpu.l2_shared_read_gbps > 0) {
    // Thread blocks of the query heads that share a KV head run side by side (TensorRT-LLM's
    // masked-MHA kernel: grid {heads, batch}, head fastest; hi_kv = hi / (heads / kv_heads)), so
    // the KV cache leaves device memory once and every block's read of it goes through L2. The
    // kernel is bound by the slower of the two.
    const double dram_bytes = pass.kv_distinct_read_bytes + pass.kv_write_bytes + pass.score_bytes;
    attention = gpu_kernel(gpu, em, pass.attention_flops / tp, dram_bytes);
    const double l2_s = pass.kv_read_bytes / units::gbps_to_bytes_per_s(gpu.l2_shared_read_gbps);
    // The shared reads keep the memory system (L2 and its crossbar) as busy as the device memory
    // would be: counted as memory time.
    attention.memory_s = std::max(attention.memory_s, l2_s);
    attention.s = std::max(attention.s, l2_s);
  } else {
    const double attention_bytes = pass.kv_read_bytes + pass.kv_write_bytes + pass.score_bytes;
    attention = gpu_kernel(gpu, em, pass.attention_flops / tp, attention_bytes);
  }
  // Prefill attention's math at its own kernel's rate, in the same kernel as the rest (one
  // launch over the pass's sequences in a serving engine), so under the same roofline.
  attention.compute_s += pass.prefill_attention_s;
  attention.s = std::max(attention.s, attention.compute_s);
  const double gemm_math_s = gemm.math == GemmMath::kFp16
                                 ? gpu_kernel_s(gpu, em, gemm_flops, 0)
                                 : gemm_flops / low_precision_gemm_flops_per_s(gpu, gemm);
  const double gemm_memory_s = gpu_kernel_s(gpu, em, 0, weight_bytes);
  KernelTime gemm_k;
  gemm_k.compute_s = gemm_math_s;
  gemm_k.memory_s = gemm_memory_s;
  if (gemm.hides_weight_reads) {
    // Each output tile's K loop loads its panel of the weights; where the board's sweep shows
    // that the math does not hide all of those loads, the exposed part adds to the math
    // (GpuSpec::gemm_exposed_weight_gbps: measured t = math + weight bytes / that rate over
    // 140 shapes, each timed twice, on an H100, tools/gpu/h100-2026-11-27.md). A thin GEMM is
    // still bound by streaming its weights from device memory once.
    // No FP4 sweep was measured: the math is taken to hide the FP4 weight loads.
    const double exposed_gbps = gemm.math == GemmMath::kFp8    ? gpu.fp8_gemm_exposed_weight_gbps
                                : gemm.math == GemmMath::kFp16 ? gpu.gemm_exposed_weight_gbps
                                                               : -1.0;
    const double exposed_s =
        exposed_gbps > 0 ? weight_bytes / units::gbps_to_bytes_per_s(exposed_gbps) : 0.0;
    gemm_k.s = std::max(gemm_math_s + exposed_s, gemm_memory_s);
  } else {
    gemm_k.s = gemm_math_s + gemm_memory_s;
  }
  gemm_k += attention;
  // The elementwise kernels between the GEMMs are kernels of their own, bound by their memory
  // traffic: they add to the GEMMs' time, which their bytes do not share.
  gemm_k += gpu_kernel(gpu, em, 0, layer_elementwise_bytes(m, pass.tokens, tp, gemm));
  return gemm_k;
}

KernelTime edge_module(const LlmSpec& m, const GpuSpec& gpu, const ExecutionModel& em, bool head,
                       double tokens, double sequences, double module_elements, double tp) {
  double flops = 0, bytes = tokens * m.hidden * 2.0;
  if (head) {
    flops = 2.0 * sequences * m.vocab * m.hidden / tp;
    bytes += module_elements * 2.0 / tp;
  }
  KernelTime k = gpu_kernel(gpu, em, flops, bytes).plus_gap(em.layer_overhead_s / 4);
  // The head ends the pass: the host work of the step waits on its result (sampled tokens).
  if (head) k = k.plus_gap(step_host_s(em, sequences));
  return k;
}

double edge_module_s(const LlmSpec& m, const GpuSpec& gpu, const ExecutionModel& em, bool head,
                     double tokens, double sequences, double module_elements, double tp) {
  return edge_module(m, gpu, em, head, tokens, sequences, module_elements, tp).s;
}

}  // namespace tiersim

namespace tiersim {

KernelTime flexgen_codec(const GpuSpec& gpu, const ExecutionModel& em, double elements,
                         double bytes_per_elem, double calls, int kernels_per_call) {
  KernelTime k = gpu_kernel(gpu, em, 0, elements * bytes_per_elem);
  k.s = std::max(k.s, calls * kernels_per_call * eager_kernel_s(em));
  return k;
}

double flexgen_codec_s(const GpuSpec& gpu, const ExecutionModel& em, double elements,
                       double bytes_per_elem, double calls, int kernels_per_call) {
  return flexgen_codec(gpu, em, elements, bytes_per_elem, calls, kernels_per_call).s;
}

double flexgen_cpu_s(const HostSpec& host, const ExecutionModel& em, double flops, double bytes) {
  CpuAttentionWork w;
  w.flops = flops;
  w.fp32 = true;
  w.dram_bytes = bytes;
  return cpu_attention_s(host, em, w);
}

}  // namespace tiersim
