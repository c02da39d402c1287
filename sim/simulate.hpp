#pragma once
// The thin public entry point of the simulator: one resolved scenario in, one result out.
#include "model/perf.hpp"
#include "model/scenario.hpp"
#include "sim/result.hpp"

namespace tiersim::sim {

struct SimOptions {
  bool trace = false;   // keep every busy interval (for --trace and the report's timeline)
  ExecutionModel exec;  // software-stack efficiencies
  // Inference: fetch every weight tensor with events of its own even where the fetching process
  // can reserve a whole module's reads itself (sim/workloads/inference/inference.cpp,
  // fetch_module_reserved). Same results, several times the events: the reference the fast path
  // is tested against.
  bool event_per_tensor = false;
};

// Runs the scenario's workload (the ops table registered for workload.kind, see
// sim/workloads/workload.hpp) and adds what its capabilities ask for (energy and cost). Throws
// ModelError for scenarios the model cannot express.
RunResult simulate(const Scenario& scenario, const SimOptions& options = {});

}  // namespace tiersim::sim
