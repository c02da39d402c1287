#pragma once
// The checkpoint writer's load-time rules, shared with the training workload, whose scenarios
// take the writer keys too (checkpoint/options.cpp).
#include "config/scenario_check.hpp"

namespace tiersim::config {

// workload.writer and workload.serialization together.
void check_checkpoint_writer(const ScenarioCheck& check);

// The storage target a checkpoint is written to (workload.target): local_nvme needs drives, a
// network target its rates. `needed_by` is the key that makes the scenario write checkpoints
// (named when the target's own keys were left at their defaults).
void check_checkpoint_target(const ScenarioCheck& check, const char* needed_by);

}  // namespace tiersim::config
