#pragma once
// The names workloads give their resources and activities. A workload declares its own in its
// folder (sim/workloads/<kind>/names.hpp); those several workloads share (a GPU, the PCIe links,
// the NVMe array; the inference family's weight fetches and compute) are here. The engine knows
// none of them: it takes a role and a name (sim/engine/kinds.hpp ResourceSpec) and carries an
// Activity's name. Every name is stable output (run --json, traces, the results store, the sweep
// cache), and parse_resource_name / parse_activity read stored ones back.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/kinds.hpp"

namespace tiersim::sim {

// "No index": a resource of which the workload has one (named "gpu", not "gpu0").
inline constexpr int kNoIndex = -1;

// A kind of resource a workload adds: the base of its name and its role for energy.
struct ResourceKind {
  const char* base;
  ResourceRole role;
  // The name: the base, then the index (GPU number, pipeline stage or writer) when there is one:
  // "gpu", "gpu1", "pcie-h2d1", "ckpt-thread0".
  std::string name(int index = kNoIndex) const;
  // What Engine::add_resource takes: this kind's role and name(index).
  ResourceSpec at(int index = kNoIndex) const { return {role, name(index)}; }
};

namespace resource {
// GPU kernel time of one pipeline stage or replica (stands for its tensor-parallel GPUs).
inline constexpr ResourceKind kGpu{"gpu", ResourceRole::kGpu};
// A stage's host-to-GPU and GPU-to-host PCIe link (one GPU's share of the traffic).
inline constexpr ResourceKind kPcieH2d{"pcie-h2d", ResourceRole::kPcieH2d};
inline constexpr ResourceKind kPcieD2h{"pcie-d2h", ResourceRole::kPcieD2h};
// GPU-to-GPU link (tensor-parallel all-reduce, pipeline hand-off, ZeRO gathers over NVLink or
// PCIe peer-to-peer): its bytes do not touch host DRAM, and no power term charges it.
inline constexpr ResourceKind kGpuPeer{"gpu-peer", ResourceRole::kNetwork};
// The NVMe array (RAID-0), busy while any drive transfers.
inline constexpr ResourceKind kNvme{"nvme", ResourceRole::kNvme};
// The host CPUs (all sockets).
inline constexpr ResourceKind kCpu{"cpu", ResourceRole::kCpu};
}  // namespace resource

// Activities of more than one workload.
namespace activity {
inline constexpr Activity kCompute{"compute"};
// Weights read from NVMe (into GPU memory under GDS, a bounce buffer under AIO), and copied from
// host DRAM over PCIe (inference, serving, the replay).
inline constexpr Activity kWeightsNvme{"weights-nvme"};
inline constexpr Activity kWeightsCpu{"weights-cpu"};
inline constexpr Activity kKvToHost{"kv-to-host"};
inline constexpr Activity kAllreduce{"allreduce"};
// ZeRO-3 parameter all-gathers (training; ZeRO-Inference's data-parallel ranks).
inline constexpr Activity kAllgatherParams{"allgather-params"};
}  // namespace activity

// A resource name read back: its kind (one of the workloads' declared kinds) and index.
struct ParsedResource {
  const ResourceKind* kind = nullptr;
  int index = kNoIndex;
};
// Names read back from the results store or the sweep cache; nullopt when no workload declares
// the name. Every workload's kinds and activities are listed for this in names.cpp.
std::optional<ParsedResource> parse_resource_name(std::string_view name);
std::optional<Activity> parse_activity(std::string_view name);
// Every activity a workload declares (the untagged one, "", first), in names.cpp's order.
std::vector<Activity> declared_activities();

// Names for people (run's time breakdown, compare, the report): what an activity's work is
// ("kv-offload": "KV cache write-back to host"), and a resource as read ("gpu5": "GPU 5",
// "pcie-h2d1": "PCIe host-to-GPU 1"). A name no workload declares comes back as it is.
std::string activity_label(std::string_view activity);
std::string resource_label(std::string_view resource);

}  // namespace tiersim::sim
