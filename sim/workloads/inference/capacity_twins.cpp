// The inference workload's answer to "which inputs does a run read only through its capacity
// report" (WorkloadOps::capacity_only_keys, with_capacity; sim/simulate.hpp simulate_like), so a
// study runs scenarios that differ in them alone once.
#include <string>
#include <vector>

#include "model/capacity.hpp"
#include "model/layout.hpp"
#include "model/perf.hpp"
#include "model/weight_stream.hpp"
#include "sim/workloads/inference/inference.hpp"

namespace tiersim::sim {

namespace {
// Drives the run has but reads nothing from: weights not on NVMe (the KV cache never is there,
// inference.cpp refuses it).
bool idle_drives(const Scenario& s) {
  return s.hardware.nvme.count > 0 && s.policy.weights.nvme <= 0;
}
}  // namespace

// ZeRO-Inference's schedule (inference.cpp) reads the host's DRAM size only in
// inference_capacity (the host tier's capacity, hence fits and shortfall); its timeline uses the
// host's bandwidths (dram_gbps, PCIe), never its size. FlexGen's schedule sizes its page cache
// from the host tier's free bytes (flexgen.cpp), so its timeline depends on the size: none there.
// Drives it reads nothing from leave the timeline alone too: how many there are changes the NVMe
// tier's capacity and the array's modelled read rate the run reports, both made again below (with
// none, the run has no drive resource at all, so that count is not among these keys).
std::vector<std::string> inference_capacity_only_keys(const Scenario& scenario) {
  if (scenario.policy.schedule == Schedule::kFlexGen) return {};
  if (idle_drives(scenario)) return {"hardware.host.dram_gb", "hardware.nvme.count"};
  return {"hardware.host.dram_gb"};
}

RunResult inference_with_capacity(const Scenario& scenario, const SimOptions& options,
                                  const RunResult& twin) {
  // The report InferenceSim::run makes: the same call on the same execution model.
  const ExecutionModel em = with_stack(options.exec, scenario.policy.stack);
  const std::vector<WeightModule> modules = weight_modules(scenario.model, scenario.policy);
  const CapacityReport cap = inference_capacity(scenario, em, modules);
  // Not fitting, the run stops at the report: it is quickly made again.
  if (!cap.fits) return simulate_inference(scenario, options);
  RunResult result = twin;
  result.memory = cap.tiers;
  result.fits = cap.fits;
  result.shortfall = cap.shortfall;
  // The rate InferenceSim::run reports: its weight-stream point's, on the same execution model
  // and modules.
  if (idle_drives(scenario))
    set_nvme_read_rate(result, weight_stream_point(scenario, em, modules).nvme.read_gbps);
  return result;
}

}  // namespace tiersim::sim
