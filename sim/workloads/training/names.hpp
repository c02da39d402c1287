#pragma once
// The training workload's own resources and activities (sim/workloads/names.hpp has those it
// shares; its periodic checkpoints use sim/workloads/checkpoint/names.hpp).
#include "sim/workloads/names.hpp"

namespace tiersim::sim {

namespace resource {
// The inter-node network of data-parallel training.
inline constexpr ResourceKind kNetwork{"network", ResourceRole::kNetwork};
}  // namespace resource

namespace activity {
inline constexpr Activity kParamFetchFwd{"param-fetch-fwd"};
inline constexpr Activity kParamFetchBwd{"param-fetch-bwd"};
inline constexpr Activity kReduceScatterGrads{"reduce-scatter-grads"};
inline constexpr Activity kAllreduceGrads{"allreduce-grads"};
inline constexpr Activity kGradOffload{"grad-offload"};
inline constexpr Activity kGradOffloadChecks{"grad-offload-checks"};
inline constexpr Activity kGradSwapOut{"grad-swap-out"};
inline constexpr Activity kOptimizer{"optimizer"};
inline constexpr Activity kOptimSwapIn{"optim-swap-in"};
inline constexpr Activity kGradSwapIn{"grad-swap-in"};
inline constexpr Activity kGradToHost{"grad-to-host"};
inline constexpr Activity kOptimSwapOut{"optim-swap-out"};
inline constexpr Activity kParamUpdate{"param-update"};
inline constexpr Activity kParamSwapOut{"param-swap-out"};
inline constexpr Activity kForward{"forward"};
inline constexpr Activity kBackward{"backward"};
inline constexpr Activity kAllgatherUpdated{"allgather-updated"};
}  // namespace activity

}  // namespace tiersim::sim
