#pragma once
// Memory per tier (GPU, host DRAM, NVMe) against capacity. Pure arithmetic: what must be resident
// where for a scenario to run at all.
#include <string>
#include <vector>

#include "model/layout.hpp"
#include "model/perf.hpp"
#include "model/scenario.hpp"

namespace tiersim {

struct MemoryItem {
  std::string what;  // e.g. "weights (resident)", "kv cache", "prefetch buffers"
  double bytes = 0;
};

struct TierMemory {
  std::string tier;  // gpu (per GPU), cpu (host DRAM), nvme (the array)
  double required_bytes = 0;
  double capacity_bytes = 0;
  std::vector<MemoryItem> items;
  bool fits() const { return required_bytes <= capacity_bytes; }
  void add(std::string what, double bytes) {
    if (bytes <= 0) return;
    items.push_back({std::move(what), bytes});
    required_bytes += bytes;
  }
};

struct CapacityReport {
  std::vector<TierMemory> tiers;
  bool fits = true;
  std::string shortfall;  // "gpu: needs 52.1 GB, has 48.0 GB (short 4.1 GB): kv cache 30.2 GB, ..."
};

// One GPU's memory as a process sees it, the one rule every workload's capacity check starts
// from: the capacity is nvidia-smi's total (GpuSpec::memory_mib), and before any tensor of the
// workload three things are taken from it: the driver's reserve (memory_reserved_mib), the CUDA
// context of the process (cuda_context_bytes) and the cuBLAS workspace of its stream
// (gpu_arch_info). Stack-specific shares (vLLM's gpu_memory_utilization, TensorRT-LLM's KV pool
// fraction) are applied by the checks that model those stacks.
TierMemory gpu_tier(const GpuSpec& g, const ExecutionModel& em);
// The CUDA context: the board's measurement where the catalog has one (GpuSpec::cuda_context_mib,
// which also holds the library kernels loaded at the first GEMMs), else the driver's base plus
// the stack reserved for every resident thread.
double cuda_context_bytes(const GpuSpec& g, const ExecutionModel& em);
// A process that talks to other GPUs holds NCCL's communicator buffers outside PyTorch's
// allocator: added to `gpu` when `gpus` > 1 (training ranks, tensor/pipeline shards). vLLM's own
// profile already counts them (serving_capacity, vllm_non_torch_tp_bytes).
void add_communicator_buffers(TierMemory& gpu, const ExecutionModel& em, double gpus);

// Bytes of weights of the whole model at the policy's precision (quantised linear layers,
// fp16 embeddings and norms).
double model_weight_bytes(const LlmSpec& m, const Policy& p);
// The same for modules already built (weight_modules(m, p)): a simulation builds them once.
double model_weight_bytes(const std::vector<WeightModule>& modules);

// What the weights need: their bytes at the policy's precision, and the largest streamed module
// and NVMe tensor (buffer sizes) and the largest module (dequantisation workspace).
struct WeightFootprint {
  double total_bytes = 0;
  double max_streamed_module_bytes = 0;  // share of a module on cpu or nvme
  double max_streamed_tensor_bytes = 0;  // share of a tensor on nvme
  double max_module_elements = 0;
};
WeightFootprint weight_footprint(const LlmSpec& m, const Policy& p);
WeightFootprint weight_footprint(const std::vector<WeightModule>& modules, const Policy& p);

// The inference scenario's memory per tier; the second form with the model's modules built
// already (weight_modules(s.model, s.policy)).
CapacityReport inference_capacity(const Scenario& s, const ExecutionModel& em);
CapacityReport inference_capacity(const Scenario& s, const ExecutionModel& em,
                                  const std::vector<WeightModule>& modules);

// FlexGen's runtime (schedule flexgen): the GPU working set as FlexGen allocates it, the host's
// weights, cache, workspace and relay buffers, and the disk's share.
CapacityReport flexgen_capacity(const Scenario& s, const ExecutionModel& em);

// The serving scenario's memory per GPU of one replica, as vLLM's start-up profile charges it:
// weights, the torch peak of a profile run of `token_budget` tokens and up to `max_sequences`
// sampled rows, and the non-torch memory the profile adds; the rest of the GPU's usable share is
// the paged KV cache. It does not fit when that pool cannot hold `min_kv_tokens`
// (the longest request; on a sliding-window model whose stack keeps only the window, the
// window's worth of them on the sliding layers: model/stack.hpp stack_cached_context).
// The serving workload's KV cache tiers per server [bytes] (workload.kv_host_cache,
// kv_nvme_cache), with `auto` resolved: the host's DRAM (hardware.host.dram_gb) less what the run
// keeps there (weights on cpu, pinned AIO buffers, vLLM's swap space with preemption: swap, the
// OS and framework reserve, ExecutionModel::host_reserved_bytes), and the array's capacity
// (hardware.nvme.count x the drive's capacity_tb) less the weights stored on it; whole MiB, 0
// where nothing is left. 0 = no tier.
struct ServingKvTiers {
  double host_bytes = 0;
  double nvme_bytes = 0;
};
// The host and NVMe tiers as the run fills them before its KV tiers (what a given tier must fit
// next to), and the tiers' sizes; the scenario's load-time checks and serving_capacity share it.
struct ServingKvRoom {
  TierMemory host, nvme;
  ServingKvTiers tiers;
};
ServingKvRoom serving_kv_room(const Scenario& s, const ExecutionModel& em);

struct ServingMemory {
  CapacityReport report;
  ServingKvTiers kv_tiers;
  double kv_pool_bytes = 0;       // per GPU
  double kv_bytes_per_token = 0;  // per GPU, all layers
};
ServingMemory serving_capacity(const Scenario& s, const ExecutionModel& em, double token_budget,
                               int max_sequences, double min_kv_tokens);

// Builds the shortfall text and the fits flag from filled tiers.
void finish_capacity(CapacityReport& report);

// "52.1 GB"
std::string format_gb(double bytes);

// DRAM a configuration is priced and powered for when the scenario does not choose it (issue 17):
// a catalog host's dram_gb is a fully populated example (e.g. generic-2s-ddr5: 16 x 64 GB), which
// would charge a configuration needing 26 GB for 1 TB. The rule: the host-memory need plus 25%
// headroom (allocator slack and page cache beyond what the capacity model counts; an estimate,
// not a measured figure), installed as a balanced population, at most `host.dram_gb` (what the
// platform holds). A balanced population (issue 33) puts the same DIMM in every memory channel of
// every socket, dimms_per_channel to a channel: server vendors' population rules ask for it (Dell
// PowerEdge installation and service manuals: "populate eight equal memory modules per processor
// (one DIMM per channel)"; mixing DIMM capacities is not supported on Dell's 16th generation), so
// the least DRAM a platform holds is sockets x memory_channels x dimms_per_channel x min_dimm_gib,
// and more comes as the next DIMM size. DIMM sizes go up by doubling from min_dimm_gib (8, 16,
// 32, 64, 128 GiB for DDR4 RDIMMs; 16, 32, 64, 128, 256 GiB for DDR5): every vendor's supported
// memory matrix lists those. DDR5's non-binary RDIMMs (24 Gbit dies) are not offered on every
// platform (Dell's XE9680 and R6615 matrices list none): a host whose catalog entry says its
// vendor sells them (host.nonbinary_dimms) also steps through kNonbinaryDimmGib. A host whose
// memory_channels or min_dimm_gib is not known falls back to whole 32 GB DIMMs, at least one
// (a common RDIMM size; no floor).
inline constexpr double kDramHeadroom = 1.25;
// DDR5 non-binary RDIMM sizes [GiB]: 48 GB (one rank of sixteen 24 Gbit dies) and 96 GB (two
// ranks), sold for Sapphire/Emerald Rapids and EPYC 9004 servers (router-switch.com, "DDR5
// Non-Binary Memory Upgrade: Sizing 48GB & 96GB RDIMMs in Enterprise Servers"). 24 GB parts exist
// as dies but no server memory list read for this project offered a 24 GB RDIMM: left out.
inline constexpr double kNonbinaryDimmGib[] = {48, 96};
inline constexpr double kDramDimmGb = 32;
struct DramPopulation {
  double dram_gb = 0;     // installed DRAM [1e9 bytes]
  int dimms = 0;          // DIMMs installed; with dimm_gib 0: whole kDramDimmGb DIMMs
  double dimm_gib = 0;    // size of each DIMM [GiB]; 0 = the platform's DIMMs are not known
  bool floor = false;     // the platform's least population set the size (the need was less)
  bool capped = false;    // the platform's most (host.dram_gb) set the size
};
DramPopulation dram_population(double need_bytes, const HostSpec& host);
// The DIMMs a population of `dimm_gib` DIMMs fills, as dram_population counts them: "2 sockets x
// 8 channels x 2 DIMMs per channel of 64 GiB".
std::string dimm_layout_text(const HostSpec& host, double dimm_gib);
// dram_population(need_bytes, host).dram_gb.
double sized_dram_gb(double need_bytes, const HostSpec& host);

}  // namespace tiersim
