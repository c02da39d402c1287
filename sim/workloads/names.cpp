#include "sim/workloads/names.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include "sim/workloads/checkpoint/names.hpp"
#include "sim/workloads/inference/names.hpp"
#include "sim/workloads/io/names.hpp"
#include "sim/workloads/training/names.hpp"

namespace tiersim::sim {
namespace {

// Every resource kind and activity a workload declares, to read stored names back. A workload
// that declares a new one adds it here as well.
constexpr std::array<const ResourceKind*, 12> kResourceKinds = {
    &resource::kGpu,           &resource::kPcieH2d,        &resource::kPcieD2h,
    &resource::kGpuPeer,       &resource::kNvme,           &resource::kCpu,
    &resource::kNetwork,       &resource::kCkptD2h,        &resource::kCkptThread,
    &resource::kStorageClient, &resource::kStorageServers, &resource::kPcieSwitch,
};

constexpr std::array<Activity, 39> kActivities = {
    Activity{},
    // Shared, and the inference family's.
    activity::kWeightsNvme,
    activity::kWeightsCpu,
    activity::kWeightsBounce,
    activity::kFetchOverhead,
    activity::kCompute,
    activity::kKvToHost,
    activity::kAttentionCpu,
    activity::kAttentionOut,
    activity::kKvOffload,
    activity::kAllreduce,
    activity::kActivations,
    activity::kAllgatherParams,
    // Training.
    activity::kParamFetchFwd,
    activity::kParamFetchBwd,
    activity::kReduceScatterGrads,
    activity::kAllreduceGrads,
    activity::kGradOffload,
    activity::kGradSwapOut,
    activity::kOptimizer,
    activity::kOptimSwapIn,
    activity::kGradSwapIn,
    activity::kGradToHost,
    activity::kOptimSwapOut,
    activity::kParamUpdate,
    activity::kParamSwapOut,
    activity::kForward,
    activity::kBackward,
    activity::kAllgatherUpdated,
    // Checkpoints.
    activity::kCheckpointWrite,
    activity::kCkptPickleSource,
    activity::kCkptD2hPageable,
    activity::kCkptStagingCopy,
    activity::kCkptRead,
    activity::kCkptSerialiseWrite,
    activity::kCkptD2hPinned,
    activity::kCkptCopy,
    // The io benchmark.
    activity::kRead,
    activity::kWrite,
};

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
  for (const Activity a : kActivities)
    if (name == a.name()) return a;
  return std::nullopt;
}

}  // namespace tiersim::sim
