#include "sim/breakdown.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

#include "sim/workloads/names.hpp"

namespace tiersim::sim {

namespace {

// A phase's identity: stage, waiting, activity name.
using PhaseKey = std::tuple<int, bool, std::string_view>;

PhaseKey key_of(Stage stage, bool waiting, Activity activity) {
  return {static_cast<int>(stage), waiting, waiting ? std::string_view() : activity.name()};
}

struct Accumulated {
  Stage stage = Stage::kNone;
  Activity activity;
  bool waiting = false;
  double path_s = 0;
  double busy_s = 0;
  std::map<int, double> path_by_resource;  // resource id -> [s] on the critical path
  std::map<int, double> busy_by_resource;  // resource id -> [s] busy
};

std::string metric_activity(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

const char* stage_prefix(Stage stage) {
  switch (stage) {
    case Stage::kPrefill: return "prefill_";
    case Stage::kDecode: return "decode_";
    case Stage::kNone: break;
  }
  return "";
}

}  // namespace

std::vector<PhaseTime> time_breakdown(const Engine& engine, double makespan_s) {
  if (!engine.spans_kept() || makespan_s <= 0) return {};
  std::map<PhaseKey, Accumulated> phases;
  const auto phase = [&](Stage stage, bool waiting, Activity activity) -> Accumulated& {
    Accumulated& a = phases[key_of(stage, waiting, activity)];
    a.stage = stage;
    a.waiting = waiting;
    a.activity = waiting ? Activity{} : activity;
    return a;
  };

  // The intervals within the run, latest end first (the walk goes back in time).
  std::vector<TraceSpan> spans;
  spans.reserve(engine.trace().size());
  for (const TraceSpan& s : engine.trace()) {
    phase(s.stage, false, s.activity).busy_by_resource[s.resource] += s.work_s;
    const double end = std::min(s.end_s, makespan_s);
    if (end > s.start_s) {
      TraceSpan clipped = s;
      clipped.end_s = end;
      spans.push_back(clipped);
    }
  }
  // Latest end first; among equal ends the longest interval, the most work, the first resource.
  std::sort(spans.begin(), spans.end(), [](const TraceSpan& a, const TraceSpan& b) {
    if (a.end_s != b.end_s) return a.end_s > b.end_s;
    if (a.start_s != b.start_s) return a.start_s < b.start_s;
    if (a.work_s != b.work_s) return a.work_s > b.work_s;
    return a.resource < b.resource;
  });

  // The walk: t is the moment explained so far (everything after it is charged).
  double t = makespan_s;
  Stage last_stage = spans.empty() ? Stage::kNone : spans.front().stage;
  std::size_t i = 0;
  while (t > 0) {
    while (i < spans.size() && spans[i].end_s > t) ++i;  // ends after t: not a predecessor
    if (i == spans.size()) {
      phase(last_stage, true, {}).path_s += t;
      break;
    }
    const TraceSpan& s = spans[i];
    if (s.end_s < t) phase(last_stage, true, {}).path_s += t - s.end_s;
    Accumulated& a = phase(s.stage, false, s.activity);
    const double d = s.end_s - s.start_s;
    a.path_s += d;
    a.path_by_resource[s.resource] += d;
    last_stage = s.stage;
    t = s.start_s;
  }

  const auto& resources = engine.resources();
  std::vector<PhaseTime> out;
  for (auto& [key, a] : phases) {
    PhaseTime p;
    p.stage = a.stage;
    p.activity = a.activity;
    p.waiting = a.waiting;
    p.path_s = a.path_s;
    for (const auto& [r, busy] : a.busy_by_resource) p.busy_s += busy;
    // The resource the phase's critical-path time sat on most; off the path, the busiest.
    const auto& by = a.path_by_resource.empty() ? a.busy_by_resource : a.path_by_resource;
    int best = -1;
    double best_s = -1;
    for (const auto& [r, s] : by)
      if (s > best_s) {
        best = r;
        best_s = s;
      }
    if (best >= 0) {
      p.bottleneck = resources[static_cast<std::size_t>(best)]->name();
      p.bottleneck_path_s = a.path_by_resource.empty() ? 0.0 : best_s;
    }
    if (p.path_s > 0 || p.busy_s > 0) out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(), [](const PhaseTime& a, const PhaseTime& b) {
    if (a.path_s != b.path_s) return a.path_s > b.path_s;
    return a.busy_s > b.busy_s;
  });
  return out;
}

std::string phase_metric_name(const PhaseTime& p) {
  const std::string what = p.waiting                 ? std::string("waiting")
                           : *p.activity.name() == '\0' ? std::string("untagged")
                                                        : metric_activity(p.activity.name());
  return std::string("phase_") + stage_prefix(p.stage) + what + "_s";
}

std::optional<PhaseTime> parse_phase_metric_name(std::string_view name) {
  constexpr std::string_view kHead = "phase_", kTail = "_s";
  if (name.size() <= kHead.size() + kTail.size() || name.substr(0, kHead.size()) != kHead ||
      name.substr(name.size() - kTail.size()) != kTail)
    return std::nullopt;
  const std::string_view what =
      name.substr(kHead.size(), name.size() - kHead.size() - kTail.size());
  // The activity part of `rest`, in `stage`.
  const auto read = [](Stage stage, std::string_view rest) -> std::optional<PhaseTime> {
    PhaseTime p;
    p.stage = stage;
    if (rest == "waiting") {
      p.waiting = true;
      return p;
    }
    if (rest == "untagged") return p;
    for (const Activity a : declared_activities())
      if (*a.name() != '\0' && metric_activity(a.name()) == rest) {
        p.activity = a;
        return p;
      }
    return std::nullopt;
  };
  for (const Stage stage : {Stage::kPrefill, Stage::kDecode}) {
    const std::string_view prefix = stage_prefix(stage);
    if (what.substr(0, prefix.size()) == prefix)
      if (auto p = read(stage, what.substr(prefix.size()))) return p;
  }
  return read(Stage::kNone, what);
}

bool is_phase_metric_name(std::string_view name) {
  return parse_phase_metric_name(name).has_value();
}

const char* stage_label(Stage stage) {
  switch (stage) {
    case Stage::kPrefill: return "prefill";
    case Stage::kDecode: return "decode";
    case Stage::kNone: break;
  }
  return "run";
}

std::string phase_label(const PhaseTime& p) {
  if (p.waiting) return "waiting (no resource busy)";
  return activity_label(p.activity.name());
}

}  // namespace tiersim::sim
