// The skeleton's load-time checks: none yet. A workload checks here the rules between its keys
// that no single option's range can say (config/scenario_check.hpp), e.g.
//   void check_keys(const ScenarioCheck& c) {
//     if (c.scenario().serving.requests > ...) c.fail("workload.requests", "must ...");
//   }
//   const WorkloadChecks foo_checks{&check_keys, nullptr};
// c.fail reports the file, the line and the key, as for any other error in the scenario file.
// c.warn(key, message) is for a valid input whose results may not mean what they seem: the run
// goes on and prints the message among the notes on its inputs (serving/checks.cpp warns of a
// token budget that holds the in-flight batch below max_batch).
#include "config/scenario_check.hpp"

namespace tiersim::config {

const WorkloadChecks skeleton_checks{};

}  // namespace tiersim::config
