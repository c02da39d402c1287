#pragma once
// Serialisations of a result: the --json object, the human table and the Chrome trace-event file.
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "model/scenario.hpp"
#include "reports/decision.hpp"
#include "sim/result.hpp"
#include "study/accuracy.hpp"
#include "study/fit_search.hpp"

namespace tiersim::reports {

// `j` as text (indent -1: one line). A string that is not valid UTF-8 (a name read from a file)
// comes out with U+FFFD in place of the bad bytes; nlohmann::json's default would throw.
std::string json_text(const nlohmann::json& j, int indent = -1);

// One object: scenario name/hash, fits, memory per tier, every metric at top level (name: value),
// units, bottleneck, utilization per resource.
nlohmann::json to_json(const Scenario& scenario, const sim::RunResult& result);

// The bands of a run's energy and power metrics (RunAccuracy::node_energy, gpu_energy): the node
// at its AC input, then the GPUs' own.
struct EnergyBands {
  ErrorBand node, gpu;
};

// A short table for people; with `band`, its error band on the line after the memory, and with
// `energy` the bands of its energy metrics below it.
void print_human(std::ostream& os, const Scenario& scenario, const sim::RunResult& result,
                 const ErrorBand* band = nullptr, const EnergyBands* energy = nullptr);

// The closest configurations that fit (study/fit_search.hpp), each with the --set overrides that
// make it; nothing when there are none.
void print_closest_fits(std::ostream& os, const std::vector<fit::Suggestion>& closest);

// What the validation says of a run (study/accuracy.hpp): the error band of its validation group
// and the parts of it no published row anchors; nullopt (no accuracy file) gives a band with
// validation_run false.
ErrorBand error_band(const std::optional<validation::RunAccuracy>& accuracy);
// What the validation says of `scenario`, from <data_dir>/validation/accuracy.json ("" = the
// default data folder); nullopt when that file is missing, ConfigError when it is malformed.
std::optional<validation::RunAccuracy> run_accuracy_of(const Scenario& scenario,
                                                       const std::string& data_dir);
// The bands of the run's energy and power metrics; nullopt without the accuracy file or when
// the run has no energy metrics.
std::optional<EnergyBands> energy_bands(const std::optional<validation::RunAccuracy>& accuracy,
                                        const sim::RunResult& result);

// The band for people, one line: "+-9.5 % (out-of-sample validation error of group ...)".
std::string accuracy_text(const ErrorBand& band);
// The energy bands for people: "energy and power at the wall +-18.6 % prov., 4 rows (group
// system energy); the GPUs' own +-5.5 % (group energy)".
std::string energy_accuracy_text(const EnergyBands& bands);

// The band in run --json: group, error_band_pct (null without a band), in_sample_pct,
// published_rows, provisional, unvalidated and the text; with `energy`, an "energy" object of
// the two energy bands ("node", "gpu") in the same form.
nlohmann::json accuracy_json(const ErrorBand& band, const EnergyBands* energy = nullptr);

// The time breakdown (sim/breakdown.hpp) for people: one row per phase, largest first, with its
// critical-path time, its share of the run, its busy time and its bottleneck resource. At most
// `max_rows` rows (0: all), the rest summed into one; then each stage's part where there are
// several ("by stage: prefill 301.1 s (79.6%), decode 77.37 s (20.4%)"). Nothing when the run
// has no phases.
void print_breakdown(std::ostream& os, const sim::RunResult& result, std::size_t max_rows = 0,
                     const std::string& indent = "  ");

// A served request's time by part, for runs that report request latencies (serving): the means
// of queueing (arrival to its first iteration), of its first iteration to its first token, and
// of the decode after it, which add up to the mean end-to-end latency (means of differences are
// differences of means). "" for other runs.
std::string request_split(const sim::RunResult& result);

// The `phases` array of run --json and compare --json: per phase its stage, activity, label,
// metric name, path_s, share of total_s, busy_s, bottleneck and bottleneck_label.
nlohmann::json breakdown_json(const sim::RunResult& result);

// Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one track per resource,
// one complete event per busy interval, times in microseconds.
void write_chrome_trace(std::ostream& os, const Scenario& scenario, const sim::RunResult& result);

}  // namespace tiersim::reports
