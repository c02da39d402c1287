#pragma once
// What a simulation returns. Metrics are also flattened into a list of (name, value, unit) so the
// results store, `compare` and the reports handle every workload the same way.
#include <optional>
#include <string>
#include <vector>

#include "model/capacity.hpp"
#include "sim/engine/engine.hpp"

namespace tiersim::sim {

using tiersim::MemoryItem;
using tiersim::TierMemory;

struct ResourceUsage {
  std::string name;
  std::string unit;
  double busy_s = 0;        // channel-seconds of service
  double utilization = 0;   // busy_s / (channels * makespan), 0..1
};

struct Metric {
  std::string name;
  double value = 0;
  std::string unit;
};

// One busy interval for the trace file and the report's timeline.
struct TimelineSpan {
  std::string resource;
  std::string label;
  double start_s = 0;
  double end_s = 0;
  int phase = 0;
  int item = 0;
};

struct RunResult {
  std::string workload;  // inference, io, training, checkpoint
  bool fits = true;
  std::string shortfall;  // human explanation when !fits
  std::vector<TierMemory> memory;
  std::vector<ResourceUsage> utilization;
  std::string bottleneck;
  std::vector<Metric> metrics;  // every scalar output, with its unit
  std::vector<TimelineSpan> timeline;  // filled when tracing
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
