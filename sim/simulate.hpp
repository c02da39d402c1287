#pragma once
// The thin public entry point of the simulator: one resolved scenario in, one result out.
#include <atomic>

#include "model/perf.hpp"
#include "model/scenario.hpp"
#include "sim/result.hpp"

namespace tiersim::sim {

struct SimOptions {
  bool trace = false;   // keep every busy interval (for --trace and the report's timeline)
  // Keep the busy intervals for the time breakdown (RunResult::phases and the phase_* metrics,
  // sim/breakdown.hpp), without the timeline. Off for sweeps and searches, which read
  // metrics only: the intervals cost memory and a sort per run. `trace` implies it.
  bool breakdown = false;
  ExecutionModel exec;  // software-stack efficiencies
  // Inference: fetch every weight tensor with events of its own even where the fetching process
  // can reserve a whole module's reads itself (sim/workloads/inference/inference.cpp,
  // fetch_module_reserved). Same results, several times the events: the reference the fast path
  // is tested against.
  bool event_per_tensor = false;
  // Set by another thread to stop the run early: the engine polls it (Engine::stop_when) and
  // simulate() throws Interrupted. Null: runs to the end. The Python module's Ctrl-C uses it.
  const std::atomic<bool>* stop = nullptr;
};

// Runs the scenario's workload (the ops table registered for workload.kind, see
// sim/workloads/workload.hpp) and adds what its capabilities ask for (energy and cost). Throws
// ModelError for scenarios the model cannot express.
RunResult simulate(const Scenario& scenario, const SimOptions& options = {});

}  // namespace tiersim::sim
