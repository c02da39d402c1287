#include "sim/result.hpp"

#include <algorithm>

#include "model/errors.hpp"
#include "sim/workloads/names.hpp"

namespace tiersim::sim {

ResourceUsage usage_from_name(std::string name, std::string unit, double busy_s,
                              double utilization) {
  const auto id = parse_resource_name(name);
  if (!id) throw ModelError("unknown resource name '" + name + "' in stored results");
  ResourceUsage u{id->kind->role, std::move(name), std::move(unit), busy_s, utilization};
  // Storage keeps busy time only: the work counts at full dynamic power, all of it unstaged.
  u.load_s = busy_s;
  u.busy_by_stage_s[static_cast<std::size_t>(Stage::kNone)] = busy_s;
  u.load_by_stage_s[static_cast<std::size_t>(Stage::kNone)] = busy_s;
  return u;
}

const Metric* find_metric_in(const std::vector<Metric>& metrics, std::string_view name) {
  for (const auto& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
}

std::optional<double> metric_if(const std::vector<Metric>& metrics, std::string_view name) {
  if (const Metric* m = find_metric_in(metrics, name)) return m->value;
  return std::nullopt;
}

double metric_value(const std::vector<Metric>& metrics, std::string_view name) {
  if (const Metric* m = find_metric_in(metrics, name)) return m->value;
  throw MissingMetric("the run reported no metric '" + std::string(name) + "'");
}

void RunResult::set(const MetricDecl& decl, double value) {
  for (auto& m : metrics)
    if (m.name == decl.name) {
      m.value = value;
      m.unit = decl.unit;
      return;
    }
  // An inference run with energy and cost reports 43 metrics: room for them at the first, rather
  // than growing the vector (moving every name and unit) seven times on each sweep point.
  if (metrics.empty()) metrics.reserve(64);
  metrics.push_back({std::string(decl.name), value, std::string(decl.unit)});
}

TimelineSpan timeline_span(std::string resource, Activity activity, double start_s, double end_s,
                           int phase, int item) {
  return TimelineSpan{
      std::move(resource), to_string(activity), start_s, end_s, phase, item, activity};
}

double bytes_moved(const RunResult& result, ResourceRole role) {
  double bytes = 0;
  for (const auto& u : result.utilization)
    if (u.role == role && u.unit == to_string(WorkUnit::kBytes)) bytes += u.amount;
  return bytes;
}

void collect_usage(const Engine& engine, double makespan_s, RunResult& result) {
  result.utilization.clear();
  double best = -1;
  for (const auto& r : engine.resources()) {
    ResourceUsage u;
    u.name = r->name();
    u.unit = to_string(r->unit());
    u.role = r->role();
    u.busy_s = r->busy_s();
    u.load_s = r->load_s();
    u.amount = r->amount();
    for (std::size_t i = 0; i < kStageCount; ++i) {
      u.busy_by_stage_s[i] = r->busy_s(static_cast<Stage>(i));
      u.load_by_stage_s[i] = r->load_s(static_cast<Stage>(i));
    }
    u.utilization =
        makespan_s > 0 ? std::min(1.0, r->busy_s() / (r->channels() * makespan_s)) : 0.0;
    if (u.utilization > best) {
      best = u.utilization;
      result.bottleneck = u.name;
    }
    result.utilization.push_back(u);
  }
  result.events = engine.events_processed();
  if (engine.spans_kept()) {
    result.phases = time_breakdown(engine, makespan_s);
    std::erase_if(result.metrics, [](const Metric& m) { return is_phase_metric_name(m.name); });
    for (const PhaseTime& p : result.phases)
      result.metrics.push_back(
          {phase_metric_name(p), p.path_s, std::string(metric::kPhaseS.unit)});
  }
  if (engine.tracing()) {
    result.timeline.clear();
    result.timeline.reserve(engine.trace().size());
    for (const auto& s : engine.trace())
      result.timeline.push_back({engine.resources()[static_cast<std::size_t>(s.resource)]->name(),
                                 to_string(s.activity), s.start_s, s.end_s, s.phase, s.item,
                                 s.activity});
    // In time order: a process that reserves ahead (Engine::reserve_from) records a span when it
    // reserves it, which need not be when it starts.
    std::stable_sort(
        result.timeline.begin(), result.timeline.end(),
        [](const TimelineSpan& a, const TimelineSpan& b) { return a.start_s < b.start_s; });
  }
}

}  // namespace tiersim::sim
