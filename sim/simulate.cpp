#include "sim/simulate.hpp"

#include <cmath>

#include "model/errors.hpp"
#include "sim/economics.hpp"
#include "sim/metrics.hpp"
#include "sim/workloads/workload.hpp"

namespace tiersim::sim {

namespace {

// The scenario keys a metric's value is computed from, for messages about it: by the metric's
// declared family (sim/metrics.cpp), never by its name.
std::string keys_behind(const std::string& metric) {
  const MetricDecl* decl = find_metric(metric);
  const std::string_view family = decl ? decl->workloads : std::string_view();
  if (family == "cost")
    return "economics.amortization_years, economics.duty_cycle, economics.usd_per_kwh, "
           "economics.pue, economics.prices";
  if (family == "energy")
    return "hardware.gpu.tdp_w, hardware.gpu.idle_w, hardware.host.*_w*, hardware.nvme.*_w, "
           "hardware.host.dram_gb";
  return "hardware, model, workload and policy sizes and rates";
}

// Every input is finite and within 1e-30..1e30 (config/options.cpp), but products of extreme
// values can still overflow or divide by a vanishing number. A result that is not a number is
// an input error; printing inf or null with exit code 0 would hide it.
void check_finite(const Scenario& s, const RunResult& r) {
  for (const auto& m : r.metrics)
    if (!std::isfinite(m.value))
      throw ConfigError(s.file, 0, keys_behind(m.name),
                        "the result " + m.name +
                            " is not a finite number: an input is too large "
                            "or too small for the model (check these keys)");
}

}  // namespace

RunResult run_workload(const Scenario& scenario, const SimOptions& options) {
  RunResult result = workload_ops(scenario.kind).run(scenario, options);
  check_finite(scenario, result);
  return result;
}

RunResult finish_run(const Scenario& scenario, RunResult result) {
  if (workload_ops(scenario.kind).has(kCapEnergyAndCost)) {
    // The power and cost models' errors about their inputs, located in the scenario.
    try {
      add_energy_and_cost(scenario, result);
    } catch (const ModelError& e) {
      throw ModelError(ConfigError(scenario.file, 0, "economics, hardware power", e.what()).what());
    }
    check_finite(scenario, result);
  }
  return result;
}

RunResult simulate(const Scenario& scenario, const SimOptions& options) {
  return finish_run(scenario, run_workload(scenario, options));
}

std::vector<std::string> capacity_only_keys(const Scenario& scenario) {
  const WorkloadOps& ops = workload_ops(scenario.kind);
  if (!ops.capacity_only_keys) return {};
  return ops.capacity_only_keys(scenario);
}

RunResult simulate_like(const Scenario& scenario, const RunResult& twin,
                        const SimOptions& options) {
  const WorkloadOps& ops = workload_ops(scenario.kind);
  if (!ops.capacity_only_keys || !ops.with_capacity || !twin.fits ||
      ops.capacity_only_keys(scenario).empty())
    return simulate(scenario, options);
  RunResult result = ops.with_capacity(scenario, options, twin);
  check_finite(scenario, result);
  return finish_run(scenario, std::move(result));
}

}  // namespace tiersim::sim
