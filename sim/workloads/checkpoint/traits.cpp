// What the checkpoint workload declares to the code outside its folder
// (sim/workloads/traits.hpp).
#include "sim/workloads/traits.hpp"

namespace tiersim {

const WorkloadTraits checkpoint_traits{
    0, nullptr, [](const Scenario&) -> std::string_view { return "checkpoint"; }};

}  // namespace tiersim
