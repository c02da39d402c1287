#pragma once
// Serialisations of a result: the --json object, the human table and the Chrome trace-event file.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "model/scenario.hpp"
#include "sim/result.hpp"

namespace tiersim::reports {

// `j` as text (indent -1: one line). A string that is not valid UTF-8 (a name read from a file)
// comes out with U+FFFD in place of the bad bytes; nlohmann::json's default would throw.
std::string json_text(const nlohmann::json& j, int indent = -1);

// One object: scenario name/hash, fits, memory per tier, every metric at top level (name: value),
// units, bottleneck, utilization per resource.
nlohmann::json to_json(const Scenario& scenario, const sim::RunResult& result);

// A short table for people.
void print_human(std::ostream& os, const Scenario& scenario, const sim::RunResult& result);

// Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one track per resource,
// one complete event per busy interval, times in microseconds.
void write_chrome_trace(std::ostream& os, const Scenario& scenario, const sim::RunResult& result);

}  // namespace tiersim::reports
