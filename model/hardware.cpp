#include "model/hardware.hpp"

#include "model/scenario.hpp"

namespace tiersim {

double pcie_link_gbps(int generation, int lanes) {
  // Per-lane payload rate after line encoding (8b/10b for Gen1-2, 128b/130b from Gen3).
  double per_lane = 0;
  switch (generation) {
    case 1: per_lane = 0.25; break;
    case 2: per_lane = 0.5; break;
    case 3: per_lane = 0.985; break;
    case 4: per_lane = 1.969; break;
    case 5: per_lane = 3.938; break;
    default: per_lane = generation > 5 ? 7.563 : 0.25; break;
  }
  return per_lane * lanes;
}

const char* to_string(Tier t) {
  switch (t) {
    case Tier::kGpu: return "gpu";
    case Tier::kCpu: return "cpu";
    case Tier::kNvme: return "nvme";
  }
  return "?";
}

const char* to_string(WorkloadKind k) {
  switch (k) {
#define TIERSIM_WORKLOAD(Enumerator, name) \
  case WorkloadKind::Enumerator:             \
    return #name;
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD
  }
  return "?";
}

}  // namespace tiersim
