// What the inference workload declares to the code outside its folder (sim/workloads/traits.hpp).
#include "sim/workloads/traits.hpp"

namespace tiersim {

const WorkloadTraits inference_traits{
    kCapEnergyAndCost | kCapGeneratesTokens | kCapFixedBatch | kCapFlexGen | kCapWeightStream |
        kCapKvCache | kCapLockstepGpus,
    nullptr,
    // By the policy: the schedule (FlexGen, ZeRO-Inference) and the offload decide the group.
    nullptr};

}  // namespace tiersim
