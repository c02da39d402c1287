#pragma once
// How fast kernels and transfers run on the hardware, before any contention. The simulator asks
// these pure functions for service times and lets the engine queue them on shared resources.
#include "model/hardware.hpp"
#include "model/llm.hpp"
#include "model/scenario.hpp"
#include "model/stack.hpp"
#include "model/units.hpp"

namespace tiersim {

// Framework and library efficiencies: how far real software stays below hardware peaks. These are
// properties of the software stack (PyTorch eager + cuBLAS, DeepSpeed), not of any one published
// case, and apply to every scenario alike.
struct ExecutionModel {
  // gemm_efficiency, layer_overhead_s, fetch_overhead_s and cpu_dram_efficiency cite no
  // measurement and were set in the change that added the first ZeRO-Inference reference rows:
  // scenarios/validation/derivations.yaml lists them as derived from those rows.
  // Large fp16 GEMMs in cuBLAS reach about 70-80% of dense tensor peak; eager PyTorch adds
  // elementwise kernels (layer norm, activation, residual) between them.
  double gemm_efficiency = 0.70;
  // Memory-bound kernels (decode GEMV, attention over the KV cache, dequantisation) reach about
  // 80% of the HBM bandwidth. Measured on an H100 SXM: fp16 decode GEMMs (1-64 rows) streamed
  // their weights at 2.54-2.59 of 3.35 TB/s (76-77%), a vectorised add at 2.94 (88%)
  // (tools/gpu/h100-2026-11-26.md).
  double hbm_efficiency = 0.80;
  // Kernel launches and Python dispatch per transformer layer in eager mode
  // (kEagerKernelsPerLayer kernels).
  double layer_overhead_s = 300e-6;
  // Host work of one forward pass that the GPU waits for (ExecutionStack::step_overhead_s and
  // step_overhead_per_sequence_s, model/stack.hpp): per pass [s] and per sequence in it [s].
  // Eager Hugging Face generate() with DeepSpeed (and FlexGen's loop, which runs on this model):
  // 0, since no published measurement of its per-step host time beyond the kernels was found. Its
  // per-layer Python dispatch is in layer_overhead_s; its sampling kernels run in the head.
  double step_overhead_s = 0;
  double step_overhead_per_sequence_s = 0;
  // Per fetched parameter tensor: ZeRO-3 module hooks, buffer allocation, stream synchronisation.
  double fetch_overhead_s = 200e-6;
  // Per parameter tensor swapped in from NVMe, on top of fetch_overhead_s: DeepSpeed's host work
  // for one swap-in that the array waits for, since the next read is issued only after the one
  // before it has landed (sim/workloads/inference/inference.cpp fetch_module): the swapper's
  // bookkeeping, the aio or GDS handle's operation (the tensor split over its threads, their
  // requests submitted, every completion waited for: synchronize_reads) and the module hooks
  // between that wait and the next swap-in. No measurement of it is published; it is derived
  // from llama3-70b-h200-4x-gen5-gds (deepnvme-2025-06; scenarios/validation/derivations.yaml):
  // with it 0 that row ran 12.4 s short of the published 180.7 s (3,072 tokens at 17 tokens/s),
  // over 31 I/O-bound decode passes of 562 swap-ins each: 0.71 ms per swap-in.
  double swap_in_overhead_s = 710e-6;
  // Copies from pageable host memory: the CUDA driver memcpy's through pinned staging buffers on
  // one CPU thread, so the rate is capped by that memcpy, whatever the link, and the thread is
  // busy for the duration. Measured 15.2-15.4 GB/s host-to-device for 16-64 MiB copies on an H200
  // host whose pinned copies reach 52-54 GB/s (tools/gpu/h200-copy-bandwidth.csv). Copies of
  // 256 MiB-1 GiB, the size of a model's weight tensors, ran at about half that (7.6-8.4 GB/s on
  // the same host), which a host's measured HostSpec::pageable_h2d_gbps gives the weight stream
  // (model/weight_stream.cpp). Kept for hosts
  // without one: the A6000 workstation rows (dse-zero-inference, pin_memory: false, a bare-metal
  // host whose CPU is not named) need about this rate.
  double pageable_copy_gbps = 15.0;
  // CPU kernels reading host DRAM reach this fraction of its theoretical bandwidth.
  double cpu_dram_efficiency = 0.5;
  // Writing into a fresh large allocation (glibc mmap()s anything above its 32 MiB maximum mmap
  // threshold, mallopt(3)): the kernel faults in and zeroes every 4 KiB page on first touch and
  // unmaps them on free. Per thread; measured with tools/host/fresh_pages.cpp on a 2-vCPU KVM
  // guest (38-400 MiB buffers): fault-in 0.53-0.85 s/GB, free 0.08-0.13 s/GB, together
  // 1.1-1.3 GB/s (model/perf.hpp fresh_pages_s; torch.save's storages, CheckpointSoftware).
  // Split in its two parts, for work whose faults and whose free run on
  // different threads: fault-in (and zeroing) 0.53-0.85 s/GB, midpoint 0.69 s/GB, on the thread
  // that first writes the page; free 0.08-0.13 s/GB, midpoint 0.105 s/GB, on the one thread that
  // drops the last reference (munmap). The fault-in figure is a virtual machine's
  // (HostSpec::virtual_machine); a host with its own measurement overrides it
  // (HostSpec::page_fault_gbps).
  double fresh_page_fault_gbps = 1.0 / 0.69;
  // Fault-in (and zeroing) of a fresh 4 KiB page on bare metal, per thread: a zero-fill minor
  // fault takes ~1 us (median 1,013 ns including the zeroing, timed with rdtsc around the first
  // touch, Linux 6.6, an 11th-generation Core i7; ddumbying.vercel.app/experiments/
  // pagefault-latency): 4,096 B / 1.013 us = 4.0 GB/s, 2.8x the KVM guest's rate above. No
  // bare-metal figure for the free was found; the guest's is kept for both (freeing guest pages
  // that are already backed does not leave the guest).
  double bare_metal_page_fault_gbps = 4.0;
  double fresh_page_free_gbps = 1.0 / 0.105;
  // The CUDA context of one process (model/capacity.hpp gpu_tier), on top of the driver's own
  // reserve (GpuSpec::memory_reserved_mib). Since CUDA 11.7 modules load lazily (PyTorch sets
  // CUDA_MODULE_LOADING=LAZY from 1.13, pytorch/pytorch#86509), so the context is the driver's
  // structures plus the local memory it reserves for every thread that can be resident:
  // cudaLimitStackSize (default 1 KiB per thread, CUDA Runtime API cudaDeviceSetLimit) x
  // resident threads per SM x SMs. The base is the one published measurement solved for it: a
  // PyTorch context on an RTX 6000 Ada (142 SMs x 1536 threads) shows 426 MiB in nvidia-smi
  // (unslothai/unsloth-zoo#1053, PyTorch 2.10, CUDA 13.0) -> 426 MiB - 213 MiB = 213 MiB. Other
  // reports agree in size: 287 MB with lazy loading on an unnamed GPU (pytorch/pytorch#86509),
  // "around 400MB" (pytorch/pytorch#109888).
  double cuda_context_base_bytes = 426.0 * units::kMiB - 142.0 * 1536.0 * 1024.0;
  double cuda_stack_bytes_per_thread = 1024.0;
  // Operating system, framework and page cache kept free on the host.
  double host_reserved_bytes = 16.0e9;
  // vLLM's V1 engine (v0.19) sizes its KV block pool from a start-up profile instead
  // (vllm/v1/worker/gpu_worker.py determine_available_memory): gpu_memory_utilization x the GPU's
  // total memory, less the weights, the torch peak of the profile run and the non-torch memory the
  // profile added. The profile run is a dummy forward pass over max_num_batched_tokens and a dummy
  // sampler pass over min(max_num_seqs, max_num_batched_tokens) rows of full-vocabulary logits on
  // every tensor-parallel rank. The CUDA context exists before the baseline snapshot, so it comes
  // out of the (1 - utilization) headroom, not the pool; CUDA graphs are captured after the pool
  // is sized (their estimate is off by default in v0.19, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS).
  // Rates from vLLM 0.19.0's own start-up logs on H100 80GB, 8192 tokens and 1024 sequences
  // (llm-d-incubation/llm-d-planner, accuracy/results/v0.19.0/logs, commit d3121e0, "Memory
  // profiling takes ..." lines):
  // - the torch peak is the sampler's: it grows with the vocabulary, not with the hidden size
  //   (Gemma-2-2B and -27B: 3.62 and 3.66 GiB) or the tensor-parallel degree (Llama-3.1-8B at TP
  //   1, 2 and 4: 1.89 GiB). The line through Granite-3.1-8B (vocabulary 49,155: 0.85 GiB) and
  //   Gemma-2-9B (256,000: 3.65 GiB) is 0.196 GB + 14.2 bytes per row and vocabulary entry;
  //   Llama-3.1-8B (1.89), Qwen2.5-7B (2.21) and Phi-4 (1.52 GiB) lie within 2% of it.
  double vllm_sampler_bytes_per_logit = 14.2;
  double vllm_profile_base_bytes = 0.196e9;
  // - non-torch memory added by the profile: 0.24-0.27 GiB on one GPU (Granite 0.46); 2.06-2.21
  //   GiB under tensor parallelism (custom all-reduce and NCCL buffers).
  double vllm_non_torch_bytes = 0.25 * units::kGiB;
  double vllm_non_torch_tp_bytes = 2.1 * units::kGiB;
  // FlexGen's runtime sizes its own buffers (every cache, workspace and staged weight is an
  // explicit allocation, model/capacity.cpp flexgen_capacity), so its checks reserve only what it
  // does not allocate: on the GPU the same runtime items as every PyTorch process (gpu_tier); on
  // the host the kernel and the Python/PyTorch process itself (estimate: ~1 GB kernel and
  // services, ~3 GB for the interpreter, PyTorch and CUDA libraries); the page cache gets what is
  // left (FlexGen's disk tier reads through it).
  double flexgen_host_reserved_bytes = 4.0e9;
  // DeepSpeed keeps parameters smaller than max(1 MiB, AIO block size) in CPU memory.
  double small_param_bytes = 1024.0 * 1024.0;
};

// Kernels an eager transformer layer launches (layer norms, projections, attention, activation,
// residuals): the count layer_overhead_s is spread over.
inline constexpr int kEagerKernelsPerLayer = 30;
// One eager kernel's launch and Python dispatch.
double eager_kernel_s(const ExecutionModel& em);
// Seconds the GPU waits on the host once per forward pass over `sequences` sequences (a prefill,
// a decode step, a serving iteration): em.step_overhead_s + em.step_overhead_per_sequence_s x
// sequences. The one place this cost is charged is the output head of the pass (edge_module with
// head = true, and FlexGen's output embedding), so inference, FlexGen and serving pay it once per
// pass.
double step_host_s(const ExecutionModel& em, double sequences);

// The execution model under a stack (model/stack.hpp): the stack's GEMM efficiency and per-layer
// overhead where it sets them, ExecutionModel's eager figures where it does not.
ExecutionModel with_stack(ExecutionModel em, const ExecutionStack& stack);

// A GPU kernel group's time and what its units do meanwhile: the seconds its math takes at the
// achieved rate and the seconds its device-memory traffic takes at the achieved bandwidth. The
// power model (model/power.hpp gpu_power_limited) reads how busy each is; a kernel bound by
// memory has compute_s < s, one bound by math memory_s < s, and launch gaps neither.
struct KernelTime {
  double s = 0;          // [s] the group's time
  double compute_s = 0;  // [s] of the math units at the rate the time model uses
  double memory_s = 0;   // [s] of device-memory (or shared L2) traffic at its achieved rate
  KernelTime& operator+=(const KernelTime& o) {
    s += o.s;
    compute_s += o.compute_s;
    memory_s += o.memory_s;
    return *this;
  }
  // The same kernels with `gap_s` [s] of launch overhead or waiting, in which neither works.
  KernelTime plus_gap(double gap_s) const { return {s + gap_s, compute_s, memory_s}; }
};

// The share of a boost-clock math rate the board keeps under its power limit (GpuSpec::
// fp16_power_limited_share, fp8_power_limited_share for `fp8`); 1 where not measured.
double power_limited_share(const GpuSpec& gpu, bool fp8);
// [FLOP/s] The fp16 math rate of the stack's GEMMs on `gpu`: its share of the dense peak
// (em.gemm_efficiency), capped by what the board sustains where that is measured
// (GpuSpec::fp16_achieved_tflops, at the power-limited share).
double gemm_flops_per_s(const GpuSpec& gpu, const ExecutionModel& em);
// A GPU kernel group doing `flops` FLOPs and moving `bytes` through device memory: the roofline
// with the efficiencies above.
KernelTime gpu_kernel(const GpuSpec& gpu, const ExecutionModel& em, double flops, double bytes);
// Its seconds.
double gpu_kernel_s(const GpuSpec& gpu, const ExecutionModel& em, double flops, double bytes);

// The share of the dense fp16 tensor peak (GpuSpec::fp16_tflops) that training's forward and
// backward passes reach, by GPU generation (GpuSpec::arch): published end-to-end training rates of
// GPT models in Megatron-LM, with activation checkpointing's recompute counted as work (hardware
// FLOPs, not model FLOPs), divided by the board's peak. The training workload runs its passes at
// this share instead of the inference stacks' GEMM efficiency (ExecutionModel::gemm_efficiency,
// derived from ZeRO-Inference rows), which a training step's backward GEMMs, recompute and
// elementwise kernels do not reach. A generation with no published figure gets
// em.gemm_efficiency. The figures (model/perf.cpp kTrainingPassEfficiency) include everything
// their runs did besides the passes (a GPU optimizer step, data loading), so they are a floor on
// the passes' own share.
double training_pass_efficiency(const GpuSpec& gpu, const ExecutionModel& em);

// The tensor-core precision a layer's weight GEMMs run at.
enum class GemmMath {
  kFp16,  // fp16/bf16 (quantised weights dequantised to fp16 before or inside the GEMM)
  kFp8,   // FP8 weights and activations (native_fp8_gemm)
  kFp4,   // NVFP4 weights and activations (native_fp4_gemm)
};

// Bytes per element of an NVFP4 tensor: a 4-bit value plus one FP8 E4M3 scale per 16 elements
// (NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference", 2025: 16-value
// micro-blocks, an E4M3 scale each, and one FP32 scale per tensor, negligible). The weights of
// a 4-bit policy are stored at bytes_per_weight(4, quant_group_size), 4.5 bits at the default
// group of 64 with its fp16 scale and minimum: the same as NVFP4's.
inline constexpr double kNvfp4BytesPerElem = 0.5 + 1.0 / 16.0;

// How one GPU runs a layer's weight GEMMs under the policy's stack and weight precision.
struct GemmPath {
  GemmMath math = GemmMath::kFp16;
  double efficiency = 0;             // achieved fraction of that rate's dense peak (fp16: em's)
  double weight_bytes_per_elem = 2;  // weight bytes one pass reads per element
  // The weight stream overlaps the math (the longer of the two), or precedes it (their sum):
  // ExecutionStack::gemm_hides_weight_reads.
  bool hides_weight_reads = true;
};
// `em` is the stack's (with_stack). Eager stacks read an fp16 copy of quantised weights
// (layer_dequant_s makes it); fused-dequant stacks read the packed weights.
GemmPath gemm_path(const GpuSpec& gpu, const ExecutionModel& em, const Policy& p);

// Seconds for one CPU attention step (model/llm.hpp CpuAttentionWork): the roofline of its FLOPs
// at the host's fp32 or fp16 rate and its DRAM traffic, plus the first touch of its fresh pages.
// PyTorch's element-wise copy runs on its intra-op pool (one thread per physical core), each
// thread faulting its own pages (fresh_pages_s); the tensor is freed on the Python thread.
double cpu_attention_s(const HostSpec& host, const ExecutionModel& em, const CpuAttentionWork& w);

// Seconds to fault in `bytes` of a fresh large allocation written by `threads` threads (each at
// the host's fault-in rate, the zeroing writes capping the sum at the DRAM rate) and to free it
// again on one thread (munmap). The host's page_fault_gbps when it has one, else the execution
// model's figure for its label: measured in a KVM guest for a virtual machine, the published
// bare-metal fault latency otherwise.
double fresh_pages_s(const HostSpec& host, const ExecutionModel& em, double bytes, double threads);
// Threads of PyTorch's intra-op pool on the host: one per physical core.
double cpu_threads(const HostSpec& host);
// Rate [1e9 B/s] of a device-to-host or host-to-device copy through pageable memory on one host
// thread (the driver stages it through pinned buffers): the host's measurement
// (HostSpec::pageable_copy_gbps) where the catalog has one, else `unmeasured_gbps`, the caller's
// default (ExecutionModel::pageable_copy_gbps for the inference workloads, CheckpointSoftware's for
// torch.save).
double pageable_copy_gbps(const HostSpec& host, double unmeasured_gbps);
// Rate [1e9 B/s] of a host-to-device copy of a large DRAM-resident source through pageable
// memory on one host thread (a weight stream from pageable host memory): the host's
// HostSpec::pageable_h2d_gbps where the catalog has one, else pageable_copy_gbps(host,
// unmeasured_gbps).
double pageable_h2d_gbps(const HostSpec& host, double unmeasured_gbps);

// Achieved host-to-device and device-to-host copy rates (1e9 B/s) of one GPU's link, limited by
// the slower of the GPU's and the host's PCIe generation.
double h2d_gbps(const GpuSpec& gpu, const HostSpec& host);
double d2h_gbps(const GpuSpec& gpu, const HostSpec& host);
// Seconds for `copies` pinned copies that move `bytes` in all over one GPU's link at
// `bytes_per_s` (h2d_gbps or d2h_gbps), one after another on one stream: each copy's fixed cost
// (GpuSpec::pcie_copy_overhead_us; none where the catalog has no measurement) plus the bytes at
// the rate. 0 bytes cost nothing.
double pinned_copies_s(const GpuSpec& gpu, double copies, double bytes, double bytes_per_s);
// GPU-to-GPU bandwidth per direction of a collective (every rank sending and receiving at once):
// NVLink's; over PCIe peer-to-peer the GPU's copy rate over its link; through host memory (no
// peer access, peer_link_kind kPcieHost) the share of that copy rate each direction keeps under
// bidirectional traffic through the host (model/perf.cpp, NVIDIA/nccl#384). Each byte crosses
// each GPU's own link once per direction either way.
double gpu_peer_gbps(const GpuSpec& gpu, const HostSpec& host);

// Bytes each rank sends (and receives) in a ring collective over `ranks` ranks of a buffer of
// `bytes` (NCCL's ring algorithms, the bus-bandwidth factors of nccl-tests' PERFORMANCE.md):
// all-gather (each rank holds bytes / ranks and ends with all of it): (ranks - 1) / ranks x bytes;
// reduce-scatter the same; all-reduce twice that. 0 for one rank. The one place these factors are
// written: training's gathers and reductions, tensor-parallel all-reduces and ZeRO-Inference's
// parameter gathers all use them.
double ring_allgather_bytes(double bytes, double ranks);
double ring_reduce_scatter_bytes(double bytes, double ranks);
double ring_allreduce_bytes(double bytes, double ranks);

// How the GPUs of one node reach each other for a collective: over NVLink (GpuSpec::nvlink_gbps
// > 0), directly over PCIe (peer-to-peer: the boards support it, GpuSpec::pcie_p2p, and the
// platform allows it, HostSpec::gpu_p2p), or else over PCIe through pinned host memory (NCCL's
// SHM transport, each transfer written to host memory by the sender and read back by the
// receiver).
enum class PeerLinkKind { kNvlink, kPcieP2p, kPcieHost };
PeerLinkKind peer_link_kind(const GpuSpec& gpu, const HostSpec& host);
const char* to_string(PeerLinkKind kind);

// [s] The fixed cost of one ring all-reduce over `ranks` GPUs of one node on `kind` links, however
// small the message: NCCL's own latency model of its ring algorithm (src/graph/tuning.cc,
// ncclTopoTuneModel: the base latency of the protocol plus one hardware latency per step, 2 x
// (ranks - 1) steps for an all-reduce), at the low-latency protocol NCCL picks for small messages.
// 0 for one rank. The per-step latencies are in model/perf.cpp with their sources.
double ring_allreduce_latency_s(PeerLinkKind kind, double ranks);
// [s] The same for a ring all-gather: NCCL's base latency plus (ranks - 1) steps. 0 for one rank.
double ring_allgather_latency_s(PeerLinkKind kind, double ranks);

// The link time of Megatron-LM tensor parallelism over `tp` GPUs for one transformer layer of
// `tokens` tokens: two ring all-reduces of the layer's fp16 hidden states (tokens x hidden x 2
// bytes), one after attention and one after the FFN (Shoeybi et al., 2019, section 3). Each
// all-reduce costs its latency (ring_allreduce_latency_s, by the link kind) plus the bytes each
// GPU sends (ring_allreduce_bytes) at the peer link's rate (gpu_peer_gbps): time = latency + ring
// bytes / bus rate, nccl-tests' bus bandwidth being exactly that rate (PERFORMANCE.md). Nothing
// for one GPU. The one place this is worked out: the inference workload's stages (which hand
// bytes and latency to the peer link resource) and the serving workload's iteration cost both
// use it.
struct TensorParallelComm {
  PeerLinkKind link = PeerLinkKind::kNvlink;
  double collectives = 0;  // all-reduces per layer (2, none for one GPU)
  double bytes = 0;        // [bytes] each GPU sends over its peer link per layer
  double latency_s = 0;    // [s] the all-reduces' fixed costs per layer
  // [s] the layer's link time at the peer link's rate `bytes_per_s`.
  double seconds(double bytes_per_s) const {
    return bytes > 0 ? latency_s + bytes / bytes_per_s : latency_s;
  }
};
TensorParallelComm tensor_parallel_layer_comm(const GpuSpec& gpu, const HostSpec& host,
                                              const LlmSpec& m, double tokens, double tp);
// Its bytes alone (TensorParallelComm::bytes).
double tensor_parallel_layer_bytes(const LlmSpec& m, double tokens, double tp);
// The link time of gathering the logits of a vocab-parallel head (each GPU computes its share of
// the vocabulary) for the `rows` rows the pass samples from: one ring all-gather of rows x vocab
// fp16 logits (vLLM's LogitsProcessor: the head's output is gathered before the sampler), its
// latency by the link kind plus its ring bytes at the peer link's rate. Nothing for one GPU.
TensorParallelComm tensor_parallel_logits_comm(const GpuSpec& gpu, const HostSpec& host,
                                               const LlmSpec& m, double rows, double tp);

// Achieved per-direction rate [1e9 B/s] of a PCIe switch's uplink to the CPU: the host's
// pcie_switch_uplink_gbps, else an x16 link of the host's PCIe generation at the same share of
// the theoretical rate as the GPU's measured copy rate of its own link.
double pcie_switch_uplink_gbps(const GpuSpec& gpu, const HostSpec& host);

// What one module's parameters cost on the links when `ranks` data-parallel ranks of DeepSpeed's
// ZeRO-3 fetch them at once (multi-GPU ZeRO-Inference), as one rank sees it. Each rank first copies
// its 1/ranks partition of the offloaded part from the host (host_bytes in all, over all ranks),
// then the ranks all-gather the partitioned parameters (gathered_bytes in all) in a ring. Over
// PCIe both arrive on the GPU's own link, host-to-device direction; with NVLink the gather has its
// own link. Behind a PCIe switch (HostSpec::gpus_per_pcie_switch) the switch's uplink carries the
// host copies into all of its GPUs, and, when the ranks span several switches, the ring's one
// edge into this switch (peer traffic inside a switch does not reach the uplink).
struct Zero3GatherTraffic {
  double partition_bytes = 0;  // this rank's host copy over its own link [bytes]
  double gather_bytes = 0;     // received by this rank in the all-gather [bytes]
  bool gather_on_peer_link = false;  // NVLink: the gather uses the peer link, not the PCIe link
  int gpus_behind_switch = 0;  // ranks sharing this rank's switch uplink; 0 = no shared uplink
  double uplink_bytes = 0;     // carried into this rank's switch by its uplink [bytes]
};
Zero3GatherTraffic zero3_gather_traffic(const GpuSpec& gpu, const HostSpec& host, int ranks,
                                        double host_bytes, double gathered_bytes);
// Modules whose parameters DeepSpeed gathers ahead of the one computing, at the granularity of
// whole modules (layers) the simulator fetches: none with a zero prefetch bucket; else the modules
// that fit in min(prefetch bucket, max live parameters - the module computing) elements, and at
// least one, because the coordinator always takes the next parameter once it may prefetch at all
// (partitioned_param_coordinator.py fetch_sub_module: `while ... numel_prefetching <
// max_params_to_prefetch`), and at sub-module granularity the next one is always in reach.
int zero3_prefetch_modules(const Zero3Settings& z, double module_elements);

// The NVMe RAID-0 volume under a DeepNVMe-style reader: `threads` x `queue_depth` requests of
// `block_size_bytes`, each striped over every drive in chunk-size pieces.
struct NvmeArrayTiming {
  double read_gbps = 0;  // sustained array bandwidth at the policy's operating point
  double write_gbps = 0;
  // Time to the first completed piece of a request: one drive's share of a block, at most one
  // md RAID-0 chunk (nvme_array_timing), at queue depth 1.
  double read_latency_s = 0;
  double write_latency_s = 0;
  // Seconds to read / write `bytes` as one transfer: the first piece's latency, then the
  // sustained rate. The simulator's and the planner's form of a tensor read.
  double read_s(double bytes) const {
    return read_latency_s + bytes / units::gbps_to_bytes_per_s(read_gbps);
  }
  double write_s(double bytes) const {
    return write_latency_s + bytes / units::gbps_to_bytes_per_s(write_gbps);
  }
  // The drives' read/write interference (model/ssd_model.hpp SsdModel::mix_interference).
  double mix_interference = 0;
  // Reads of `read_bytes` and writes of `write_bytes` issued together by two streams that each
  // keep the reader's depth in flight (the serving KV tier's prefix loads and its write-through
  // stores). Same block size and depth: the drives complete them request by request in equal
  // numbers while both run, as one mixed stream (mixed_seconds_per_byte) of the reads and as many
  // write bytes; the writes left over then run alone. With no writes this is read_s, with no reads
  // write_s; with both, the drives' busy time at x = 0 is that of each direction alone (less the
  // writes' first-request latency, which the reads cover), and the reads finish later by the
  // writes they shared the drives with.
  struct Mixed {
    double read_done_s = 0;   // from the start until the last read completes
    double read_busy_s = 0;   // of the drives' busy time, the reads' share
    double write_busy_s = 0;  // and the writes'
    double busy_s() const { return read_busy_s + write_busy_s; }
  };
  Mixed mixed_s(double read_bytes, double write_bytes) const;
};
// `readers` processes, each with a reader of its own at that operating point, each reading a
// transfer of `transfer_bytes` at the same time: the array serves all their requests at once
// (ZeRO-3's data-parallel ranks, each with its own DeepSpeed swapper and aio handle; the
// weight-stream model's WeightStreamPoint::nvme). One reader: the plain array.
NvmeArrayTiming nvme_array_timing(const NvmeArray& nvme, const HostSpec& host, const AioConfig& aio,
                                  double transfer_bytes, int readers = 1);
// Seconds to read `bytes` when the reader's queue drains at the end: each request completes at
// the array rate for the requests still outstanding (nvme_array_timing of the bytes left), so the
// last few run at falling depth (Little's law on the device model). The replay uses this form:
// for modules of a few dozen requests the steady rate was 5-20% optimistic against measured
// reads. The simulator and the planner keep NvmeArrayTiming::read_s (steady rate after the first
// request); their shipped outputs were made with it, and moving them is a behaviour change.
double nvme_drained_read_s(const NvmeArray& nvme, const HostSpec& host, const AioConfig& aio,
                           double bytes);

// The cost rules of one forward pass through one module on one GPU, shared by every workload that
// runs transformer layers (inference, serving). `tp` is the tensor-parallel degree: each GPU holds
// 1/tp of every weight matrix and of the KV heads.
//
// What one transformer layer's kernels do for a group of tokens.
struct LayerPass {
  double tokens = 0;           // tokens through the GEMMs
  double attention_flops = 0;  // attention (scores and weighted sum) of the whole layer, all heads
  double kv_read_bytes = 0;    // KV cache read on this GPU
  double kv_write_bytes = 0;   // KV cache written on this GPU
  double score_bytes = 0;      // eager attention's score matrices written and read on this GPU
  // Of kv_read_bytes, the distinct lines (< 0: all distinct). Less when each query head of a KV
  // head reads it again (decode_kv_reads): the other heads' reads hit in L2 where the GPU gives
  // its rate for that (GpuSpec::l2_shared_read_gbps).
  double kv_distinct_read_bytes = -1;
  // [s] Math of the pass's prefill attention on this GPU (prefill_attention_s, summed over its
  // chunks), whose FLOPs are not in attention_flops: it runs at the rate of the stack's fused
  // kernel, which attention_flops (at the GEMM rate) does not.
  double prefill_attention_s = 0;
};
// One prefill chunk in a forward pass: `sequences` sequences, each computing `queries` new tokens
// after `offset` tokens already in its KV cache (earlier chunks of the prompt, a cached prefix).
struct PrefillChunk {
  double queries = 0;
  double offset = 0;
  double sequences = 1;
};
// Query-key pairs the chunk's causal attention computes, over all its sequences: each new token
// attends to the offset and to itself and the new tokens before it,
// queries x (offset + (queries + 1) / 2) per sequence.
double prefill_pairs(const PrefillChunk& c);
// [s] The math of the chunk's causal attention in one layer on one of `tp` GPUs (each holding
// 1/tp of the heads). Where the stack fuses attention into a kernel with a published rate on this
// GPU's generation (ExecutionStack::prefill_attention_kernel, model/attention_kernel.hpp), the
// chunk runs as that kernel runs it: the block of its new tokens against themselves with the
// causal mask at the kernel's causal rate for `queries` keys, the block against the offset
// without a mask at its unmasked rate for `offset` keys; each at that fraction of the GPU's
// dense fp16 peak (capped by fp16_achieved_tflops where measured). Elsewhere its FLOPs run at
// the GEMM rate (gemm_flops_per_s). The one place prefill attention's math is priced: the
// serving iteration and the inference workload's prefill with fused attention use it (eager
// stacks in the inference workload compute the whole score matrix instead: attention_flops). On
// a model's sliding layers, where the stack keeps only the window (ExecutionStack::window_cache),
// each query attends to at most sliding_window keys (model/llm.hpp causal_pairs); the result is
// the mean over the layers.
double prefill_attention_s(const LlmSpec& m, const GpuSpec& gpu, const ExecutionModel& em,
                           const ExecutionStack& stack, const PrefillChunk& c, double tp);
// Weight bytes one GPU reads per layer pass of `tokens` tokens from an fp16 (or dequantised fp16)
// copy of its shard (model/llm.hpp layer_read_params: an MoE's experts the tokens hit).
double layer_weight_read_bytes(const LlmSpec& m, double tokens, double tp);
// Memory traffic of one layer's elementwise kernels (the norms with their residual adds, the
// rotary embedding, the MLP's activation) for `tokens` tokens on one GPU of `tp` [bytes]. Their
// results that a GEMM reads are written at its input width (1 byte an element before FP8 GEMMs,
// kNvfp4BytesPerElem before NVFP4 ones, else 2). They are kernels of their own between the GEMMs,
// so their time adds to the GEMMs' (layer_kernel).
double layer_elementwise_bytes(const LlmSpec& m, double tokens, double tp, const GemmPath& gemm);
// Dequantising one layer's packed weights to fp16 before the GEMMs (0 at 16 bits, and 0 when the
// stack dequantises inside the GEMM): the packed weights are read, the fp16 copies written, then
// the GEMM reads them again.
double layer_dequant_s(const GpuSpec& gpu, const ExecutionModel& em, const Policy& p,
                       double module_elements, double tp);
// One layer's kernels with every operand in GPU memory (no launch overhead): the weight GEMMs on
// `gemm` (gemm_path) and the attention kernel at the fp16 rate (its prefill math at
// pass.prefill_attention_s), one after the other, each at its own roofline.
KernelTime layer_kernel(const LlmSpec& m, const GpuSpec& gpu, const ExecutionModel& em,
                        const LayerPass& pass, double tp, const GemmPath& gemm);
double layer_kernel_s(const LlmSpec& m, const GpuSpec& gpu, const ExecutionModel& em,
                      const LayerPass& pass, double tp, const GemmPath& gemm);
// The embedding lookup (a gather) for `tokens` tokens, or the output head for the last position
// of `sequences` sequences (one GEMM over the vocabulary), including their share of launch
// overhead (a quarter of a layer's). The head also carries the pass's host work (step_host_s) as
// GPU idle time.
KernelTime edge_module(const LlmSpec& m, const GpuSpec& gpu, const ExecutionModel& em, bool head,
                       double tokens, double sequences, double module_elements, double tp);
double edge_module_s(const LlmSpec& m, const GpuSpec& gpu, const ExecutionModel& em, bool head,
                     double tokens, double sequences, double module_elements, double tp);

}  // namespace tiersim

