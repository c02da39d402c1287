#include "sim/engine/kinds.hpp"

#include <array>

namespace tiersim::sim {

const char* to_string(ResourceRole role) {
  static constexpr std::array<const char*, kResourceRoleCount> kNames = {
      "gpu", "cpu", "pcie-h2d", "pcie-d2h", "nvme", "network", "other"};
  return kNames[static_cast<std::size_t>(role)];
}

const char* to_string(WorkUnit unit) {
  return unit == WorkUnit::kBytes ? "bytes" : "s";
}

}  // namespace tiersim::sim
