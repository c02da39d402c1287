#pragma once
// The busy intervals the time breakdown (sim/breakdown.hpp) reads, kept compactly. A long run
// records tens of millions of them (a million requests of
// scenarios/serving/llama3-70b-multiturn-2xh100-dram-2x-gen4.yaml run 9.3 million iterations,
// each booking several resources), and the breakdown needs of each only its times, its channel
// and what it was: not the workload's phase and item numbers a trace span carries. What a span's
// work was on which resource (its slot: resource, activity, stage) is kept once per slot, with
// the slot's busy seconds summed as the spans are recorded (in the order the breakdown summed
// them from the whole log), and a span keeps its slot's number.
//
// 32 bytes an interval, in chunks that are never copied: kept as 56-byte trace spans in a
// std::vector grown by doubling, which holds its old and its new copy at the moment it grows,
// that run peaked at 2.2 GB resident, and at 1.26 GB with this log. A zero-length interval
// (end <= start) adds to its slot's busy seconds and is not kept: no walk charges one.
//
// The log still grows with the run: the walk goes back from the run's end, and it adds each
// phase's seconds in that order, so its sums (printed to the last digit in run --json) need the
// intervals of the whole run. The walk goes back along each channel (a resource's channel serves
// one request after another, so its intervals come in walk order), so each interval links to the
// one before it on its channel, and the log says whether every channel's did come in walk order
// (in_order()): tests and replays may record them in any order, and the breakdown then sorts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "sim/engine/kinds.hpp"

namespace tiersim::sim {

// Where an interval comes in the time breakdown's walk back from the end of a run: the later end
// first; among equal ends the longer interval (the earlier start), then the one with more work
// (the narrowest link of a flow), then the first resource. The one place this order is written:
// the log checks its channels against it as they are recorded, the breakdown walks by it.
struct WalkKey {
  double end_s = 0;    // [s]
  double start_s = 0;  // [s]
  double work_s = 0;   // [s] the resource's own work in the interval
  int resource = 0;
};
constexpr bool walks_first(const WalkKey& a, const WalkKey& b) {
  if (a.end_s != b.end_s) return a.end_s > b.end_s;
  if (a.start_s != b.start_s) return a.start_s < b.start_s;
  if (a.work_s != b.work_s) return a.work_s > b.work_s;
  return a.resource < b.resource;
}

class SpanLog {
 public:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  // What work on which resource: the breakdown's phase (stage, activity) on one resource.
  struct Slot {
    int resource = 0;  // index into Engine::resources()
    Activity activity;
    Stage stage = Stage::kNone;
    double busy_s = 0;  // [s] the work_s of its spans, summed in the order they were recorded
  };
  // One busy interval of a resource channel.
  struct Interval {
    double start_s;
    double end_s;
    double work_s;         // [s] the resource's own work in it (TraceSpan::work_s)
    std::uint32_t slot;    // index into slots()
    std::uint32_t before;  // the interval kept before it on its channel (index), or kNone
  };
  // A resource channel that kept intervals.
  struct Channel {
    int resource = 0;
    int channel = 0;
    std::uint32_t latest = kNone;  // its interval kept last (index)
  };

  void add(int resource, int channel, double start_s, double end_s, double work_s,
           Activity activity, Stage stage);

  // The kept intervals, in the order they were recorded.
  std::size_t size() const { return size_; }
  const Interval& operator[](std::size_t i) const { return chunks_[i >> kChunkBits][i & kMask]; }
  // The walk's key of interval i, its end clipped to `end_s` [s].
  WalkKey key(std::size_t i, double end_s) const;
  // Every slot a span was recorded in (zero-length spans too), in the order first seen.
  const std::vector<Slot>& slots() const { return slots_; }
  // Every channel a span was recorded on, in the order first seen (latest: kNone where all its
  // spans had zero length).
  const std::vector<Channel>& channels() const { return channels_; }
  // Whether each channel's intervals were recorded in the walk's order backwards: every interval
  // comes strictly before (walks_first) the one kept before it on its channel, by their recorded
  // ends (a resource channel serves one request after another: none of its intervals tie).
  bool in_order() const { return in_order_; }
  // [bytes] memory the intervals, slots and channels hold (the chunks allocated, used or not).
  std::size_t bytes() const;

 private:
  static constexpr unsigned kChunkBits = 16;  // 65,536 intervals, 2 MiB a chunk
  static constexpr std::size_t kChunk = std::size_t{1} << kChunkBits;
  static constexpr std::size_t kMask = kChunk - 1;
  std::uint32_t slot_of(int resource, Activity activity, Stage stage);
  std::uint32_t new_channel(int resource, int channel);

  std::vector<std::unique_ptr<Interval[]>> chunks_;
  std::size_t size_ = 0;
  std::vector<Slot> slots_;
  std::vector<Channel> channels_;
  bool in_order_ = true;
  // Per resource, the slots seen on it by the activity's name pointer (a resource does a few
  // kinds of work: a short search), and its channels' indices into channels_ (kNone: none yet).
  // Two pointers to equal names share one slot.
  struct Seen {
    const char* name = nullptr;
    Stage stage = Stage::kNone;
    std::uint32_t slot = kNone;
  };
  std::vector<Seen> last_slot_;  // per channel, the slot of its last span
  struct PerResource {
    std::vector<Seen> seen;
    std::vector<std::uint32_t> channels;
  };
  std::vector<PerResource> resources_;
};

// Inline: every reserve of a run with spans kept records one.
inline void SpanLog::add(int resource, int channel, double start_s, double end_s, double work_s,
                         Activity activity, Stage stage) {
  const auto r = static_cast<std::size_t>(resource);
  const auto c = static_cast<std::size_t>(channel);
  std::uint32_t ch = kNone;
  if (r < resources_.size() && c < resources_[r].channels.size()) ch = resources_[r].channels[c];
  if (ch == kNone) ch = new_channel(resource, channel);
  // A channel mostly does one kind of work after another: its last slot, or a search.
  Seen& last = last_slot_[ch];
  if (last.name != activity.name() || last.stage != stage)
    last = {activity.name(), stage, slot_of(resource, activity, stage)};
  slots_[last.slot].busy_s += work_s;
  if (end_s <= start_s) return;
  if ((size_ & kMask) == 0 && (size_ >> kChunkBits) == chunks_.size())
    chunks_.push_back(std::make_unique_for_overwrite<Interval[]>(kChunk));
  std::uint32_t& latest = channels_[ch].latest;
  if (latest != kNone && in_order_) {
    const Interval& before = (*this)[latest];
    in_order_ = walks_first({end_s, start_s, work_s, resource},
                            {before.end_s, before.start_s, before.work_s, resource});
  }
  chunks_[size_ >> kChunkBits][size_ & kMask] = Interval{start_s, end_s, work_s, last.slot, latest};
  latest = static_cast<std::uint32_t>(size_);
  ++size_;
}

inline WalkKey SpanLog::key(std::size_t i, double end_s) const {
  const Interval& s = (*this)[i];
  return {std::min(s.end_s, end_s), s.start_s, s.work_s, slots_[s.slot].resource};
}

}  // namespace tiersim::sim
