// What the serving workload declares to the code outside its folder (sim/workloads/traits.hpp).
#include "sim/workloads/traits.hpp"

namespace tiersim {

const WorkloadTraits serving_traits{
    kCapEnergyAndCost | kCapGeneratesTokens | kCapArrivalRate | kCapWeightStream | kCapKvCache |
        kCapLockstepGpus,
    nullptr, nullptr,
    // Requests arriving over time: queueing, batching and the KV cache's capacity decide the
    // latencies as much as the per-iteration cost the "serving stack" rows check.
    "serving under load"};

}  // namespace tiersim
