#include "sim/breakdown.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
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

// Whether two intervals the walk's order does not tell apart were taken for different work: then
// which one a sort puts first is unspecified, so only the sort itself can say which the walk
// charges.
bool ambiguous(const SpanLog& log, std::uint32_t a, std::uint32_t b) {
  const SpanLog::Slot& x = log.slots()[log[a].slot];
  const SpanLog::Slot& y = log.slots()[log[b].slot];
  return x.stage != y.stage || !(x.activity == y.activity);
}

// The intervals the walk charges, latest first, by their index in the log: from t = makespan
// back, each time the first interval in walks_first order that ends by t (everything after t is
// explained), then t = its start.
std::vector<std::uint32_t> walk_sorted(const SpanLog& log, double makespan_s) {
  struct Keyed {
    WalkKey key;
    std::uint32_t index;
  };
  std::vector<Keyed> all;
  all.reserve(log.size());
  for (std::size_t i = 0; i < log.size(); ++i) {
    const WalkKey k = log.key(i, makespan_s);
    if (k.end_s > k.start_s) all.push_back({k, static_cast<std::uint32_t>(i)});
  }
  std::sort(all.begin(), all.end(),
            [](const Keyed& a, const Keyed& b) { return walks_first(a.key, b.key); });
  std::vector<std::uint32_t> path;
  double t = makespan_s;
  for (const Keyed& v : all) {
    if (t <= 0) break;
    if (v.key.end_s > t) continue;  // ends after t: not a predecessor
    path.push_back(v.index);
    t = v.key.start_s;
  }
  return path;
}

// The same walk without sorting every interval: a resource channel's intervals are recorded one
// after the other, so each channel's list is already in walk order backwards (SpanLog's links),
// and the walk only needs, at each step, the latest interval of each channel that ends by t: a
// head per channel, which only moves back. Sorting the tens of thousands of intervals of a run
// was most of `tiersim run`'s time, and then linking them here still most of the breakdown's.
// nullopt where a channel's intervals are not in strict walk order (no two on one channel tie),
// or the walk meets two intervals only a sort can order: then walk_sorted.
std::optional<std::vector<std::uint32_t>> walk_channels(const SpanLog& log, double makespan_s) {
  // A run with many channels (hundreds of GPUs) would scan them all at every step: sort instead.
  constexpr std::size_t kMaxChannels = 64;
  if (!log.in_order() || log.channels().size() > kMaxChannels) return std::nullopt;
  constexpr std::uint32_t kNone = SpanLog::kNone;
  struct Head {
    WalkKey key;  // of `index`, its end clipped to the makespan
    std::uint32_t index;
  };
  // Moves `h` back along its channel from interval i to the first that ends by t (its end clipped
  // to the makespan) and is not clipped away; false when none is left.
  const auto seek = [&](Head& h, std::uint32_t i, double t) {
    for (; i != kNone; i = log[i].before) {
      const SpanLog::Interval& s = log[i];
      const double end_s = std::min(s.end_s, makespan_s);
      if (end_s <= t && end_s > s.start_s) {
        h.key.end_s = end_s;
        h.key.start_s = s.start_s;
        h.key.work_s = s.work_s;
        h.index = i;
        return true;
      }
    }
    return false;
  };
  std::vector<Head> heads;
  heads.reserve(log.channels().size());
  for (const SpanLog::Channel& c : log.channels()) {
    // The log checked the order with the recorded ends; the intervals that end after the
    // makespan all end at it once clipped, and the rest of the order must still hold.
    std::optional<WalkKey> later;
    for (std::uint32_t i = c.latest; i != kNone; i = log[i].before) {
      const WalkKey k = log.key(i, makespan_s);
      if (k.end_s <= k.start_s) continue;  // clipped away
      if (later && !walks_first(*later, k)) return std::nullopt;
      later = k;
      if (log[i].end_s <= makespan_s) break;
    }
    Head h{{0, 0, 0, c.resource}, kNone};
    if (seek(h, c.latest, makespan_s)) heads.push_back(h);
  }
  // At most every interval, and only the pages it fills are touched: no copies as it grows.
  std::vector<std::uint32_t> path;
  path.reserve(log.size());
  double t = makespan_s;
  while (t > 0 && !heads.empty()) {
    Head* best = nullptr;
    // Whether a head ties with `best` for other work. An interval that ties with the one taken is
    // the latest by t of another channel (no two of one channel tie); one that tied with an
    // earlier best comes after the one that beat it.
    bool tied = false;
    for (std::size_t j = 0; j < heads.size();) {
      Head& h = heads[j];
      // Ends after t: never a predecessor again.
      if (h.key.end_s > t && !seek(h, log[h.index].before, t)) {
        h = heads.back();  // this channel has nothing left by t
        heads.pop_back();
        continue;
      }
      if (!best || walks_first(h.key, best->key)) {
        best = &h;
        tied = false;
      } else if (!walks_first(best->key, h.key) && ambiguous(log, h.index, best->index)) {
        tied = true;
      }
      ++j;
    }
    if (!best) break;
    if (tied) return std::nullopt;
    path.push_back(best->index);
    t = best->key.start_s;
  }
  return path;
}

}  // namespace

