#include "sim/result.hpp"

#include <algorithm>

namespace tiersim::sim {

void collect_usage(const Engine& engine, double makespan_s, RunResult& result) {
  result.utilization.clear();
  double best = -1;
  for (const auto& r : engine.resources()) {
    ResourceUsage u;
    u.name = r->name();
    u.unit = r->unit();
    u.busy_s = r->busy_s();
    u.utilization =
        makespan_s > 0 ? std::min(1.0, r->busy_s() / (r->channels() * makespan_s)) : 0.0;
    if (u.utilization > best) {
      best = u.utilization;
      result.bottleneck = u.name;
    }
    result.utilization.push_back(u);
  }
  result.events = engine.events_processed();
  if (engine.tracing()) {
    result.timeline.clear();
    result.timeline.reserve(engine.trace().size());
    for (const auto& s : engine.trace())
      result.timeline.push_back({engine.resources()[static_cast<std::size_t>(s.resource)]->name(),
                                 s.label, s.start_s, s.end_s, s.phase, s.item});
  }
}

}  // namespace tiersim::sim
