#pragma once
// FlexGen's own runtime on one GPU (policy.schedule: flexgen): its placement, zig-zag block
// schedule with a full synchronisation per (layer, GPU batch) step, CPU attention and disk tier.
// simulate_inference() hands flexgen scenarios to it.
#include "sim/simulate.hpp"

namespace tiersim::sim {

RunResult simulate_flexgen(const Scenario& scenario, const SimOptions& options);

}  // namespace tiersim::sim