double phases_span_s(const std::vector<PhaseTime>& phases) {
  double s = 0;
  for (const PhaseTime& p : phases) s += p.path_s;
  return s;
}

std::vector<PhaseTime> time_breakdown(const Engine& engine, double makespan_s) {
  if (!engine.spans_kept() || makespan_s <= 0) return {};
  const SpanLog& log = engine.spans();
  std::map<PhaseKey, Accumulated> phases;
  const auto phase = [&](Stage stage, bool waiting, Activity activity) -> Accumulated& {
    Accumulated& a = phases[key_of(stage, waiting, activity)];
    a.stage = stage;
    a.waiting = waiting;
    a.activity = waiting ? Activity{} : activity;
    return a;
  };
  // Each slot of the log (an activity and stage on one resource) is one phase's work on one
  // resource: its busy seconds were summed as the spans were recorded.
  struct SlotPhase {
    Accumulated* phase;
    double* path_s;  // phase->path_by_resource[resource], created at the first path use
  };
  std::vector<SlotPhase> slot_phase;
  slot_phase.reserve(log.slots().size());
  for (const SpanLog::Slot& x : log.slots()) {
    Accumulated& a = phase(x.stage, false, x.activity);
    a.busy_by_resource[x.resource] += x.busy_s;
    slot_phase.push_back({&a, nullptr});
  }

  // The walk: t is the moment explained so far (everything after it is charged).
  std::optional<std::vector<std::uint32_t>> walked = walk_channels(log, makespan_s);
  const std::vector<std::uint32_t> path =
      walked ? std::move(*walked) : walk_sorted(log, makespan_s);
  // The waiting phase of each stage, looked up once.
  std::array<Accumulated*, kStageCount> waits{};
  const auto waiting = [&](Stage stage) -> Accumulated& {
    Accumulated*& w = waits[static_cast<std::size_t>(stage)];
    if (!w) w = &phase(stage, true, {});
    return *w;
  };
  const auto stage_of = [&](std::uint32_t index) { return log.slots()[log[index].slot].stage; };
  // A gap shorter than this is the rounding of sums of times, not a wait: a part booked to
  // start where the one before it ends lands a few ulps away from it.
  constexpr double kRoundingGap_s = 1e-9;
  double t = makespan_s;
  Stage last_stage = path.empty() ? Stage::kNone : stage_of(path.front());
  for (const std::uint32_t index : path) {
    const WalkKey i = log.key(index, makespan_s);
    if (i.end_s < t - kRoundingGap_s) waiting(last_stage).path_s += t - i.end_s;
    SlotPhase& x = slot_phase[log[index].slot];
    if (!x.path_s) x.path_s = &x.phase->path_by_resource[i.resource];
    const double d = i.end_s - i.start_s;
    x.phase->path_s += d;
    *x.path_s += d;
    last_stage = stage_of(index);
    t = i.start_s;
  }
  if (t > 0) waiting(last_stage).path_s += t;

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
