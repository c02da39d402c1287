#pragma once
// The inference workload (ZeRO-Inference and FlexGen-style offloaded generation). Registered as
// `inference` in sim/workloads/registry.def; simulate() is the usual entry point. The replay
// (replay/replay.cpp) calls it directly for the prediction it compares a real run against.
#include "sim/simulate.hpp"

namespace tiersim::sim {

RunResult simulate_inference(const Scenario& scenario, const SimOptions& options);

}  // namespace tiersim::sim
