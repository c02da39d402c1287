#include "sim/workloads/names.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include "sim/workloads/checkpoint/names.hpp"
#include "sim/workloads/inference/names.hpp"
#include "sim/workloads/io/names.hpp"
#include "sim/workloads/serving/names.hpp"
#include "sim/workloads/training/names.hpp"

namespace tiersim::sim {
namespace {

// Every resource kind and activity a workload declares, to read stored names back. A workload
// that declares a new one adds it here as well.
// What each kind of resource is called for people: "gpu5" reads "GPU 5".
struct ResourceLabel {
  const ResourceKind* kind;
  const char* label;
};
constexpr std::array<ResourceLabel, 12> kResourceLabels = {{
    {&resource::kGpu, "GPU"},
    {&resource::kPcieH2d, "PCIe host-to-GPU"},
    {&resource::kPcieD2h, "PCIe GPU-to-host"},
    {&resource::kGpuPeer, "GPU-to-GPU link"},
    {&resource::kNvme, "NVMe array"},
    {&resource::kCpu, "host CPUs"},
    {&resource::kNetwork, "inter-node network"},
    {&resource::kCkptD2h, "checkpoint copy GPU-to-host"},
    {&resource::kCkptThread, "checkpoint writer thread"},
    {&resource::kStorageClient, "storage client link"},
    {&resource::kStorageServers, "storage servers"},
    {&resource::kPcieSwitch, "PCIe switch uplink"},
}};
constexpr std::array<const ResourceKind*, 12> kResourceKinds = {
    &resource::kGpu,           &resource::kPcieH2d,        &resource::kPcieD2h,
    &resource::kGpuPeer,       &resource::kNvme,           &resource::kCpu,
    &resource::kNetwork,       &resource::kCkptD2h,        &resource::kCkptThread,
    &resource::kStorageClient, &resource::kStorageServers, &resource::kPcieSwitch,
};

// Every activity with its label for people (run's breakdown, compare, the report).
struct ActivityEntry {
  Activity activity;
  const char* label;
};
constexpr std::array<ActivityEntry, 44> kActivities = {{
    {Activity{}, "untagged work"},
    // Shared, and the inference family's.
    {activity::kWeightsNvme, "weight stream from NVMe"},
    {activity::kWeightsCpu, "weight stream from host DRAM"},
    {activity::kWeightsBounce, "weight copy, bounce buffer to GPU"},
    {activity::kFetchOverhead, "per-tensor fetch overhead"},
    {activity::kCompute, "GPU compute"},
    {activity::kKvToHost, "KV and queries to host (CPU attention)"},
    {activity::kAttentionCpu, "attention on the CPU"},
    {activity::kAttentionOut, "attention output to GPU"},
    {activity::kKvOffload, "KV cache write-back to host"},
    {activity::kAllreduce, "tensor-parallel all-reduce"},
    {activity::kActivations, "activation transfers"},
    {activity::kAllgatherParams, "parameter all-gather"},
    // Serving's KV tiers.
    {activity::kKvLoadHost, "KV tier loads from host DRAM"},
    {activity::kKvLoadNvme, "KV tier loads from NVMe"},
    {activity::kKvStoreHost, "KV tier stores to host DRAM"},
    {activity::kKvStoreNvme, "KV tier stores to NVMe"},
    // Training.
    {activity::kParamFetchFwd, "parameter fetch, forward"},
    {activity::kParamFetchBwd, "parameter fetch, backward"},
    {activity::kReduceScatterGrads, "gradient reduce-scatter"},
    {activity::kAllreduceGrads, "gradient all-reduce"},
    {activity::kGradOffload, "gradient offload to host"},
    {activity::kGradOffloadChecks, "gradient norm, overflow check and fp32 cast before offload"},
    {activity::kGradSwapOut, "gradient swap-out to NVMe"},
    {activity::kOptimizer, "optimizer step"},
    {activity::kOptimSwapIn, "optimizer state swap-in"},
    {activity::kGradSwapIn, "gradient swap-in"},
    {activity::kGradToHost, "gradients to host"},
    {activity::kOptimSwapOut, "optimizer state swap-out"},
    {activity::kParamUpdate, "parameter update"},
    {activity::kParamSwapOut, "parameter swap-out"},
    {activity::kForward, "forward pass"},
    {activity::kBackward, "backward pass"},
    {activity::kAllgatherUpdated, "all-gather of updated parameters"},
    // Checkpoints.
    {activity::kCheckpointWrite, "checkpoint write"},
    {activity::kCkptPickleSource, "checkpoint pickling"},
    {activity::kCkptD2hPageable, "checkpoint copy to pageable host memory"},
    {activity::kCkptStagingCopy, "checkpoint staging copy"},
    {activity::kCkptRead, "checkpoint read-back"},
    {activity::kCkptSerialiseWrite, "checkpoint serialise and write"},
    {activity::kCkptD2hPinned, "checkpoint copy to pinned host memory"},
    {activity::kCkptCopy, "checkpoint copy"},
    // The io benchmark.
    {activity::kRead, "read from NVMe"},
    {activity::kWrite, "write to NVMe"},
}};

}  // namespace

std::string ResourceKind::name(int index) const {
  std::string n = base;
  if (index != kNoIndex) n += std::to_string(index);
  return n;
}

std::optional<ParsedResource> parse_resource_name(std::string_view name) {
  for (const ResourceKind* k : kResourceKinds) {
    const std::string_view base = k->base;
    if (name.substr(0, base.size()) != base) continue;
    const std::string_view rest = name.substr(base.size());
    if (rest.empty()) return ParsedResource{k, kNoIndex};
    int index = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
    if (ec == std::errc() && end == rest.data() + rest.size() && index >= 0 &&
        std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return ParsedResource{k, index};
  }
  return std::nullopt;
}

std::optional<Activity> parse_activity(std::string_view name) {
  for (const ActivityEntry& e : kActivities)
    if (name == e.activity.name()) return e.activity;
  return std::nullopt;
}

std::vector<Activity> declared_activities() {
  std::vector<Activity> out;
  out.reserve(kActivities.size());
  for (const ActivityEntry& e : kActivities) out.push_back(e.activity);
  return out;
}

std::string activity_label(std::string_view name) {
  for (const ActivityEntry& e : kActivities)
    if (name == e.activity.name()) return e.label;
  return std::string(name);
}

std::string resource_label(std::string_view name) {
  const std::optional<ParsedResource> parsed = parse_resource_name(name);
  if (!parsed) return std::string(name);
  const auto it = std::find_if(kResourceLabels.begin(), kResourceLabels.end(),
                               [&](const ResourceLabel& l) { return l.kind == parsed->kind; });
  std::string label = it == kResourceLabels.end() ? std::string(parsed->kind->base) : it->label;
  // Appended piecewise: GCC 12 warns (-Wstringop-overflow) on " " + std::to_string(...).
  if (parsed->index != kNoIndex) {
    label += ' ';
    label += std::to_string(parsed->index);
  }
  return label;
}

}  // namespace tiersim::sim
