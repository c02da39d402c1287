#pragma once
// One entry per configuration. A capacity search (`tiersim capacity --db`) stores every rate it
// tries as a run of the sweep 'capacity:NAME'; those runs are load points of one configuration,
// and a report that listed each as a configuration compared the hardware with itself. Here they
// become one entry, the run at the sustained rate (with capacity_requests_per_s and
// usd_per_request_at_capacity) or, when no rate meets the targets, the zero-load probe, with the
// search's answer beside it; every load point stays for the latency-vs-load charts.
#include <optional>
#include <string>
#include <vector>

#include "store/capacity_studies.hpp"
#include "store/results_store.hpp"
#include "store/sweep_tables.hpp"

namespace tiersim::reports {

// The prefix of the sweep name `tiersim capacity --db` stores a search's runs under.
inline constexpr const char* kCapacitySweepPrefix = "capacity:";

struct Entries {
  std::vector<store::StoredRun> runs;  // one per configuration, in the order first stored
  std::vector<std::optional<store::CapacityStudy>> capacity;  // per entry
  std::vector<store::StoredRun> load_points;  // every run, when some were grouped; else empty
  // Per entry (same order as runs; may be shorter): the points of its sweep or plan listed with it
  // by collapse_same_timings, "nvme.count=2 (capex +$2,260)".
  std::vector<std::vector<std::string>> same_timings;
};

// Groups the runs of each capacity sweep into one entry: the study's entry run when the study is
// recorded (results schema version 4), else (a file from before) the run at the highest rate
// whose SLO attainment reaches 90% or, when none does, the lowest rate tried.
Entries one_entry_per_configuration(std::vector<store::StoredRun> runs,
                                    const std::vector<store::CapacityStudy>& studies);

// A plan's serving points judged at capacity (`tiersim plan --db` with `capacity_search:`,
// store::plan_capacities): each entry that is such a point's run (stored under the plan's name
// with the point's scenario hash) gets that search as its capacity study, so the report draws
// the plan's SLO and says why a point sustains no rate, as for `tiersim capacity`.
void attach_plan_capacity(Entries& entries, const std::vector<store::PlanCapacity>& rows);

// Points of one sweep or plan with the same timings (sim/same_timings.hpp) that differ only in
// hardware keys (study/sweep.hpp differ_in_hardware_only) differ only in hardware the run does not
// use (drives when the weights are on the GPU, DRAM nothing spills to): they become one entry, the
// cheaper to buy (then the first stored), with the others listed by the axis values they add and
// the capex they add, as the plan's best list does. Runs outside sweeps (compare variants, single
// runs) and a capacity search's entries stay apart: their user named each. Another host, cloud
// instance or policy is another configuration, not unused hardware: such points stay apart.
void collapse_same_timings(Entries& entries);

// The verdict a plan recorded for this run (matched by scenario hash), if any.
const store::PlanVerdict* verdict_of(const std::vector<store::PlanVerdict>& verdicts,
                                     const store::StoredRun& run);

// A short name for what varies: a plan or sweep point's label "hardware.gpu.model=H200
// hardware.nvme.count=2" becomes "gpu.model=H200, nvme.count=2" (the first key segment dropped
// where the rest still names the key); other names are returned as they are.
std::string short_point_label(const std::string& label);

// Names for the points of one sweep or plan that say what varies among them: each point label
// ("hardware.gpu.model=H200 hardware.nvme.count=2 policy.io_path=aio") keeps only the axes whose
// value differs between the points, each without its section ("gpu.model=H200, nvme.count=2,
// weights=cpu"). A label that is not a point label, or points that differ in no axis, keep
// short_point_label's form.
std::vector<std::string> varying_point_labels(const std::vector<std::string>& labels);

}  // namespace tiersim::reports
