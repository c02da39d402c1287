#pragma once
// The studies as the `tiersim` program runs them, from its flags to its results: one request
// struct per command (its options, with the command's defaults) and one function that checks
// them and runs the study. app/cmd_<name>.cpp fills a request from its command line, the Python
// module (python/bindings.cpp) from keyword arguments; both then print the same JSON
// (reports/study_json.hpp). So the checks, defaults and order of work of a study live here once,
// and a notebook and the command line cannot disagree.
//
// Every request has `stop`: set by another thread (the Python module's Ctrl-C), the study stops
// between simulations (and inside one where the engine polls it) and throws Interrupted.
//
// A new study adds a request/outcome pair and a run_ function here, its JSON function in
// reports/study_json.hpp, a binding in python/bindings.cpp with its wrapper in
// python/tiersim/__init__.py, and a case in tests/python/studies_test.py.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/compare_file.hpp"
#include "model/files.hpp"
#include "model/scenario.hpp"
#include "model/training_memory.hpp"
#include "sim/result.hpp"
#include "study/accuracy.hpp"
#include "study/fit_search.hpp"
#include "study/planner.hpp"
#include "study/sensitivity.hpp"
#include "study/serving_capacity.hpp"
#include "study/sweep.hpp"
#include "study/validation.hpp"
#include "study/whatif.hpp"

