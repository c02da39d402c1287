#pragma once
// The checkpoint writer's load-time rules, shared with the training workload, whose scenarios
// take the writer keys too (checkpoint/options.cpp).
#include "config/scenario_check.hpp"

namespace tiersim::config {

// workload.writer and workload.serialization together.
void check_checkpoint_writer(const ScenarioCheck& check);

}  // namespace tiersim::config
