#include "sim/breakdown.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
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

// An interval within the run: an interval of the engine's span log, its end clipped to the
// makespan.
struct Interval {
  const SpanLog::Interval* span = nullptr;
  std::uint32_t index = 0;  // in the log
  int resource = 0;
  double start_s = 0;
  double end_s = 0;
};

// The order of the walk: latest end first; among equal ends the longest interval, the most work,
// the first resource.
bool walks_first(const Interval& a, const Interval& b) {
  if (a.end_s != b.end_s) return a.end_s > b.end_s;
  if (a.start_s != b.start_s) return a.start_s < b.start_s;
  if (a.span->work_s != b.span->work_s) return a.span->work_s > b.span->work_s;
  return a.resource < b.resource;
}

// Interval i of the engine's span log.
Interval interval(const SpanLog& log, std::size_t i, double makespan_s) {
  const SpanLog::Interval& s = log[i];
  return {&s, static_cast<std::uint32_t>(i), log.slots()[s.slot].resource, s.start_s,
          std::min(s.end_s, makespan_s)};
}

// Two intervals the walk's order does not tell apart, taken for different work: which one a sort
// puts first is unspecified, so only the sort itself can say which the walk charges.
bool ambiguous(const SpanLog& log, const Interval& a, const Interval& b) {
  if (a.end_s != b.end_s || walks_first(a, b) || walks_first(b, a)) return false;
  const SpanLog::Slot& x = log.slots()[a.span->slot];
  const SpanLog::Slot& y = log.slots()[b.span->slot];
  return x.stage != y.stage || !(x.activity == y.activity);
}

// The intervals the walk charges, latest first, by their index in the log: from t = makespan
// back, each time the first interval in walks_first order that ends by t (everything after t is
// explained), then t = its start.
std::vector<std::uint32_t> walk_sorted(const SpanLog& log, double makespan_s) {
  std::vector<Interval> all;
  all.reserve(log.size());
  for (std::size_t i = 0; i < log.size(); ++i) {
    const Interval v = interval(log, i, makespan_s);
    if (v.end_s > v.start_s) all.push_back(v);
  }
  std::sort(all.begin(), all.end(), walks_first);
  std::vector<std::uint32_t> path;
  double t = makespan_s;
  for (const Interval& v : all) {
    if (t <= 0) break;
    if (v.end_s > t) continue;  // ends after t: not a predecessor
    path.push_back(v.index);
    t = v.start_s;
  }
  return path;
}

// The same walk without sorting every interval: a resource channel's intervals are recorded one
// after the other, so each channel's list is already in walk order backwards, and the walk only
// needs, at each step, the latest interval of each channel that ends by t. Sorting the tens of
// thousands of intervals of a run was most of `tiersim run`'s time. The channels' lists are
// links from each interval to the one before it on its channel (4 bytes an interval: copies of
// the intervals touched megabytes, and page faults cost more than the walk). The log is read
// once, by time_breakdown, which hands each interval to add(). walk() gives nullopt where a
// channel's intervals are not in order (or the walk meets two intervals only a sort can order):
// then walk_sorted.
class ChannelWalk {
 public:
  ChannelWalk(const Engine& engine, double makespan_s)
      : log_(engine.spans()), makespan_s_(makespan_s) {
    const auto& resources = engine.resources();
    first_channel_.assign(resources.size() + 1, 0);
    for (std::size_t r = 0; r < resources.size(); ++r)
      first_channel_[r + 1] =
          first_channel_[r] + static_cast<std::size_t>(resources[r]->channels());
    // A run with many channels (hundreds of GPUs) would scan them all at every step: sort
    // instead.
    constexpr std::size_t kMaxChannels = 64;
    ok_ = first_channel_.back() <= kMaxChannels && log_.size() < kNone;
    if (!ok_) return;
    latest_.assign(first_channel_.back(), kNone);
    before_.resize(log_.size());
  }

  // Interval i of the log, in log order.
  void add(std::size_t i) {
    if (!ok_) return;
    const SpanLog::Interval& s = log_[i];
    if (std::min(s.end_s, makespan_s_) <= s.start_s) return;
    const auto r = static_cast<std::size_t>(log_.slots()[s.slot].resource);
    const auto c = static_cast<std::size_t>(s.channel);
    if (r + 1 >= first_channel_.size() || c >= first_channel_[r + 1] - first_channel_[r]) {
      ok_ = false;
      return;
    }
    std::uint32_t& last = latest_[first_channel_[r] + c];
    if (last != kNone &&
        walks_first(interval(log_, last, makespan_s_), interval(log_, i, makespan_s_))) {
      ok_ = false;  // out of order
      return;
    }
    before_[i] = last;
    last = static_cast<std::uint32_t>(i);
  }

  std::optional<std::vector<std::uint32_t>> walk() {
    if (!ok_) return std::nullopt;
    std::erase(latest_, kNone);  // channels without intervals
    std::vector<std::uint32_t> path;
    double t = makespan_s_;
    while (t > 0) {
      std::uint32_t best = kNone;
      Interval best_v;
      for (std::uint32_t& head : latest_) {
        // Ends after t: never a predecessor again.
        while (head != kNone && std::min(log_[head].end_s, makespan_s_) > t) head = before_[head];
        if (head == kNone) continue;
        const Interval v = interval(log_, head, makespan_s_);
        // Its channel's intervals that tie with it (none, but for equal ends).
        Interval at = v;
        for (std::uint32_t k = before_[head]; k != kNone; k = before_[k]) {
          const Interval prev = interval(log_, k, makespan_s_);
          if (prev.end_s != at.end_s || walks_first(at, prev)) break;
          if (ambiguous(log_, v, prev)) return std::nullopt;
          at = prev;
        }
        if (best != kNone && v.end_s == best_v.end_s && ambiguous(log_, v, best_v))
          return std::nullopt;
        if (best == kNone || walks_first(v, best_v)) {
          best = head;
          best_v = v;
        }
      }
      if (best == kNone) break;
      path.push_back(best);
      t = best_v.start_s;
    }
    return path;
  }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  const SpanLog& log_;
  double makespan_s_;
  bool ok_ = false;
  std::vector<std::size_t> first_channel_;  // per resource, its first channel's number
  std::vector<std::uint32_t> latest_;       // per channel, its latest interval so far
  std::vector<std::uint32_t> before_;       // per interval, its channel's previous one (added
                                            // intervals only)
};

}  // namespace

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

  // The channels' links for the walk, in one pass over the log.
  ChannelWalk channels(engine, makespan_s);
  for (std::size_t i = 0; i < log.size(); ++i) channels.add(i);

  // The walk: t is the moment explained so far (everything after it is charged).
  std::optional<std::vector<std::uint32_t>> walked = channels.walk();
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
  double t = makespan_s;
  Stage last_stage = path.empty() ? Stage::kNone : stage_of(path.front());
  for (const std::uint32_t index : path) {
    const Interval i = interval(log, index, makespan_s);
    const SpanLog::Interval& s = *i.span;
    if (i.end_s < t) waiting(last_stage).path_s += t - i.end_s;
    SlotPhase& x = slot_phase[s.slot];
    if (!x.path_s) x.path_s = &x.phase->path_by_resource[i.resource];
    const double d = i.end_s - s.start_s;
    x.phase->path_s += d;
    *x.path_s += d;
    last_stage = stage_of(index);
    t = s.start_s;
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
