#pragma once
// Where the time of a run went: its makespan split into phases, a phase being the work of one
// activity in one part of the run (Stage): "prefill: KV cache write-back to host", "decode:
// weight stream from NVMe", and the time no resource was busy. Built from the engine's busy
// intervals (Engine::keep_spans), never from a workload's formulas, so every workload gets it.
//
// What is measured, per phase:
// - path_s, wall time on the critical path: walking back from the end of the run, each moment
//   is charged to the busy interval that ended last before it (the work whatever came next was
//   waiting for: a resource's previous request, or the step it depended on), and a moment no
//   interval covers is charged to waiting (no resource busy: a fixed latency, a request that
//   has not arrived). The phases' path_s add up to the makespan. Where two intervals end at
//   the same moment the longer one is taken, then the one whose resource did the most work in
//   it (the narrowest link of a flow), then the first resource. It reads the intervals only, not
//   which process waited on which, so where one resource's work ends just as an unrelated one's
//   starts it can pick the wrong one of the two; it never charges more than the makespan.
// - busy_s: the phase's work summed over every resource, in channel-seconds at each resource's
//   own rate (Resource::busy_s), overlapped or not: work hidden behind other work shows here
//   with little or no path_s.
// - bottleneck: the resource on which the phase's path_s was spent most (for a phase off the
//   critical path, the one with the most busy seconds of it).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/engine.hpp"

namespace tiersim::sim {

struct PhaseTime {
  Stage stage = Stage::kNone;
  Activity activity;  // the work (Activity{}: untagged work); ignored where `waiting`
  bool waiting = false;  // no resource was busy on the critical path
  double path_s = 0;     // [s] wall time on the critical path
  double busy_s = 0;     // [s] channel-seconds of this work over every resource
  std::string bottleneck;  // resource name (sim/workloads/names.hpp); "" where waiting
  double bottleneck_path_s = 0;  // [s] of path_s spent on `bottleneck`
};

// The simulated time the phases cover: their path_s added up, the makespan (total_s, unless the
// workload projects part of the run from a simulated sample; for training, the iterations it
// simulates, which report no total_s) [s].
double phases_span_s(const std::vector<PhaseTime>& phases);

// The phases of a run whose engine kept its spans, over [0, makespan_s]: every phase with path
// or busy time, largest path_s first (then busy_s, then stage and name). Empty when the engine
// kept no spans.
std::vector<PhaseTime> time_breakdown(const Engine& engine, double makespan_s);

// The metric name of a phase's path_s: "phase_" + "prefill_" / "decode_" (none for Stage::kNone)
// + the activity with '-' as '_' ("untagged" for Activity{}, "waiting" where waiting) + "_s":
// phase_prefill_kv_offload_s, phase_decode_waiting_s, phase_checkpoint_write_s.
std::string phase_metric_name(const PhaseTime& phase);
// The phase a metric name stands for (stage, activity, waiting; no times), read back from the
// name alone (the results store keeps metrics only); nullopt when `name` is not such a name (a
// declared activity, "untagged" or "waiting", in any stage).
std::optional<PhaseTime> parse_phase_metric_name(std::string_view name);
bool is_phase_metric_name(std::string_view name);

// For people: "prefill", "decode" or "run"; and "KV cache write-back to host" or "waiting (no
// resource busy)".
const char* stage_label(Stage stage);
std::string phase_label(const PhaseTime& phase);

}  // namespace tiersim::sim
