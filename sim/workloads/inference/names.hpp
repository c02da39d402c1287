#pragma once
// The inference workload's own resources and activities (sim/workloads/names.hpp has those it
// shares with serving and training). FlexGen's schedule and the replay (replay/) use them too.
#include "sim/workloads/names.hpp"

namespace tiersim::sim {

namespace resource {
// The uplink of the PCIe switch that several GPUs sit behind (host to switch). It carries the
// bytes the GPUs' own host links behind it carry, and energy counts those there.
inline constexpr ResourceKind kPcieSwitch{"pcie-switch", ResourceRole::kOther};
}  // namespace resource

namespace activity {
// AIO's second hop: bounce buffer to GPU.
inline constexpr Activity kWeightsBounce{"weights-bounce"};
// The per-tensor software cost of a fetch (the replay).
inline constexpr Activity kFetchOverhead{"fetch-overhead"};
inline constexpr Activity kAttentionCpu{"attention-cpu"};
inline constexpr Activity kAttentionOut{"attention-out"};
inline constexpr Activity kKvOffload{"kv-offload"};
inline constexpr Activity kActivations{"activations"};
}  // namespace activity

// A weight fetch: from NVMe, from host DRAM, or the bounce copy.
inline bool is_weight_fetch(Activity a) {
  return a == activity::kWeightsNvme || a == activity::kWeightsCpu || a == activity::kWeightsBounce;
}

}  // namespace tiersim::sim
