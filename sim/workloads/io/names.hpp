#pragma once
// The io benchmark's activities (its resources are the shared nvme and PCIe links).
#include "sim/workloads/names.hpp"

namespace tiersim::sim::activity {
inline constexpr Activity kRead{"read"};
inline constexpr Activity kWrite{"write"};
}  // namespace tiersim::sim::activity
