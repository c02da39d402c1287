#pragma once
// Data-parallel training with ZeRO (stages 0-3) and ZeRO-Offload / ZeRO-Infinity placement of
// parameters, gradients and optimizer states on the event engine. One representative rank is
// simulated (ranks are symmetric); the node's shared resources (host CPUs, the NVMe array, the
// network) are whole-node resources that the representative rank's traffic is scaled onto.
#include "sim/simulate.hpp"

namespace tiersim::sim {

RunResult simulate_training(const Scenario& scenario, const SimOptions& options);

}  // namespace tiersim::sim