namespace tiersim {

// Timing rules of FlexGen's runtime (FMInference/FlexiGen flexgen/flex_opt.py and
// flexgen/pytorch_backend.py), per sub-layer and GPU batch. Pure functions of the shapes; the
// simulator (sim/workloads/inference/flexgen.cpp) places them on the shared resources.

// The packed codes alone: 4 bits per element (compression.py num_bits=4), two per uint8.
inline constexpr double kFlexGenPackedBytesPerElem = 0.5;

// Bytes of GPU memory traffic per element of FlexGen's 4-bit decompression
// (flexgen/compression.py, TorchCompressedDevice.decompress), one pass per elementwise op:
// packed >> 4 and packed & 0xF each read the whole packed uint8 tensor (two 4-bit codes per byte:
// 0.5 B per output element) and write a uint8 temporary of the same size (0.5); each temporary is
// then copied into every other position of the grouped dimension of the fp16 output (read 0.5,
// plus `strided_copy` per output element for the output's sectors); then div_(scale) and
// add_(min) read and write the fp16 output (2 + 2 each).
// Weights are grouped along dim 0 (group_dim=0): the stride-2 copies write whole contiguous rows,
// 1 B per output element each. The cache is grouped along head_dim, its innermost dimension
// (group_dim=2): each copy writes every other fp16 element, so it half-fills every 32-byte sector
// of the output, and the memory system reads each sector in to merge the write: 2 B read and 2 B
// written per output element, per copy.
// Checked with Nsight Compute (DRAM bytes per kernel) on an H100 80GB HBM3 running
// tools/gpu/flexgen_codec_probe.py, 2026-11-26: the weight case (OPT-175B w_q, 151M elements)
// moved 12.5 B per element (model: 13); the cache case (OPT-175B, batch 48, 543 positions, 320M
// elements) 18.8 (model: 19), each stride-2 copy reading 794 MB and writing 633 MB for 160 MB of
// packed input and 640 MB of output. The times on that board were 2.3-2.6x these bytes at its
// streaming rate: the broadcast and strided passes run through PyTorch's non-vectorised
// elementwise kernel at 1.0-1.3 TB/s (tools/gpu/h100-2026-11-26.md). How far a T4 (320 GB/s,
// far fewer bytes in flight per SM needed) falls below its own streaming rate is not measured;
// the passes are priced at the board's streaming rate, so compressed FlexGen runs on Hopper-class
// GPUs are predicted optimistically.
constexpr double flexgen_decompress_bytes_per_elem(double strided_copy) {
  return (kFlexGenPackedBytesPerElem + kFlexGenPackedBytesPerElem) * 2 +
         (kFlexGenPackedBytesPerElem + strided_copy) * 2 + (2.0 + 2.0) * 2;
}
inline constexpr double kFlexGenWeightDecompressBytesPerElem =
    flexgen_decompress_bytes_per_elem(1.0);
inline constexpr double kFlexGenCacheDecompressBytesPerElem =
    flexgen_decompress_bytes_per_elem(2.0 + 2.0);
// Bytes of GPU memory traffic per element of FlexGen's compression of a fresh fp16 K or V tensor
// (TorchCompressedDevice.compress, group_dim=2), one pass per op: min and max over each group
// (read 2 each), data - mn (read 2, write 2), mul_(scale), clamp_, round_ (read and write 2
// each), .to(uint8) (read 2, write 1), data[..., 0::2] << 4 (reads every sector of the uint8
// tensor, 1, writes 0.5), bitwise_or with data[..., 1::2] (reads 0.5 + 1, writes 0.5). 26.5 in
// all; Nsight Compute measured 27.7 on the H100 run above (OPT-175B prefill K: 302M elements).
inline constexpr double kFlexGenCompressBytesPerElem =
    2.0 + 2.0 + 4.0 * 4 + (2.0 + 1.0) + (1.0 + 0.5) + (0.5 + 1.0 + 0.5);
// Kernels one call launches (the same Nsight Compute run): decompress 6 (two shifts, two stride-2
// copies, div_, add_); compress 13 (min, max, the scale's sub, reciprocal and mul, sub, mul_,
// clamp_, round_, to, shift, or, cat).
inline constexpr int kFlexGenDecompressKernels = 6;
inline constexpr int kFlexGenCompressKernels = 13;

// Seconds of GPU time for `calls` codec calls over `elements` elements in all, at
// `bytes_per_elem` (one of the constants above), each launching `kernels_per_call` kernels. The
// passes are memory-bound; eager PyTorch issues each kernel from Python, so a call over a small
// tensor (decode's one new K/V row) costs its launches instead (eager_kernel_s), whichever is
// longer.
KernelTime flexgen_codec(const GpuSpec& gpu, const ExecutionModel& em, double elements,
                         double bytes_per_elem, double calls, int kernels_per_call);
double flexgen_codec_s(const GpuSpec& gpu, const ExecutionModel& em, double elements,
                       double bytes_per_elem, double calls, int kernels_per_call);

// CPU DRAM traffic of decode attention over one element of cached K or V with
// --cpu-cache-compute (flexgen/pytorch_backend.py): load_cache copies the fp16 prefix into the
// fp32 workspace (flex_opt.py SelfAttention.load_cache, path 1: read 2 B, write 4 B); mha_gen's
// k.permute(1, 2, 0).reshape(b * n_head, head_dim, s) asks for the shape the permute already has,
// so it is a view, not a copy (likewise v), and .float() of fp32 is a no-op; torch.bmm takes the
// strided views as they are (each matrix is row- or column-major with a leading dimension of
// b * n_head * head_dim, which batched BLAS accepts: aten/src/ATen/native/LinearAlgebra.cpp
// bmm_out_or_baddbmm_), so attention reads each fp32 element once (4 B). Cross-check: FlexGen's
// cost model fitted on the same GCP T4 host (experimental/cost_model.py, cpu_flops 0.0123 TFLOPS
// over 4 FLOPs per cached element pair) is about 10 B per element at this host's DRAM rate, as
// the 6 + 4 here.
inline constexpr double kFlexGenCpuConvertBytesPerElem = 2.0 + 4.0;
inline constexpr double kFlexGenCpuAttendBytesPerElem = 4.0;
// GPU traffic of decode attention per cached K or V element on the GPU. The permute/reshape is a
// view here too and the bmm reads each fp16 element once (2 B), but a batched GEMV over operands
// strided by batch x heads does not stream at full bandwidth: FlexGen's cost model fitted on the
// T4 (experimental/cost_model.py, bmm_flops_g 0.079 TFLOPS at 2 FLOPs per element) is about 6.5 B
// of bandwidth per element at 256 GB/s. Charged as 6 B: derived from FlexGen's fit, so listed in
// scenarios/validation/derivations.yaml.
inline constexpr double kFlexGenGpuAttendBytesPerElem = 2.0 + 2.0 + 2.0;

// Seconds of the host CPUs for `flops` fp32 FLOPs and `bytes` of DRAM traffic (the roofline of
// model/perf.hpp cpu_attention_s, no fresh pages: FlexGen's workspace is allocated once).
double flexgen_cpu_s(const HostSpec& host, const ExecutionModel& em, double flops, double bytes);

}  // namespace tiersim
