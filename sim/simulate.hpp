#pragma once
// The thin public entry point of the simulator: one resolved scenario in, one result out.
#include <atomic>
#include <string>
#include <vector>

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

// simulate() in its two steps, for studies that simulate many scenarios (study/planner.cpp):
// the workload's run alone, then energy and cost on it. finish_run(s, run_workload(s)) is
// simulate(s).
RunResult run_workload(const Scenario& scenario, const SimOptions& options = {});
RunResult finish_run(const Scenario& scenario, RunResult workload_result);

// The scenario keys the workload's run reads only through its memory capacity report, for this
// scenario (WorkloadOps::capacity_only_keys; none for most workloads). Scenarios that differ in
// these keys alone get the same run but for that report, so a study may run the workload once
// for all of them (simulate_like).
std::vector<std::string> capacity_only_keys(const Scenario& scenario);

// simulate(scenario), given `twin`: run_workload of a scenario that differs from `scenario` only
// in capacity_only_keys(scenario), with the same options. The twin's run with this scenario's
// own capacity report, then this scenario's energy and cost: bit for bit what simulate() gives
// (tests/sim/simulate_test.cpp), without running the workload again. A twin that does not fit
// says nothing about this scenario's run, which is then simulated.
RunResult simulate_like(const Scenario& scenario, const RunResult& twin,
                        const SimOptions& options = {});

}  // namespace tiersim::sim
