#pragma once
// The one check of a metric name a study is asked for: `--metric` of sensitivity, break-even and
// what-if, a plan's constraints, objective and Pareto goals.
#include <string>
#include <vector>

namespace tiersim::study {

// "" when a run reports `metric` (sim/metrics.hpp declares every one) or `also_known` names it
// (metrics a study works out itself); else what is wrong, with the nearest known name:
// "unknown metric (did you mean 'usd_per_million_tokens'?) (tiersim schema --metrics lists them)".
std::string unknown_metric_text(const std::string& metric,
                                const std::vector<std::string>& also_known = {});

}  // namespace tiersim::study
