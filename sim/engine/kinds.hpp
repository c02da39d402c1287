#pragma once
// What the engine's resources and trace spans stand for, as types rather than strings. Observers
// (energy and utilisation in sim/economics.cpp, the replay's plan) switch on these types; the
// display names used by `run` output, traces, the results store and the reports are made here and
// nowhere else, so renaming one cannot silently drop it from an energy term.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tiersim::sim {

// One modelled resource. The unit of its work is given to Engine::add_resource (WorkUnit).
enum class ResourceKind : std::uint8_t {
  kGpu,             // GPU kernel time of one pipeline stage (stands for its tensor-parallel GPUs)
  kPcieH2d,         // host-to-GPU PCIe link of one stage (one GPU's share of the traffic)
  kPcieD2h,         // GPU-to-host PCIe link of one stage
  kGpuPeer,         // GPU-to-GPU link (tensor-parallel all-reduce, pipeline hand-off)
  kNvme,            // the NVMe array (RAID-0), busy while any drive transfers
  kCpu,             // the host CPUs (all sockets)
  kNetwork,         // the inter-node network of data-parallel training
  kCkptD2h,         // one checkpoint writer's GPU-to-host copy
  kCkptThread,      // one checkpoint writer's CPU thread
  kStorageClient,   // this node's link to network storage
  kStorageServers,  // the storage servers' aggregate bandwidth
  kPcieSwitch,      // the uplink of the PCIe switch that several GPUs sit behind (host to switch)
};

// "No index": a resource of which the workload has one (named "gpu", not "gpu0").
inline constexpr int kNoIndex = -1;

// Its kind and index identify a resource; the index is the GPU number, pipeline stage or writer.
struct ResourceId {
  ResourceKind kind = ResourceKind::kGpu;
  int index = kNoIndex;
};

// The display name: "gpu", "gpu1", "pcie-h2d", "pcie-h2d1", "gpu-peer", "nvme", "cpu", "network",
// "ckpt-d2h0", "ckpt-thread0", "storage-client", "storage-servers", "pcie-switch". These names are
// stable output (run --json, traces, the results store).
std::string resource_name(ResourceKind kind, int index = kNoIndex);
inline std::string resource_name(const ResourceId& id) {
  return resource_name(id.kind, id.index);
}
// The inverse, for names read back from the results store or the sweep cache; nullopt when the
// name is not one resource_name makes.
std::optional<ResourceId> parse_resource_name(std::string_view name);

// What a resource's `amount` counts.
enum class WorkUnit : std::uint8_t {
  kSeconds,  // the rate is 1 per second: amounts are service seconds
  kBytes,    // the rate is bytes per second
};
const char* to_string(WorkUnit unit);  // "s", "bytes"

// What a busy interval was spent on (trace spans, busy time per activity).
enum class Activity : std::uint8_t {
  kNone,  // untagged work: ""
  // Inference (and the replay, which uses the same names).
  kWeightsNvme,    // weights read from NVMe (into GPU memory under GDS, a bounce buffer under AIO)
  kWeightsCpu,     // weights copied from host DRAM over PCIe
  kWeightsBounce,  // AIO's second hop: bounce buffer to GPU
  kFetchOverhead,  // per-tensor software cost of a fetch (replay)
  kCompute,
  kKvToHost,
  kAttentionCpu,
  kAttentionOut,
  kKvOffload,
  kAllreduce,
  kActivations,
  // Training.
  kParamFetchFwd,
  kParamFetchBwd,
  kAllgatherParams,
  kReduceScatterGrads,
  kAllreduceGrads,
  kGradOffload,
  kGradSwapOut,
  kOptimizer,
  kOptimSwapIn,
  kGradSwapIn,
  kGradToHost,
  kOptimSwapOut,
  kParamUpdate,
  kParamSwapOut,
  kForward,
  kBackward,
  kAllgatherUpdated,
  // Checkpoints.
  kCheckpointWrite,
  kCkptPickleSource,
  kCkptD2hPageable,
  kCkptStagingCopy,
  kCkptRead,
  kCkptSerialiseWrite,
  kCkptD2hPinned,
  kCkptCopy,
  // The io benchmark.
  kRead,
  kWrite,
};
inline constexpr std::size_t kActivityCount = static_cast<std::size_t>(Activity::kWrite) + 1;

// The part of a run a piece of work belongs to, for energy by phase (sim/economics.cpp): an
// inference or serving workload tags its work with the pass it serves; other work has none.
enum class Stage : std::uint8_t {
  kNone,     // not part of a prefill or decode pass (training, checkpoints, the io benchmark)
  kPrefill,  // the prompt's forward pass (inference pass 0; serving iterations of prompt chunks)
  kDecode,   // generating tokens
};
inline constexpr std::size_t kStageCount = static_cast<std::size_t>(Stage::kDecode) + 1;

// The trace name ("weights-nvme", "compute", ...); stable output like resource_name.
const char* to_string(Activity activity);
std::optional<Activity> parse_activity(std::string_view name);
// A weight fetch: from NVMe, from host DRAM, or the bounce copy.
bool is_weight_fetch(Activity activity);

}  // namespace tiersim::sim
