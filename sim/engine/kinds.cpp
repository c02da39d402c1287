#include "sim/engine/kinds.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace tiersim::sim {
namespace {

struct KindName {
  ResourceKind kind;
  const char* base;
};

// The one table of resource names. The index, when there is one, follows the base name directly.
constexpr std::array<KindName, 12> kKindNames = {{
    {ResourceKind::kGpu, "gpu"},
    {ResourceKind::kPcieH2d, "pcie-h2d"},
    {ResourceKind::kPcieD2h, "pcie-d2h"},
    {ResourceKind::kGpuPeer, "gpu-peer"},
    {ResourceKind::kNvme, "nvme"},
    {ResourceKind::kCpu, "cpu"},
    {ResourceKind::kNetwork, "network"},
    {ResourceKind::kCkptD2h, "ckpt-d2h"},
    {ResourceKind::kCkptThread, "ckpt-thread"},
    {ResourceKind::kStorageClient, "storage-client"},
    {ResourceKind::kStorageServers, "storage-servers"},
    {ResourceKind::kPcieSwitch, "pcie-switch"},
}};

// The one table of activity names, in enum order (checked below).
constexpr std::array<const char*, kActivityCount> kActivityNames = {
    "",
    "weights-nvme",
    "weights-cpu",
    "weights-bounce",
    "fetch-overhead",
    "compute",
    "kv-to-host",
    "attention-cpu",
    "attention-out",
    "kv-offload",
    "allreduce",
    "activations",
    "param-fetch-fwd",
    "param-fetch-bwd",
    "allgather-params",
    "reduce-scatter-grads",
    "allreduce-grads",
    "grad-offload",
    "grad-swap-out",
    "optimizer",
    "optim-swap-in",
    "grad-swap-in",
    "grad-to-host",
    "optim-swap-out",
    "param-update",
    "param-swap-out",
    "forward",
    "backward",
    "allgather-updated",
    "checkpoint-write",
    "ckpt-pickle-source",
    "ckpt-d2h-pageable",
    "ckpt-staging-copy",
    "ckpt-read",
    "ckpt-serialise-write",
    "ckpt-d2h-pinned",
    "ckpt-copy",
    "read",
    "write",
};
static_assert(kActivityNames.back() != nullptr);

const char* base_name(ResourceKind kind) {
  for (const auto& k : kKindNames)
    if (k.kind == kind) return k.base;
  return "?";
}

}  // namespace

std::string resource_name(ResourceKind kind, int index) {
  std::string name = base_name(kind);
  if (index != kNoIndex) name += std::to_string(index);
  return name;
}

std::optional<ResourceId> parse_resource_name(std::string_view name) {
  for (const auto& k : kKindNames) {
    const std::string_view base = k.base;
    if (name.substr(0, base.size()) != base) continue;
    const std::string_view rest = name.substr(base.size());
    if (rest.empty()) return ResourceId{k.kind, kNoIndex};
    int index = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
    if (ec == std::errc() && end == rest.data() + rest.size() && index >= 0 &&
        std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return ResourceId{k.kind, index};
  }
  return std::nullopt;
}

const char* to_string(WorkUnit unit) {
  return unit == WorkUnit::kBytes ? "bytes" : "s";
}

const char* to_string(Activity activity) {
  return kActivityNames[static_cast<std::size_t>(activity)];
}

std::optional<Activity> parse_activity(std::string_view name) {
  for (std::size_t i = 0; i < kActivityNames.size(); ++i)
    if (name == kActivityNames[i]) return static_cast<Activity>(i);
  return std::nullopt;
}

bool is_weight_fetch(Activity activity) {
  return activity == Activity::kWeightsNvme || activity == Activity::kWeightsCpu ||
         activity == Activity::kWeightsBounce;
}

}  // namespace tiersim::sim
