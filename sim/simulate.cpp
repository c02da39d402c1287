#include "sim/simulate.hpp"

#include "sim/economics.hpp"
#include "sim/workloads/workload.hpp"

namespace tiersim::sim {

RunResult simulate(const Scenario& scenario, const SimOptions& options) {
  const WorkloadOps& ops = workload_ops(scenario.kind);
  RunResult result = ops.run(scenario, options);
  if (ops.has(kCapEnergyAndCost)) add_energy_and_cost(scenario, result);
  return result;
}

}  // namespace tiersim::sim
