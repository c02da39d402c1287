#pragma once
// What a simulation returns. Metrics are also flattened into a list of (name, value, unit) so the
// results store, `compare` and the reports handle every workload the same way.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "model/capacity.hpp"
#include "sim/engine/engine.hpp"

namespace tiersim::sim {

using tiersim::MemoryItem;
using tiersim::TierMemory;

// How much one resource worked. Observers (energy in sim/economics.cpp) read its role; the name
// is the one the workload gave it, the unit the display form of its WorkUnit.
// The role comes first so that a usage cannot be brace-initialised from a name alone.
struct ResourceUsage {
  ResourceRole role = ResourceRole::kOther;
  std::string name;        // as the workload named it (sim/workloads/names.hpp)
  std::string unit;        // what the resource's amounts count: "s" or "bytes"
  double busy_s = 0;       // channel-seconds of service [s]
  double utilization = 0;  // busy_s / (channels * makespan) [fraction, 0..1]
  // busy_s weighted by how hard each piece of work drove the resource (Tag::load) [s]: what the
  // power model charges at full dynamic power. Equal to busy_s for work that does not say, and
  // for usage read back from storage; < 0: not known, busy_s (full_power_s() reads it).
  double load_s = -1;
  double full_power_s() const { return load_s < 0 ? busy_s : load_s; }
  // busy_s and load_s of the work of each Stage (index: static_cast<size_t>(Stage)) [s].
  std::array<double, kStageCount> busy_by_stage_s{};
  std::array<double, kStageCount> load_by_stage_s{};
};

// A usage entry as read back from storage (results store, sweep cache): the role comes from the
// name (sim/workloads/names.hpp parse_resource_name). Throws ModelError for a name no workload
// declares.
ResourceUsage usage_from_name(std::string name, std::string unit, double busy_s,
                              double utilization);

struct Metric {
  std::string name;
  double value = 0;
  std::string unit;
};

// One busy interval for the trace file and the report's timeline.
// resource and label are the display names (the resource's name, the activity's); activity is
// the typed form, which the replay's plan reads.
struct TimelineSpan {
  std::string resource;
  std::string label;
  double start_s = 0;  // [s] from the start of the run
  double end_s = 0;    // [s]
  int phase = 0;
  int item = 0;
  Activity activity;
};

// A span of work on the resource named `resource`, labelled with the activity's name.
TimelineSpan timeline_span(std::string resource, Activity activity, double start_s, double end_s,
                           int phase, int item);

struct RunResult {
  std::string workload;  // inference, io, training, checkpoint
  bool fits = true;
  std::string shortfall;  // human explanation when !fits
  std::vector<TierMemory> memory;
  std::vector<ResourceUsage> utilization;
  std::string bottleneck;
  std::vector<Metric> metrics;  // every scalar output, with its unit
  std::vector<TimelineSpan> timeline;  // filled when tracing
  // Events the engine processed: a measure of simulation work, not a result. 0 where the
  // workload worked out its timeline without processes (inference's run_direct).
  std::uint64_t events = 0;

  double metric(const std::string& name, double fallback = 0) const {
    for (const auto& m : metrics)
      if (m.name == name) return m.value;
    return fallback;
  }
  bool has_metric(const std::string& name) const {
    for (const auto& m : metrics)
      if (m.name == name) return true;
    return false;
  }
  void set(const std::string& name, double value, const std::string& unit) {
    for (auto& m : metrics)
      if (m.name == name) {
        m.value = value;
        m.unit = unit;
        return;
      }
    metrics.push_back({name, value, unit});
  }
};

// Fills utilization, bottleneck and (when tracing) the timeline from a finished engine.
void collect_usage(const Engine& engine, double makespan_s, RunResult& result);

}  // namespace tiersim::sim
