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
// intervals of the whole run.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine/kinds.hpp"

namespace tiersim::sim {

class SpanLog {
 public:
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
    double work_s;  // [s] the resource's own work in it (TraceSpan::work_s)
    std::uint32_t slot;     // index into slots()
    std::uint32_t channel;  // the resource's channel
  };

  void add(int resource, int channel, double start_s, double end_s, double work_s,
           Activity activity, Stage stage);

  // The kept intervals, in the order they were recorded.
  std::size_t size() const { return size_; }
  const Interval& operator[](std::size_t i) const { return chunks_[i >> kChunkBits][i & kMask]; }
  // Every slot a span was recorded in (zero-length spans too), in the order first seen.
  const std::vector<Slot>& slots() const { return slots_; }
  // [bytes] memory the intervals and slots hold (the chunks allocated, used or not).
  std::size_t bytes() const;

 private:
  static constexpr unsigned kChunkBits = 16;  // 65,536 intervals, 2 MiB a chunk
  static constexpr std::size_t kChunk = std::size_t{1} << kChunkBits;
  static constexpr std::size_t kMask = kChunk - 1;
  std::uint32_t slot_of(int resource, Activity activity, Stage stage);

  std::vector<std::unique_ptr<Interval[]>> chunks_;
  std::size_t size_ = 0;
  std::vector<Slot> slots_;
  // Per resource, the slots seen on it by the activity's name pointer: a short search, the last
  // one found first (runs of one activity). Two pointers to equal names share one slot.
  struct Seen {
    const char* name;
    Stage stage;
    std::uint32_t slot;
  };
  std::vector<std::vector<Seen>> seen_;
};

}  // namespace tiersim::sim
