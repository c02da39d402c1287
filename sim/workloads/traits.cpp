#include "sim/workloads/traits.hpp"

namespace tiersim {

const WorkloadTraits& workload_traits(WorkloadKind kind) {
  static const WorkloadTraits* const kTraits[] = {
#define TIERSIM_WORKLOAD(Enumerator, name) &name##_traits,
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD
  };
  return *kTraits[static_cast<std::size_t>(kind)];
}

const WorkloadTraits* find_workload_traits(std::string_view name) {
  for (int i = 0; i < kWorkloadKindCount; ++i) {
    const auto kind = static_cast<WorkloadKind>(i);
    if (name == to_string(kind)) return &workload_traits(kind);
  }
  return nullptr;
}

bool reads_nvme_to_gpu(const Scenario& s) {
  const WorkloadTraits& t = workload_traits(s.kind);
  return t.reads_nvme_to_gpu ? t.reads_nvme_to_gpu(s) : s.policy.io_path == IoPath::kGds;
}

}  // namespace tiersim
