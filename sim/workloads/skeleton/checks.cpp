// The skeleton's load-time checks: none yet. A workload checks here the rules between its keys
// that no single option's range can say (config/scenario_check.hpp), e.g.
//   void check_keys(const ScenarioCheck& c) {
//     if (c.scenario().serving.requests > ...) c.fail("workload.requests", "must ...");
//   }
//   const WorkloadChecks foo_checks{&check_keys, nullptr};
// c.fail reports the file, the line and the key, as for any other error in the scenario file.
#include "config/scenario_check.hpp"

namespace tiersim::config {

const WorkloadChecks skeleton_checks{};

}  // namespace tiersim::config
