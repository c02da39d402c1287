#pragma once
// Hardware specifications. Plain data: every field documents its unit in its suffix. The catalog
// (scenarios/catalog/*.yaml) fills these; a scenario may override any field inline.
#include <map>
#include <string>
#include <vector>

#include "model/source_map.hpp"
#include "model/ssd_model.hpp"

namespace tiersim {

struct GpuSpec {
  std::string name;
  // Device memory as the driver reports it: nvidia-smi's total in MiB (2^20 bytes), e.g. 143,771
  // for an H200 sold as "141 GB". The marketing figure is only a label (memory_label).
  double memory_mib = 0;
  std::string memory_label;
  // Part of that total the driver keeps for itself (nvidia-smi -q, FB Memory Usage: Reserved);
  // CUDA allocations never reach it (model/capacity.hpp gpu_runtime_items).
  double memory_reserved_mib = 0;
  // GPU generation (volta, turing, ampere, ada, hopper, blackwell, cdna3): its resident threads
  // per SM size the CUDA context's local memory and its library workspaces (gpu_arch_info).
  std::string arch;
  int sm_count = 0;  // streaming multiprocessors (compute units on AMD)
  // GPU memory a PyTorch process holds outside its tensors once its first GEMMs have run
  // (nvidia-smi's per-process used memory less torch.cuda.memory_reserved(): the CUDA context and
  // the library kernels loaded lazily), measured on this board [MiB]. < 0 = not measured: the
  // context is modelled from the architecture (model/capacity.hpp cuda_context_bytes).
  double cuda_context_mib = -1;
  // Catalog name of the measured sibling whose achieved rates (fp16_achieved_tflops,
  // fp16_decode_achieved_tflops, l2_shared_read_gbps, fp8_achieved_tflops, fp4_achieved_tflops
  // and the GEMMs' exposed weight-load rates) this entry inherits because none were measured on
  // it; "" = its own (config/catalog.cpp resolves it; `tiersim catalog` prints it).
  std::string rates_from;
  double hbm_gbps = 0;     // device memory bandwidth
  double fp16_tflops = 0;  // dense FP16/BF16 tensor throughput (no sparsity)
  // Achieved dense FP16 GEMM rate of long runs where published evidence gives one (a board held
  // at its power limit runs below the datasheet's boost clock); < 0 = not given, and GEMMs run
  // at fp16_tflops x the execution model's gemm_efficiency.
  double fp16_achieved_tflops = -1;
  // Achieved FP16 GEMM rate when the token dimension is one decode batch (small M: the GEMM is
  // too thin to fill the tensor cores at the long-run rate above); < 0 = not given, and decode
  // GEMMs run at the rate above. Read only by FlexGen's runtime (sim/workloads/inference/flexgen).
  double fp16_decode_achieved_tflops = -1;
  // Achieved L2 read rate [1e9 B/s] when thread blocks on many SMs read the same lines (a decode
  // attention kernel whose query heads each re-read their KV head); < 0 = not given, and such
  // re-reads are charged at the device-memory rate.
  double l2_shared_read_gbps = -1;
  // Achieved dense FP8 GEMM rate of large products, measured on the board; < 0 = not given, and
  // FP8 GEMMs run at fp8_tflops x the stack's fp8_gemm_efficiency (capped by this where given).
  double fp8_achieved_tflops = -1;
  // Achieved dense FP4 (NVFP4) GEMM rate of large products, measured on the board; < 0 = not
  // given, and FP4 GEMMs run at fp4_tflops x the stack's fp4_gemm_efficiency (capped by this
  // where given).
  double fp4_achieved_tflops = -1;
  // Share of a math rate measured in short runs, at the boost clock, that the board keeps when
  // held at full math rate under its power limit (tdp_w): the achieved GEMM rates above and the
  // published rates of fused attention kernels are taken at this share (model/perf.cpp), since
  // the time model's rates are the board's at its limit (model/power.hpp gpu_power_limited). For
  // fp16/bf16 math and for FP8 GEMMs; < 0 = not measured, and the rates hold as given. Never
  // inherited (rates_from): a share belongs to the board and its power limit.
  double fp16_power_limited_share = -1;
  double fp8_power_limited_share = -1;
  // A GEMM's weight loads that its pipeline does not hide under the math, as a rate [1e9 B/s of
  // weight bytes]: a layer's GEMMs take their math at the achieved rate plus their weight bytes
  // at this rate, never less than the weight stream at the device-memory rate (model/perf.cpp
  // layer_kernel). Fitted on the board's own GEMM sweep over the shapes of transformer layers
  // (tools/gpu/gemm_shape_sweep.py); < 0 = not measured: the math hides the weight loads
  // (the longer of the two). For fp16/bf16 GEMMs and for FP8 GEMMs.
  double gemm_exposed_weight_gbps = -1;
  double fp8_gemm_exposed_weight_gbps = -1;
  double int8_tops = 0;      // dense INT8 (or FP8 where INT8 is not offered)
  double fp8_tflops = 0;     // dense FP8 tensor throughput; 0 = no FP8 tensor cores
  double fp4_tflops = 0;     // dense FP4 tensor throughput; 0 = no FP4 tensor cores (pre-Blackwell)
  double fp32_tflops = 0;    // non-tensor FP32, used for elementwise work
  int pcie_gen = 4;          // PCIe generation of the host link
  int pcie_lanes = 16;       // lanes of the host link
  double pcie_h2d_gbps = 0;  // achieved pinned host-to-device copy rate; 0 = derive from link
  double pcie_d2h_gbps = 0;  // achieved pinned device-to-host copy rate; 0 = derive from link
  // Fixed cost of one pinned host<->GPU copy [us] (cudaMemcpyAsync launch and DMA set-up, paid
  // per copy on top of bytes / the rates above); what many small copies cost beyond one large
  // copy of the same bytes. Fitted on the project's own pinned copy measurements
  // (tools/gpu/copy_bandwidth.cu; the catalog source says which rows). < 0 = not measured: a
  // copy costs its bytes at the rate only. Used where the modelled system makes one copy per KV
  // block (sim/workloads/serving/iteration_cost.cpp).
  double pcie_copy_overhead_us = -1;
  double nvlink_gbps = 0;    // GPU-to-GPU bandwidth per direction; 0 = no NVLink (use PCIe)
  // Two of these boards can reach each other's memory directly over PCIe (CUDA peer access)
  // when they have no NVLink. false for GeForce boards whose driver refuses peer access between
  // them: NCCL then routes each transfer through pinned host memory (its SHM transport) and
  // vLLM's custom all-reduce is off (model/perf.hpp PeerLinkKind). The catalog gives the source.
  bool pcie_p2p = true;
  double tdp_w = 0;          // board power limit
  double idle_w = 0;         // idle power with a CUDA context open
  // Fraction of the dynamic power range (tdp_w - idle_w) a kernel streaming device memory at the
  // achieved bandwidth draws (model/power.hpp gpu_power_limited; a kernel at full math rate
  // draws all of it, the board's power limit). Derived from one published row, the energy
  // group's calibration row (scenarios/reference/mlenergy-h100-llama3.1-8b-b8.yaml): the ML.ENERGY
  // Benchmark v3 measured 486 W (NVML) on an H100 SXM running Llama-3.1-8B under vLLM 0.11.1 at
  // 8 concurrent requests, decode kernels almost wholly memory-bound; with this fraction 0
  // tiersim predicts 133 W for that run and with 1, 677 W, so 0.65. The same for every board
  // until a measurement of another says otherwise (catalog key memory_power_fraction).
  double memory_power_fraction = 0.65;
  // Power limit the board is set to (nvidia-smi -pl, a MaxQ setting) [W], <= tdp_w; 0 = tdp_w.
  // The achieved rates above are those of the board at tdp_w; a kernel group whose power by
  // activity exceeds the limit runs at a lower SM clock (model/power.hpp gpu_power_limited).
  double power_limit_w = 0;
  // Exponent of the SM clock in the math units' dynamic power, P ~ f^exponent (CMOS switching
  // power C V^2 f, the supply voltage rising about in proportion to the clock over the DVFS range,
  // so f^3: the cube law of DVFS, Kaxiras and Martonosi, "Computer Architecture Techniques for
  // Power-Efficiency", 2008, ch. 2; near the voltage floor power falls only as f, exponent 1).
  // What a power limit costs a compute-bound kernel group: the lower the exponent, the deeper the
  // clock must drop (catalog key clock_power_exponent).
  double clock_power_exponent = 3;
  bool gds = true;           // supports GPUDirect Storage reads into device memory
  SourceMap sources;
};

// nvidia-smi's total in bytes.
double gpu_memory_bytes(const GpuSpec& g);
// What CUDA allocations can reach: the total less the driver's reserve (what cudaMemGetInfo and
// torch.cuda.get_device_properties report as total).
double gpu_allocatable_bytes(const GpuSpec& g);

// Facts of a GPU generation the memory model needs.
struct GpuArchInfo {
  const char* name;
  // Most resident threads per SM (CUDA C++ Programming Guide, "Features and Technical
  // Specifications", table of technical specifications per compute capability).
  int max_threads_per_sm;
  // cuBLAS workspace PyTorch allocates per handle and stream (aten/src/ATen/cuda/
  // CublasHandlePool.cpp getChosenWorkspaceSize: 4096 KiB x 2 + 16 KiB x 8 by default, 32 MiB
  // on Hopper (sm90)).
  double cublas_workspace_bytes;
};
// The generation called `arch`; throws ModelError naming the valid ones.
const GpuArchInfo& gpu_arch_info(const std::string& arch);
const std::vector<std::string>& gpu_arch_names();

struct HostSpec {
  std::string name;
  int sockets = 2;
  int cores_per_socket = 32;
  double dram_gb = 512;        // installed DRAM
  double dram_gbps = 300;      // aggregate DRAM bandwidth over all sockets (theoretical)
  // The platform's least DRAM (model/capacity.hpp dram_population): a server is populated with
  // the same DIMM in every memory channel of every socket (one DIMM per channel for full
  // bandwidth, as vendors' population rules ask), so it never holds less than
  // sockets x memory_channels x dimms_per_channel x min_dimm_gib.
  int memory_channels = 0;     // per socket; 0 = not known (no floor: whole 32 GB DIMMs)
  int dimms_per_channel = 1;   // DIMMs in each channel of the least population the platform ships
  double min_dimm_gib = 0;     // smallest DIMM the platform's vendor sells for it [GiB]; 0 = not known
  // The vendor also sells DDR5's non-binary RDIMMs (24 Gbit dies: 48 and 96 GiB), so sized DRAM
  // may step 32 -> 48 -> 64 -> 96 -> 128 GiB per DIMM instead of doubling. 0 = binary sizes only.
  int nonbinary_dimms = 0;
  double cpu_fp16_gflops = 0;  // achieved per-socket rate of CPU fp16 batched matmul (framework)
  double cpu_fp32_gflops = 0;  // achieved per-socket rate of CPU fp32 matmul
  double cpu_tdp_w = 0;        // per socket
  double cpu_idle_w = 0;       // per socket
  double dram_w_per_gb_active = 0;  // DRAM power per GB when the memory bus is busy
  double dram_w_per_gb_idle = 0;    // DRAM power per GB when idle
  // Constant power of everything on the DC side the fields here do not model by activity: board,
  // BMC, NICs, switches, boot drives; for a host without fan and PSU fields also its fans and
  // its PSUs' conversion loss (the generic class estimates fold them in).
  double platform_w = 0;
  // Fans by heat (model/power.hpp node_overhead): the fan controller moves air in proportion to
  // the heat to remove (constant temperature rise), and fan power goes with the cube of airflow
  // (fan affinity laws), so fans draw fan_max_w x s^3 at speed
  // s = clamp(heat / cooling_design_w, fan_min_speed, 1). fan_max_w 0 = fans not modelled apart
  // (they are in platform_w).
  double fan_max_w = 0;         // all fans at full speed
  double fan_min_speed = 0;     // speed floor the fan table keeps at light load, 0..1
  double cooling_design_w = 0;  // heat [W] at which the fans reach full speed
  // Power supplies (model/power.hpp psu_efficiency): AC input = DC load / efficiency at the load
  // fraction of the PSUs that share it. psu_count 0 = not modelled (AC = DC; the generic class
  // estimates fold the loss into platform_w).
  int psu_count = 0;             // installed PSUs
  int psu_standby = 0;           // of which held in standby, carrying no load (a hot spare)
  double psu_rating_w = 0;       // DC output rating of one PSU
  std::string psu_efficiency;    // 80 PLUS level of the PSUs: bronze ... titanium
  int pcie_gen = 5;                 // host's PCIe generation (caps GPU and drive links)
  double nvme_io_gbps = 0;     // cap of the kernel storage path on aggregate NVMe I/O; 0 = none
  // The host runs the workload as a virtual machine guest (a cloud instance) rather than on bare
  // metal. Host kernel work that a hypervisor slows, the first touch of fresh pages, then runs at
  // the rate measured in a KVM guest (ExecutionModel::fresh_page_fault_gbps), else at the
  // bare-metal figure (ExecutionModel::bare_metal_page_fault_gbps); model/perf.hpp fresh_pages_s.
  bool virtual_machine = false;
  // Per-thread first touch of fresh pages [1e9 B/s] measured on this host; 0 = the figure of its
  // virtual_machine label.
  double page_fault_gbps = 0;
  // A device-to-host copy into pageable memory on one host thread [1e9 B/s]: the CUDA driver's
  // DMA into its pinned staging buffers and the thread's copy out of them, measured into warm
  // (already faulted-in) pages; it also bounds that thread's memcpy from below. 0 = not measured
  // on this host (each workload's default: model/perf.hpp pageable_copy_gbps).
  double pageable_copy_gbps = 0;
  // A host-to-device copy from pageable memory on one host thread [1e9 B/s] of tensors as large
  // as a model's weights (hundreds of MiB, one copy each): the thread's memcpy into the driver's
  // pinned staging buffers, which the DMA then drains. The project's measurements give about half
  // the rate of a benchmark's repeated 16-64 MiB copies (tools/gpu/*-copy-bandwidth.csv: 7.6-8.4
  // against 15.2-15.4 GB/s on the H200 host, 6.6-7.1 against 12 on the H100 host), and one
  // OPT-30B layer copied tensor by tensor ran at 6.84 GB/s (tools/gpu/h100-2026-11-27.md); one
  // flat 1.2 GB copy there ran at 18.6, so the cause of the drop (cache residency of the small
  // benchmark buffers, page size) is not settled. 0 = not measured on this host: its
  // pageable_copy_gbps, else the inference workloads' default (model/perf.hpp pageable_h2d_gbps).
  double pageable_h2d_gbps = 0;
  // PCIe topology of the GPU slots: GPUs that sit behind one PCIe switch share its uplink to the
  // CPU (host copies into all of them, and their peer traffic with GPUs behind other switches);
  // peer traffic between GPUs behind the same switch stays in the switch (PCIe peer-to-peer).
  // 0 = every GPU on a root port of its own (direct attach): each has only its own link.
  int gpus_per_pcie_switch = 0;
  // Achieved per-direction rate of one switch's uplink [1e9 B/s]; 0 = an x16 link of the host's
  // PCIe generation at the GPU links' copy efficiency (pcie_switch_uplink_gbps()).
  double pcie_switch_uplink_gbps = 0;
  // The platform lets GPUs without NVLink reach each other directly over PCIe. false where it
  // blocks peer access (a VM without it, IOMMU or ACS redirecting peer traffic through the root
  // complex): collectives then go through host memory even between boards that support it
  // (GpuSpec::pcie_p2p; model/perf.hpp peer_link_kind).
  bool gpu_p2p = true;
  SourceMap sources;
  // Not a catalog field: hardware.host.size_dram. When true and dram_gb is the catalog's (not
  // overridden), energy and cost count the DRAM the configuration needs (model/capacity.hpp,
  // dram_population), the catalog's dram_gb being the most the platform holds.
  bool size_dram = true;
};

struct NvmeSpec {
  std::string name;
  int pcie_gen = 4;
  int pcie_lanes = 4;
  double capacity_tb = 7.68;    // 1e12 bytes
  double read_gbps = 0;         // sequential read, 128 KiB+ blocks, high queue depth
  double write_gbps = 0;        // sequential write
  double rand_read_kiops = 0;   // 4 KiB random read, thousands of IOPS
  double rand_write_kiops = 0;  // 4 KiB random write, thousands of IOPS
  double read_latency_us = 0;   // 4 KiB read latency at queue depth 1
  double write_latency_us = 0;  // 4 KiB write latency at queue depth 1
  double active_w = 0;        // [W] the drive's maximum active power (its "up to" figure)
  // [W] active power streaming at the rated sequential rate in each direction, where the
  // datasheet gives it; 0 = active_w (model/power.hpp drive_active_w). At most active_w.
  double active_read_w = 0;
  double active_write_w = 0;
  double idle_w = 0;          // [W]
  // Endurance rating: full-capacity writes a day the vendor warrants over the warranty period
  // (five years for every drive in the catalog); 0 = not rated. The serving KV tier's write rate
  // (nvme_drive_writes_per_day) is compared with it.
  double dwpd = 0;
  SourceMap sources;
  // When set (a calibrated profile), replaces the datasheet-derived device model.
  bool has_profile = false;
  SsdModel profile;
};

// Theoretical per-direction bandwidth of a PCIe link, 1e9 bytes per second.
double pcie_link_gbps(int generation, int lanes);

}  // namespace tiersim
