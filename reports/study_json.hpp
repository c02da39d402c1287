#pragma once
// The JSON of every study (`tiersim <command> --json`): built here once, from the outcome of the
// study's run function (study/studies.hpp), for the program and for the Python module, which
// returns exactly these objects as dicts and lists. Units are in the key names (_s, _pct,
// _requests_per_s) or in "unit"/"units" beside the values, as in `tiersim run --json`.
#include <nlohmann/json.hpp>
#include <string>

#include "reports/decision.hpp"
#include "store/calibration_points.hpp"
#include "study/studies.hpp"

namespace tiersim::reports {

// `tiersim run --json`: the run (reports/run_output.hpp), under a refusal `closest_fits`, and its
// `accuracy` object, the energy bands included where the run has energy metrics
// (reports/run_output.hpp accuracy_json; nullopt `accuracy`: no accuracy file).
nlohmann::json run_json(const Scenario& scenario, const sim::RunResult& result,
                        const std::vector<fit::Suggestion>& closest,
                        const std::optional<validation::RunAccuracy>& accuracy);

// `tiersim compare --json`.
nlohmann::json compare_json(const studies::CompareOutcome& outcome);
// Where one configuration's prices and power figures came from (`compare --sources`), with the
// DRAM counted as sized to the need when it was (sim/economics.hpp, dram_sizing).
nlohmann::json compare_sources_json(const studies::CompareRow& row);

// `tiersim capacity --json`: the serving rate search (criteria, every rate tried, the run at
// capacity) or, for a training scenario, the largest model per ZeRO strategy.
nlohmann::json capacity_json(const studies::CapacityOutcome& outcome,
                             const capacity::SearchOptions& search);

// `tiersim plan --json`: the stats, the best configurations and the Pareto front, each with its
// metrics, equivalent points and written file.
nlohmann::json plan_json(const studies::PlanOutcome& outcome);

// `tiersim sensitivity --json`.
nlohmann::json sensitivity_json(const studies::SensitivityOutcome& outcome);

// `tiersim breakeven --json`, and the two texts it shares with the table: the better
// configuration at one sample ("tie", or "" when one failed) and the sentence that answers.
nlohmann::json breakeven_json(const studies::BreakEvenOutcome& outcome);
std::string breakeven_better_at(const sensitivity::BreakEvenSample& sample,
                                const sensitivity::BreakEven& be, plan::Sense sense);
std::string breakeven_verdict(const sensitivity::BreakEven& be, plan::Sense sense);

// `tiersim whatif --json`: whatif::to_json of the result (study/whatif.hpp, which documents each
// field).
nlohmann::json whatif_json(const studies::WhatIfOutcome& outcome);

// `tiersim validate --json`; `max_mape_pct` is the limit established groups are held to.
nlohmann::json validation_json(const validation::ValidationSummary& summary, double max_mape_pct);
// How the out-of-sample figure is made, printed with it by validate.
extern const char* const kOutOfSampleMethod;

// `tiersim sweep --json`: what one run of a sweep file did (no wall time: the object is the same
// for the same work).
nlohmann::json sweep_json(const sweep::SweepSummary& summary, const std::string& sweep_name,
                          const std::string& db);

// `tiersim calibrate --point --json`: one measured point (an object; an array of them for a
// mixed point's two directions), bandwidth in GB/s (1e9 bytes/s) and latencies in microseconds.
nlohmann::json calibration_point_json(const store::CalibrationPoint& p);

}  // namespace tiersim::reports
