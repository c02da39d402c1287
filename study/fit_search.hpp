#pragma once
// When an inference, training or serving scenario does not fit, the closest configurations that
// do: the largest batch (training: global batch), the smallest host DRAM, the fewest GPUs
// (inference: more pipeline stages, or more ZeRO-Inference data-parallel ranks; serving: a wider
// tensor-parallel degree for each replica) and, for training without it, activation
// checkpointing; each found by a bounded search over the capacity model (model/capacity.hpp
// inference_capacity, model/training_memory.hpp training_capacity, or the workload's own check,
// sim/workloads/workload.hpp WorkloadOps::capacity), not by simulation, so a refusal still
// answers what would run. `tiersim run` prints them under a "does not fit".
#include <string>
#include <vector>

#include "model/perf.hpp"
#include "model/scenario.hpp"

namespace tiersim::fit {

struct Suggestion {
  std::string what;               // "largest batch", "smallest DRAM", "fewest GPUs"
  std::vector<std::string> sets;  // --set overrides that make it fit: "workload.batch=136"
  std::string detail;             // what the capacity model says about it
};

// Largest GPU count tried by the fewest-GPUs search (a node's worth and more).
inline constexpr int kMaxGpus = 16;

// Empty when the scenario fits, or is neither a ZeRO training scenario, an inference scenario on
// ZeRO-Inference's or FlexGen's block schedule (FlexGen's own runtime sizes its batch by its
// policy) nor one of a workload with its own memory check (serving). `em` is the execution model
// the simulation uses (with the scenario's stack applied).
std::vector<Suggestion> closest_fits(const Scenario& s, const ExecutionModel& em);

}  // namespace tiersim::fit
