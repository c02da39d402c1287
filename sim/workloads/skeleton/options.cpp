#include "config/option_rows.hpp"

// The skeleton's own options: none yet. A workload declares each scenario key it reads here, as a
// row appended to rows.workload (or rows.policy), e.g.
//   rows.workload.push_back(only(integer("workload.requests", 1, "1000", "requests to serve",
//                                        F(serving.requests)), kServing));
// The row names the Scenario member the value goes to (model/scenario.hpp holds each workload's
// fields), its kind bit keeps it out of every other workload's scenarios, and the loader, --set,
// the resolved YAML and `tiersim schema` all follow from the row.
namespace tiersim::config {

void skeleton_option_rows(WorkloadOptionRows&) {}

}  // namespace tiersim::config
