#pragma once
// The tables of sweeps (`sweeps`, `sweep_failures`) and the per-sweep queries of `runs`: what
// `tiersim sweep` and `plan` record besides the runs themselves (study/sweep.cpp SweepStore keeps
// the batching and the rules; every statement is here).
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "store/sqlite.hpp"

namespace tiersim::store {

struct SweepDefinition {
  std::string name;
  std::string file;         // the sweep file's name (no folder)
  std::string description;
  std::string definition;   // the file's text: an edited grid is a different sweep
};

// The stored definition of the sweep called `name`; nullopt when none is stored.
std::optional<std::string> stored_sweep_definition(Database& db, const std::string& name);
// Runs stored under the sweep called `sweep`.
std::int64_t sweep_run_count(Database& db, const std::string& sweep);
// Failures (invalid points) recorded for it.
std::int64_t sweep_failure_count(Database& db, const std::string& sweep);
// Records that the sweep starts now with `points` points (replacing a stored row of that name
// and clearing its failures, which every run evaluates again).
void start_sweep(Database& db, const SweepDefinition& sweep, std::int64_t points,
                 const std::string& tool_version);
void finish_sweep(Database& db, const std::string& sweep);
// The scenario hashes of the runs stored under the sweep.
std::unordered_set<std::string> sweep_run_hashes(Database& db, const std::string& sweep);
// Records (or replaces) why the point labelled `point` could not be simulated.
void record_sweep_failure(Database& db, const std::string& sweep, const std::string& point,
                          const std::string& scenario_hash, const std::string& reason);

// What a plan decided about one of its points (`plan_verdicts`): "feasible", "rejected" (simulated,
// and it does not fit or misses a constraint or the capacity search), "pruned" (rejected without
// simulation: capacity, budget or an optimistic bound) or "equivalent" (the same resolved scenario
// as another point), with the reason.
struct PlanVerdict {
  std::string point;  // its axis values, as the plan labels it
  std::string scenario_hash;
  std::string status;
  std::string reason;
};
// Forgets the verdicts of the plan called `sweep` (a new run of it decides again).
void clear_plan_verdicts(Database& db, const std::string& sweep);
void record_plan_verdict(Database& db, const std::string& sweep, const PlanVerdict& v);
// The verdicts of the plan called `sweep` (all plans when ""), in the order recorded; none from a
// file written before sweeps schema version 2 or without sweeps.
std::vector<PlanVerdict> plan_verdicts(Database& db, const std::string& sweep);

}  // namespace tiersim::store
