#pragma once
// The policy keys that FlexGen's own policy (policy.flexgen) replaces under policy.schedule:
// flexgen. The scenario loader leaves them out of such a scenario's resolved YAML, and the
// inference workload's checks (checks.cpp) reject them when given.
#include <string_view>

namespace tiersim::config {

inline constexpr std::string_view kFlexGenReplacedKeys[] = {
    "policy.weights",     "policy.kv_cache",   "policy.weight_bits",     "policy.kv_bits",
    "policy.gpu_batches", "policy.pin_memory", "policy.prefetch_layers", "policy.io_path"};

}  // namespace tiersim::config
