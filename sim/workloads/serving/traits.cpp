// What the serving workload declares to the code outside its folder (sim/workloads/traits.hpp).
#include "sim/workloads/traits.hpp"

namespace tiersim {

namespace {

std::string_view group(const Scenario& s) {
  // TensorRT-LLM's in-flight batching (its capacity scheduler, whole prompts within the token
  // budget) is tested by its own rows, trtllm-bench's saturated throughput, apart from vLLM's
  // latencies under arrivals over time (scenarios/validation/groups.yaml).
  if (s.serving.scheduler == ServingWorkload::Scheduler::kInflight) return "in-flight batching";
  // Requests arriving over time: queueing, batching and the KV cache's capacity decide the
  // latencies as much as the per-iteration cost the "serving stack" rows check.
  return "serving under load";
}

}  // namespace

const WorkloadTraits serving_traits{kCapEnergyAndCost | kCapGeneratesTokens | kCapArrivalRate |
                                        kCapWeightStream | kCapKvCache | kCapLockstepGpus,
                                    nullptr, &group};

}  // namespace tiersim
