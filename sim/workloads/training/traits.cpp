// What the training workload declares to the code outside its folder (sim/workloads/traits.hpp).
#include "sim/workloads/traits.hpp"

namespace tiersim {

// Energy and cost per iteration come from the workload itself (kCapEnergyAndCost off).
const WorkloadTraits training_traits{
    kCapZeroTraining, nullptr, [](const Scenario&) -> std::string_view { return "training"; }};

}  // namespace tiersim
