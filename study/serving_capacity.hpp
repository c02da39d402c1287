#pragma once
// Serving capacity: the highest arrival rate a serving configuration sustains while meeting its
// latency targets. `tiersim capacity` on a serving scenario and the planner's capacity objective
// both use this one search.
//
// A rate is sustained when the run fits, the share of requests meeting every SLO the scenario
// gives (workload.slo_ttft, workload.slo_tbt) reaches the attainment target (DistServe's 90%:
// Zhong et al., OSDI 2024, artifact evaluation/ae-scripts/e2e/_plot.py), and the queue is stable:
// the mean queueing delay of the run's last third of requests exceeds that of its middle third by
// no more than half the run's mean queueing delay (plus a tenth of the TTFT target, or without
// one of the run's median TTFT, so that noise on delays far below that does not count). A queue that arrivals outpace grows through the
// run, so a finite run can meet the tail target while it is not sustainable; the drift shows it.
//
// Search (the shape of Vidur's and Sarathi-Serve's capacity searches, which bisect on the rate):
// from a start rate, double until a rate fails (or halve until one passes), then bisect until the
// bracket is narrower than the tolerance. When the start rate fails, a run at a millionth of it
// (kZeroLoadFraction: the requests arrive one at a time, nothing queues) comes first: a target
// missed there is missed at every rate, and the search stops with that zero-load figure. Every run uses the scenario's seed, and the arrival
// process scales with the rate (the same draws, gaps divided by the rate), so the points differ
// only in load.
#include <atomic>
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario.hpp"
#include "sim/result.hpp"

namespace tiersim::capacity {

// The share of the start rate at which requests no longer wait for each other (the zero-load
// probe): with 200 requests of seconds each and a start of 0.05 requests/s, gaps of ~2e7 s.
inline constexpr double kZeroLoadFraction = 1e-6;

struct ServingCriteria {
  double attainment_pct = 90;  // share of requests meeting every SLO given
  bool check_slo = true;        // false: the scenario's SLOs are ignored (stability alone)
  bool check_stability = true;
};

struct SearchOptions {
  ServingCriteria criteria;
  double start_rate_per_s = 0;  // 0: the scenario's workload.arrival_rate
  double tolerance = 0.02;      // stop when (fail - pass) <= tolerance x pass
  // > 0: the run at capacity also says how many such servers serve this many requests/s and what
  // a request costs on that fleet (servers_for_traffic, gpus_for_traffic,
  // usd_per_request_for_traffic).
  double traffic_requests_per_s = 0;
  int max_runs = 60;            // simulations at most
  // Set by another thread (the Python module's Ctrl-C): the simulation in progress stops within
  // a few thousand events and the search throws Interrupted.
  const std::atomic<bool>* stop = nullptr;
};

struct RatePoint {
  double rate_per_s = 0;
  Scenario scenario;  // the scenario at this rate
  sim::RunResult result;
  bool meets = false;
  std::string why_not;  // the first criterion missed ("" when it meets them)
};

struct ServingCapacity {
  bool found = false;      // some rate passed
  bool unbounded = false;  // every rate tried passed (the search stopped at its run limit)
  double rate_per_s = 0;   // the highest rate that passed
  double failing_rate_per_s = std::numeric_limits<double>::infinity();  // the lowest that failed
  std::string limit;              // why the lowest failing rate fails
  // The zero-load probe failed: no rate meets the criteria. `limit` then reads "cannot meet the
  // SLO at any load: zero-load TTFT p90 5.2 s > 2 s target".
  bool zero_load_miss = false;
  double zero_load_rate_per_s = 0;  // the probe's rate (when zero_load_miss)
  std::vector<RatePoint> points;  // every simulated rate, in the order run
  std::size_t best = 0;           // index into points of the run at rate_per_s (when found)
  const RatePoint* at_capacity() const { return found ? &points[best] : nullptr; }
  // The run that stands for the configuration: the one at the sustained rate, else the lowest
  // rate tried (the zero-load probe when the search stopped there); nullptr when nothing ran.
  const RatePoint* entry() const;
};

// What a search decided, without its runs: the targets it judged by and its answer. What a plan
// keeps of each serving point's search and what `capacity --db` and `plan --db` store, so that a
// report can draw the SLO and say why a configuration sustains no rate.
struct SearchAnswer {
  double attainment_pct = 90;
  std::optional<double> slo_ttft_s;  // the targets judged by; none when the scenario gives none
  std::optional<double> slo_tbt_s;   // or the SLO was ignored (capacity_search slo: false)
  bool stability = true;
  bool found = false;
  bool unbounded = false;
  bool zero_load_miss = false;
  std::optional<double> rate_per_s;          // the highest rate sustained (when found)
  std::optional<double> failing_rate_per_s;  // the lowest rate that failed (when one did)
  std::string limit;                         // why that rate fails
};
SearchAnswer answer_of(const Scenario& base, const ServingCriteria& criteria,
                       const ServingCapacity& c);

// "" when the run meets the criteria, else what it misses, e.g. "slo attainment 72.5% < 90%".
std::string serving_verdict(const Scenario& s, const sim::RunResult& r, const ServingCriteria& c);

// Why a run with no queueing misses the criteria, by the latency figures themselves: "zero-load
// TTFT p90 5.2 s > 2 s target" (the percentile the attainment target names), else the verdict.
std::string zero_load_reason(const Scenario& s, const sim::RunResult& r, const ServingCriteria& c);

// Builds the scenario at one rate (the app reloads the file with workload.arrival_rate set, so the
// stored scenario and its hash carry the rate; tests set the field).
using AtRate = std::function<Scenario(double rate_per_s)>;
// Called after each simulated rate (progress).
using OnPoint = std::function<void(const RatePoint&)>;

// Throws ConfigError when `base` is not a serving scenario with an arrival rate (a trace fixes
// its arrivals) and ModelError when the options make no sense.
ServingCapacity search_serving_capacity(const Scenario& base, const AtRate& at_rate,
                                        const SearchOptions& options, const OnPoint& on_point = {});

// The scenario with workload.arrival_rate set directly (no reload; the hash is not updated).
Scenario with_rate(Scenario s, double rate_per_s);

}  // namespace tiersim::capacity
