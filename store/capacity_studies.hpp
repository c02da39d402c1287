#pragma once
// The table of serving capacity searches (`capacity_studies`, store/schema.cpp): which runs are
// the load points of one configuration, and the search's answer, so that a report shows one entry
// per configuration (at its sustained rate, with its cost per request) instead of one per rate
// tried. `tiersim capacity --db` writes it; `tiersim report` reads it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/sqlite.hpp"

namespace tiersim::store {

struct CapacityStudy {
  std::string sweep;          // the sweep its load points are stored under ("capacity:NAME")
  std::string scenario_name;
  std::string created_at;     // ISO 8601 UTC (set when saved)
  double attainment_pct = 90;            // share of requests that must meet every target
  std::optional<double> slo_ttft_s;      // the targets the search judged by (none: not given,
  std::optional<double> slo_tbt_s;       // or ignored with --no-slo)
  bool stability = true;                 // the queue's stability was a criterion
  bool found = false;                    // some rate met the criteria
  bool unbounded = false;                // every rate tried met them
  bool zero_load_miss = false;           // even one request at a time misses them
  std::optional<double> rate_requests_per_s;          // the highest rate sustained
  std::optional<double> failing_rate_requests_per_s;  // the lowest that failed
  std::string limit;  // why that rate fails ("cannot meet the SLO at any load: ..." when no rate)
  // The run that stands for the configuration: the one at the sustained rate (with
  // capacity_requests_per_s and usd_per_request_at_capacity), else the zero-load probe.
  std::optional<std::int64_t> entry_run;
};

// Records (or replaces) the study of `study.sweep`. Needs the results part's tables
// (ResultsStore's database).
void save_capacity_study(Database& db, const CapacityStudy& study);
// Every recorded study, by sweep name; none from a file written before results schema version 4.
std::vector<CapacityStudy> capacity_studies(Database& db);

// A plan's serving point judged at capacity (`plan_capacity`, sweeps schema version 3; `tiersim
// plan --db` with `capacity_search:`): the targets its search judged by and its answer, so that a
// report of the plan draws the SLO and says why a point sustains no rate. `study.sweep` is the
// plan's name; `study.entry_run` is not stored (the run is the plan's with `scenario_hash`).
struct PlanCapacity {
  std::string point;  // the point's axis values, as plan_verdicts labels it
  std::string scenario_hash;
  CapacityStudy study;
};
// Forgets the rows of the plan called `sweep` (a new run of it searches again). Needs the sweeps
// part's tables (sweep::SweepStore's database).
void clear_plan_capacity(Database& db, const std::string& sweep);
void save_plan_capacity(Database& db, const PlanCapacity& row);
// The rows of the plan called `sweep` (every plan when ""), in the order recorded; none from a
// file written before sweeps schema version 3.
std::vector<PlanCapacity> plan_capacities(Database& db, const std::string& sweep);

}  // namespace tiersim::store