namespace tiersim::studies {

// Throws Interrupted ("<what> interrupted") when `stop` is set.
void check_stop(const std::atomic<bool>* stop, const std::string& what);

// ---- run: one scenario ----

// Under a refusal (the run does not fit), the closest configurations the capacity model says fit
// (study/fit_search.hpp), without simulating them; empty when it fits.
std::vector<fit::Suggestion> closest_fits(const Scenario& scenario, const sim::RunResult& result,
                                          const ExecutionModel& exec = {});

// ---- compare: several configurations side by side ----

struct CompareRequest {
  config::Comparison comparison;  // config::read_compare_inputs (files) or built from text
  std::vector<std::string> sets;  // --set, applied to every configuration
  std::string data_dir;
  std::string db;            // store every result here (empty: none)
  std::string tool_version;  // stored with each run
  const std::atomic<bool>* stop = nullptr;
};

// One configuration of a comparison, after its run.
struct CompareRow {
  std::string name;  // the variant's name, else its scenario's
  std::string note;
  std::optional<Scenario> scenario;
  sim::RunResult result;
  std::string error;  // the model could not simulate it (message); the others still run
  // What the validation says of it (study/accuracy.hpp); nullopt without a scenario or without
  // the data folder's validation/accuracy.json.
  std::optional<validation::RunAccuracy> accuracy;
};

struct CompareOutcome {
  config::Comparison comparison;
  std::vector<CompareRow> rows;  // the baseline first
  bool failed = false;           // some configuration could not be simulated
};

CompareOutcome run_compare(const CompareRequest& request);

// ---- capacity: largest trainable model per ZeRO strategy, or a serving rate search ----

struct CapacityRequest {
  std::string file;
  std::vector<std::string> sets;
  std::string data_dir;
  capacity::SearchOptions search;  // serving: --attainment, --tolerance, --start, --no-*
  std::string db;                  // serving: store every rate tried (sweep "capacity:NAME")
  std::string tool_version;
  // Serving: called after each rate (the command's progress lines).
  std::function<void(const capacity::RatePoint&)> on_point;
  const std::atomic<bool>* stop = nullptr;
};

// One ZeRO strategy of a training scenario.
struct StrategyCapacity {
  std::string strategy;
  bool no_nvme = false;  // the strategy puts states on NVMe and the scenario has no drives
  CapacitySearch search;
};

struct CapacityOutcome {
  Scenario base;
  bool serving = false;
  // Serving: the search, and its points ordered by rate.
  capacity::ServingCapacity rates;
  std::vector<std::size_t> by_rate;  // indices into rates.points, lowest rate first
  std::string store_sweep;           // the sweep name runs were stored under
  // Serving refused for memory at every rate: the closest configurations that fit.
  std::vector<fit::Suggestion> closest;
  // Training: one row per strategy, in model/training_memory.hpp's order.
  std::vector<StrategyCapacity> strategies;
};

CapacityOutcome run_capacity(const CapacityRequest& request);

// ---- plan: the best configurations meeting constraints, and the Pareto front ----

struct PlanRequest {
  std::string file;
  std::string out_dir;  // empty: "<plan name>-plan"
  std::string db;       // store every simulated point under the plan's name
  std::string data_dir;
  std::string tool_version;
  int threads = 0;
  bool prune = true;
  OutputOptions output;  // --force
  // After each batch of simulations: the plan's name, points simulated, points still queued.
  std::function<void(const std::string& plan, std::size_t simulated, std::size_t queued)>
      on_progress;
  const std::atomic<bool>* stop = nullptr;
};

struct PlanOutcome {
  plan::PlanSpec spec;
  plan::PlanResult result;
  std::string out_dir;
  std::vector<std::string> shown_metrics;  // the objective, constraint and Pareto metrics
  // The resolved scenario written for each best and each Pareto point, in their order.
  std::vector<std::string> best_files, pareto_files;
  // What the validation says of each best and each Pareto point (study/accuracy.hpp), in their
  // order; nullopt without the data folder's validation/accuracy.json.
  std::vector<std::optional<validation::RunAccuracy>> best_accuracy, pareto_accuracy;
};

// A plan metric as people read it in the table, the manifest and the written files' comments
// (format::quantity by the metric's unit: "$91,820", "2.1 requests/s"), "-" when absent.
std::string plan_metric_text(const std::string& metric, std::optional<double> value);

// Runs the plan and writes every best and Pareto configuration as a resolved scenario file that
// `tiersim run` reproduces (none when no configuration meets the constraints).
PlanOutcome run_plan(const PlanRequest& request);

// ---- sensitivity: the tornado table of each configuration ----

struct SensitivityRequest {
  config::Comparison comparison;
  std::string metric = std::string(sim::metric::kUsdPerMillionTokens.name);
  double range = 0.2;                 // each input at (1 - range) and (1 + range)
  std::vector<std::string> inputs;    // KEY or KEY=LOW:HIGH; empty: the default list
  std::vector<std::string> variants;  // only these variants (empty: all)
  std::vector<std::string> sets;
  std::string data_dir;
  int threads = 0;
  const std::atomic<bool>* stop = nullptr;
};

struct SensitivityOutcome {
  std::string metric;
  double range = 0.2;
  std::vector<sensitivity::Tornado> tornadoes;
};

SensitivityOutcome run_sensitivity(const SensitivityRequest& request);

// ---- breakeven: the value of one input at which two configurations tie ----

struct BreakEvenRequest {
  config::Comparison comparison;
  std::string key;                                   // --vary
  std::optional<std::pair<double, double>> between;  // --between LOW HIGH
  std::vector<std::string> variants;                 // --variants A B (empty: the first two)
  std::string metric = std::string(sim::metric::kUsdPerMillionTokens.name);
  std::string sense;  // "minimize", "maximize" or "" (known for the common metrics)
  int points = 9;
  std::vector<std::string> sets;
  std::string data_dir;
  const std::atomic<bool>* stop = nullptr;
};

struct BreakEvenOutcome {
  sensitivity::BreakEven result;
  plan::Sense sense = plan::Sense::kMinimize;
};

BreakEvenOutcome run_breakeven(const BreakEvenRequest& request);

// ---- whatif: the nearest assumptions under which one configuration beats another ----

struct WhatIfRequest {
  config::Comparison comparison;
  std::vector<std::string> variants;  // --variants A B (empty: the first two)
  double ratio = 1;                   // --ratio R: A should beat B by this factor (> 0)
  std::string metric = "return_per_dollar";
  std::string sense;  // "minimize", "maximize" or "" (known for the common metrics)
  // --vary, --vary-a, --vary-b: "KEY", "KEY=LOW:HIGH" or, for a choice key, "KEY=V1,V2"; all
  // empty: whatif::default_inputs().
  std::vector<std::string> vary, vary_a, vary_b;
  int points = 7;         // --points: values of each input scanned alone, ends included
  int max_points = 3000;  // --max-points: points evaluated at most
  std::vector<std::string> sets;
  std::string data_dir;
  int threads = 0;
  // After each batch of points (the command's progress line).
  std::function<void(const whatif::Progress&)> on_progress;
  // Ctrl-C: the search stops and the outcome holds what was found (result.interrupted); it does
  // not throw, so that the command can print the partial answer.
  const std::atomic<bool>* stop = nullptr;
};

struct WhatIfOutcome {
  whatif::Result result;
  // The search's options as run (for whatif::method_text); without the catalog, the stop flag and
  // the progress callback, which do not outlive run_whatif.
  whatif::Options options;
};

WhatIfOutcome run_whatif(const WhatIfRequest& request);

// ---- validate: predictions against the published reference measurements ----

struct ValidateRequest {
  std::string dir;  // reference scenarios (empty: <data>/reference)
  std::string data_dir;
  const std::atomic<bool>* stop = nullptr;
};

validation::ValidationSummary run_validate(const ValidateRequest& request);

}  // namespace tiersim::studies
