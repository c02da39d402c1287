#pragma once
// Where the inputs of a scenario's power and cost numbers came from. It lives in config/, not next
// to the energy model in sim/, because telling a default from a given value needs the option
// table (config/options.hpp): sim/ does not depend on config/.
#include <nlohmann/json.hpp>

#include "model/scenario.hpp"

namespace tiersim::config {

// Where the inputs of the power and cost numbers came from: {"prices": {gpu, platform,
// dram_per_gb, drive: {usd, date, source}}, "power": {key: {value, unit, source}}, "economics":
// {key: {value, unit, source}}}. Only components in use are listed.
nlohmann::json economics_sources(const Scenario& scenario);

}  // namespace tiersim::config
