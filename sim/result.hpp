#pragma once
// What a simulation returns. Metrics are also flattened into a list of (name, value, unit) so the
// results store, `compare` and the reports handle every workload the same way.
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/capacity.hpp"
#include "sim/breakdown.hpp"
#include "sim/engine/engine.hpp"
#include "sim/metrics.hpp"

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
  // Work done in `unit` (Resource::amount): the bytes a link moved, the service seconds of a
  // kSeconds resource. 0 for usage read back from storage, which keeps busy time only.
  double amount = 0;
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

// Thrown when a metric is read that the run did not report: reading it as 0 would hide a mistyped
// name, or a metric of another workload. A programming error, not bad input.
class MissingMetric : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Lookups in a list of metrics, shared by RunResult and the results store's StoredRun.
// The metric named `name`; nullptr when absent.
const Metric* find_metric_in(const std::vector<Metric>& metrics, std::string_view name);
// Its value; nullopt when absent.
std::optional<double> metric_if(const std::vector<Metric>& metrics, std::string_view name);
// Its value; throws MissingMetric when absent.
double metric_value(const std::vector<Metric>& metrics, std::string_view name);

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

// What a run did, counted in the work's own units: the workload fills it and energy and cost
// (sim/economics.cpp) read it, instead of metrics read back by name. Not stored: a result read back
// from the results store or the sweep cache has metrics and usage only. Bytes moved per resource
// are the usage's amounts (bytes_moved).
struct WorkSummary {
  double generated_tokens = 0;    // [tokens] inference (batch x gen_tokens), serving
  double requests_completed = 0;  // [requests] serving
  // [bytes] each GPU received in ZeRO-3's parameter all-gathers (inference with data-parallel
  // ranks): GPU-to-GPU traffic on the host links, which passes no host DRAM.
  double allgather_bytes = 0;
  // [GB/s] the rate at which the device model's NVMe array moves bytes while busy: its read rate
  // at the policy's block size and queue depth (inference, serving), the benchmarked direction's
  // (io). 0 where the workload gives none: its NVMe bytes then count as no DRAM traffic.
  double nvme_gbps_model = 0;
};

struct RunResult {
  std::string workload;  // inference, io, training, checkpoint
  bool fits = true;
  std::string shortfall;  // human explanation when !fits
  std::vector<TierMemory> memory;
  std::vector<ResourceUsage> utilization;
  std::string bottleneck;
  std::vector<Metric> metrics;  // every scalar output, with its unit
  WorkSummary work;             // what the run did, for energy and cost
  std::vector<TimelineSpan> timeline;  // filled when tracing
  // Where the time went (sim/breakdown.hpp), filled where the engine kept its spans
  // (SimOptions::breakdown or trace); each phase's path_s is also the metric
  // phase_metric_name(phase). Not stored: a result read back has those metrics only.
  std::vector<PhaseTime> phases;
  // Events the engine processed: a measure of simulation work, not a result. 0 where the
  // workload worked out its timeline without processes (inference's run_direct).
  std::uint64_t events = 0;

  // Reads and writes by handle (sim/metrics.hpp, sim/workloads/<kind>/metrics.hpp): the name and
  // unit come from the declaration. get() throws MissingMetric for a metric the run did not
  // report; a reader for which the metric may legitimately be absent says so with find() or has().
  void set(const MetricDecl& m, double value);
  double get(const MetricDecl& m) const { return metric_value(metrics, m.name); }
  std::optional<double> find(const MetricDecl& m) const { return find(m.name); }
  bool has(const MetricDecl& m) const { return has(m.name); }
  // By name, for metrics named at run time (a plan's objective, compare's table, a validation
  // reference) and for tests of the stable output names.
  const Metric* find_metric(std::string_view name) const { return find_metric_in(metrics, name); }
  std::optional<double> find(std::string_view name) const { return metric_if(metrics, name); }
  double get(std::string_view name) const { return metric_value(metrics, name); }
  bool has(std::string_view name) const { return find_metric(name) != nullptr; }
};

// [bytes] the run's resources of `role` moved (the amounts of those that count bytes), all of
// them together.
double bytes_moved(const RunResult& result, ResourceRole role);

// Fills utilization, bottleneck, (when tracing) the timeline and (when the engine kept its spans)
// the time breakdown and its phase_* metrics from a finished engine.
void collect_usage(const Engine& engine, double makespan_s, RunResult& result);

}  // namespace tiersim::sim
