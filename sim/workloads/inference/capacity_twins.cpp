// The inference workload's answer to "which inputs does a run read only through its capacity
// report" (WorkloadOps::capacity_only_keys, with_capacity; sim/simulate.hpp simulate_like), so a
// study runs scenarios that differ in them alone once.
#include <string>
#include <vector>

#include "model/capacity.hpp"
#include "model/perf.hpp"
#include "sim/workloads/inference/inference.hpp"

namespace tiersim::sim {

// ZeRO-Inference's schedule (inference.cpp) reads the host's DRAM size only in
// inference_capacity (the host tier's capacity, hence fits and shortfall); its timeline uses the
// host's bandwidths (dram_gbps, PCIe), never its size. FlexGen's schedule sizes its page cache
// from the host tier's free bytes (flexgen.cpp), so its timeline depends on the size: none there.
std::vector<std::string> inference_capacity_only_keys(const Scenario& scenario) {
  if (scenario.policy.schedule == Schedule::kFlexGen) return {};
  return {"hardware.host.dram_gb"};
}

RunResult inference_with_capacity(const Scenario& scenario, const SimOptions& options,
                                  const RunResult& twin) {
  // The report InferenceSim::run makes: the same call on the same execution model.
  const CapacityReport cap =
      inference_capacity(scenario, with_stack(options.exec, scenario.policy.stack));
  // Not fitting, the run stops at the report: it is quickly made again.
  if (!cap.fits) return simulate_inference(scenario, options);
  RunResult result = twin;
  result.memory = cap.tiers;
  result.fits = cap.fits;
  result.shortfall = cap.shortfall;
  return result;
}

}  // namespace tiersim::sim
