// What the inference workload declares to the code outside its folder (sim/workloads/traits.hpp).
#include "sim/workloads/traits.hpp"

namespace tiersim {

namespace {

SequenceSpan longest(const Scenario& s) {
  return {"workload.prompt_tokens", s.inference.prompt_tokens + s.inference.gen_tokens};
}

}  // namespace

const WorkloadTraits inference_traits{
    kCapEnergyAndCost | kCapGeneratesTokens | kCapFixedBatch | kCapFlexGen | kCapWeightStream |
        kCapKvCache | kCapLockstepGpus,
    &longest, nullptr,
    // By the policy: the schedule (FlexGen, ZeRO-Inference) and the offload decide the group.
    nullptr};

}  // namespace tiersim
