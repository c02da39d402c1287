// What the skeleton workload declares to the code outside its folder (sim/workloads/traits.hpp):
// its capability flags, and the optional entries (reads_nvme_to_gpu, reference_group) where the
// defaults do not fit. A new workload sets the flags that describe what it does; the loader,
// economics, studies and reports follow them.
#include "sim/workloads/traits.hpp"

namespace tiersim {

// kCapEnergyAndCost: simulate() adds energy and cost observed from the GPU's busy time.
const WorkloadTraits skeleton_traits{kCapEnergyAndCost, nullptr, nullptr};

}  // namespace tiersim
