#pragma once
// Whether two runs have the same timings: every metric in seconds or per second equal, bit for
// bit (the simulator is deterministic, so hardware a run does not touch, such as drives when the
// weights are on the GPU, changes none of them). The one rule by which the planner's best list
// (study/planner.cpp) and the report's entries (reports/entries.hpp) list such configurations once.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "sim/result.hpp"

namespace tiersim::sim {

inline bool is_timing_metric(const Metric& m) {
  return m.unit == "s" || m.unit == "tokens/s" || m.unit == "requests/s";
}

// False when either run has no timing metric (a run that does not fit reports none).
inline bool same_timings(const std::vector<Metric>& a, const std::vector<Metric>& b) {
  std::size_t na = 0;
  for (const auto& m : a) {
    if (!is_timing_metric(m)) continue;
    ++na;
    const auto v = metric_if(b, m.name);
    if (!v || *v != m.value) return false;
  }
  const auto nb = static_cast<std::size_t>(std::count_if(b.begin(), b.end(), is_timing_metric));
  return na > 0 && na == nb;
}

}  // namespace tiersim::sim
