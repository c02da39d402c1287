#pragma once
// What a workload declares to the code outside its folder: capability flags (as fio's engines
// carry FIO_* flags in ioengines.h) and a few small entries, so that the loader, the models, the
// economics, the studies and the reports treat workloads differently by what they do, never by
// their kind. Each workload defines its traits as `<name>_traits` in
// sim/workloads/<name>/traits.cpp; workload_traits() finds them through the one list,
// sim/workloads/registry.def. The traits build with model/ (they read only the Scenario), so that
// every library can ask them.
#include <string_view>

#include "model/scenario.hpp"

namespace tiersim {

enum WorkloadCapability : unsigned {
  // sim::simulate() adds energy and cost metrics (sim/economics.hpp) observed from the resources'
  // busy time. Workloads that report their own cost structure (training: per-iteration) leave it
  // off.
  kCapEnergyAndCost = 1u << 0,
  // The workload generates tokens (throughput_tokens_per_s, generated_tokens): per-token energy
  // and cost, and token-rate objectives in sweeps and plans apply.
  kCapGeneratesTokens = 1u << 1,
  // One batch of sequences given up front (Scenario::inference: batch, prompt_tokens,
  // gen_tokens) on one model instance over all its GPUs (tensor x pipeline x data): the
  // inference capacity model (model/capacity.hpp inference_capacity), the planner's roofline,
  // the batch and DRAM suggestions (study/fit_search.hpp) and the replay of its fetches apply.
  kCapFixedBatch = 1u << 2,
  // Requests arrive over time at workload.arrival_rate (requests/s): the capacity search varies
  // the rate (study/serving_capacity.hpp, `tiersim capacity`, plan's capacity objective).
  kCapArrivalRate = 1u << 3,
  // Trains the model with ZeRO's stages and offload tiers (Scenario::training) on data-parallel
  // replicas of tensor x pipeline GPUs: `tiersim capacity`'s largest-trainable-model search
  // applies.
  kCapZeroTraining = 1u << 4,
  // Runs FlexGen's own schedule (policy.schedule: flexgen, the policy.flexgen keys).
  kCapFlexGen = 1u << 5,
  // Streams the model's weights from where policy.weights puts them, over policy.io_path (aio or
  // GPUDirect Storage): without weights on NVMe both I/O paths are one configuration.
  kCapWeightStream = 1u << 6,
  // Keeps a KV cache where policy.kv_cache puts it, read by the attention of policy.stack.
  kCapKvCache = 1u << 7,
  // One simulated GPU resource stands for policy.parallelism.gpus_in_lockstep() GPUs (tensor
  // ranks, ZeRO-Inference's data-parallel ranks) running in lockstep.
  kCapLockstepGpus = 1u << 8,
};

struct WorkloadTraits {
  unsigned capabilities = 0;
  // True when the workload's NVMe reads land in GPU memory without host DRAM (GPUDirect
  // Storage); null: where policy.io_path says gds.
  bool (*reads_nvme_to_gpu)(const Scenario& scenario) = nullptr;
  // The group `tiersim validate` lists the workload's reference rows under, and whose error
  // bands a run of this scenario; null: by the policy (study/validation.cpp: FlexGen,
  // ZeRO-Inference, serving stack, ...).
  std::string_view (*reference_group)(const Scenario& scenario) = nullptr;

  bool has(WorkloadCapability c) const { return (capabilities & c) != 0; }
};

// The traits of `kind`, generated from sim/workloads/registry.def.
const WorkloadTraits& workload_traits(WorkloadKind kind);
// By workload.kind's name (a stored run's workload); nullptr for a name no workload has.
const WorkloadTraits* find_workload_traits(std::string_view name);

// Whether the scenario's workload declares `c`.
inline bool has_capability(const Scenario& scenario, WorkloadCapability c) {
  return workload_traits(scenario.kind).has(c);
}
// WorkloadTraits::reads_nvme_to_gpu, or policy.io_path == gds.
bool reads_nvme_to_gpu(const Scenario& scenario);

// Each workload folder defines `<name>_traits` in sim/workloads/<name>/traits.cpp.
#define TIERSIM_WORKLOAD(Enumerator, name) extern const WorkloadTraits name##_traits;
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD

}  // namespace tiersim
