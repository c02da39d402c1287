#pragma once
// Capacity planning: over a space of hardware and policy choices (the sweep axis grammar), find
// the configurations that meet constraints and are best on an objective, plus the Pareto front of
// two metrics. A branch-and-bound search: every point is first checked without simulation
// (capacity, exact capex against the budget, and an optimistic roofline bound against the
// constraints); survivors are simulated best-bound first, and a point whose optimistic bound
// cannot beat the incumbents (nor reach the Pareto front) is skipped.
//
// File format: scenarios/plans/README.md.
#include <cstddef>
#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/catalog.hpp"
#include "model/layout.hpp"
#include "model/perf.hpp"
#include "model/scenario.hpp"
#include "sim/result.hpp"
#include "study/serving_capacity.hpp"
#include "study/sweep.hpp"

namespace tiersim::plan {

enum class Sense { kMinimize, kMaximize };

struct Goal {
  std::string metric;
  Sense sense = Sense::kMinimize;
  // True when `a` is strictly better than `b`.
  bool better(double a, double b) const { return sense == Sense::kMinimize ? a < b : a > b; }
};

// The better direction of metrics where it is obvious (throughput up, cost down); nullopt for
// the others, which need an explicit minimize/maximize.
std::optional<Sense> known_sense(const std::string& metric);

struct Constraint {
  std::string metric;
  std::optional<double> min, max;
  int line = 0;
  bool met(double v) const { return (!min || v >= *min) && (!max || v <= *max); }
};

struct PlanSpec {
  std::string name;  // also the sweep name its simulated points are stored under
  std::string description;
  std::string text;
  sweep::PointSpace space;
  std::vector<Constraint> constraints;
  Goal objective;
  std::vector<Goal> pareto;  // empty, or two metrics
  std::size_t top = 3;
  // `capacity_search:` given: every serving point is judged at the highest arrival rate it
  // sustains within its SLO (study/serving_capacity.hpp) instead of at its configured rate; its
  // result is the run at that rate with metric capacity_requests_per_s.
  std::optional<capacity::SearchOptions> capacity;
};

PlanSpec parse_plan_text(const std::string& text, const std::string& file);
// The same from the already parsed `root` of `text` (the fuzz target parses each input once).
PlanSpec parse_plan(const config::YNode& root, const std::string& text);
PlanSpec parse_plan_file(const std::string& path);

// Optimistic bounds from the roofline, no simulation: no simulated run of the scenario can be
// faster. Each single-channel resource of the simulation (GPU kernels, PCIe host-to-device, the
// NVMe array) is busy at least for the work the scenario puts on it at that resource's own rate,
// and the fetch process is sequential, so the run lasts at least the largest of these.
struct Bounds {
  // False when the workload has no roofline here (only inference does): then only capex is
  // known and the timing fields below bound nothing.
  bool roofline = false;
  double total_s_lb = 0;
  double ttft_s_lb = 0;
  double throughput_ub = 0;          // tokens/s
  std::optional<double> capex_usd;   // exact (model/cost.hpp); nullopt when a price is missing
  std::optional<double> usd_per_million_tokens_lb;  // capex share only (energy >= 0)
};
Bounds optimistic_bounds(const Scenario& s, const ExecutionModel& em = {});
// The same with the scenario's weight modules (weight_modules(s.model, s.policy)) already worked
// out, as the plan has them from the capacity check: only a fixed-batch workload reads them.
Bounds optimistic_bounds(const Scenario& s, const ExecutionModel& em,
                         const std::vector<WeightModule>& modules);

// The optimistic value of a metric for pruning (an upper bound for maximised metrics, a lower
// bound for minimised ones); nullopt when there is no bound for it.
std::optional<double> optimistic_value(const Bounds& b, const std::string& metric);

// A metric of a result, with derived ones (tokens_per_joule = 1 / energy_j_per_token) and capex
// computed from the scenario when the simulator does not report it.
std::optional<double> metric_value(const Scenario& s, const sim::RunResult& r, const std::string& metric);

struct Candidate {
  sweep::Point point;
  Scenario scenario;
  Bounds bounds;
  sim::RunResult result;
  bool simulated = false;
  bool feasible = false;  // fits and meets every constraint
  std::string why_not;    // first constraint missed
  // Labels of the other points whose resolved scenario is this one's (same hash): simulated once,
  // listed together.
  std::vector<std::string> equivalent;
  // Points with the same timings (every metric in s, tokens/s, requests/s) that rank below this
  // one: they add hardware the run does not use (drives with the weights on the GPU). Listed
  // with it instead of taking places of the top list: "hardware.nvme.count=2 (capex +$2,260)".
  std::vector<std::string> same_timings;
  // capacity_search: the serving point's search, its targets and answer (result is the run at
  // the sustained rate, else at the lowest rate tried).
  std::optional<capacity::SearchAnswer> capacity;
};

struct PlanStats {
  std::size_t considered = 0;
  std::size_t invalid = 0;           // the scenario could not be built or the model refused it
  std::size_t equivalent = 0;        // same resolved scenario as an earlier point: not re-run
  std::size_t pruned_capacity = 0;   // does not fit (inference_capacity, no simulation)
  std::map<std::string, std::size_t> pruned_constraint;  // by metric: its bound misses it
  std::size_t pruned_objective = 0;  // its bound cannot beat the incumbents or reach the front
  std::size_t simulated = 0;
  // Of those, simulated from the workload run of a point that differs only in keys the workload
  // reads through its capacity report (sim::simulate_like): the same results, one run less.
  std::size_t shared = 0;
  std::size_t feasible = 0;
  std::size_t bound_violations = 0;  // a simulated value beat its bound (a bug: reported)
  double wall_s = 0;
};

// What the plan decided about one point of its space, and why (for `tiersim report` and --json).
struct PointVerdict {
  std::string label;          // the point's axis values
  std::string scenario_hash;  // "" when it could not be built
  // "feasible"; "rejected" (simulated: does not fit, misses a constraint or sustains no rate);
  // "pruned" (not simulated: capacity, budget, or an optimistic bound that cannot win);
  // "equivalent" (the same resolved scenario as an earlier point); "invalid".
  std::string status;
  // Why, starting with the kind of reason: "memory: ...", "budget: ...", "SLO: ...",
  // "constraint: ...", "objective: ...", "invalid: ..."; "" when feasible.
  std::string reason;
  // capacity_search: the serving point's search (targets and answer), when it was simulated and
  // fits; what `plan --db` stores so that a report draws the SLO and says why.
  std::optional<capacity::SearchAnswer> capacity;
};

// The second key of the top list: among configurations equal on the objective, the cheaper to
// buy ranks first (then the earlier point of the plan's space).
inline constexpr const char* kTieBreak = "capex_usd";

struct PlanResult {
  std::vector<Candidate> best;    // feasible, best first (ties: kTieBreak), at most `top`
  std::vector<Candidate> pareto;  // feasible and non-dominated on spec.pareto, by the first metric
  std::vector<Candidate> no_capacity;  // capacity_search: serving points that sustain no rate
  std::vector<PointVerdict> verdicts;  // every point of the space, in its order
  PlanStats stats;
};

struct PlanOptions {
  int threads = 0;     // 0 = every hardware thread
  bool prune = true;   // false: simulate every fitting point (brute force, for tests)
  // Called on the calling thread for every simulated point (to store it).
  std::function<void(const Candidate&)> on_simulated;
  // Called on the calling thread after each batch of simulations: points simulated so far and
  // points still queued (an upper bound: some will be pruned).
  std::function<void(std::size_t simulated, std::size_t queued)> on_progress;
  // Set by another thread (the Python module's Ctrl-C): the simulations not started are skipped
  // and run_plan throws Interrupted.
  const std::atomic<bool>* stop = nullptr;
};

PlanResult run_plan(const PlanSpec& spec, const config::Catalog& catalog, const PlanOptions& options);

}  // namespace tiersim::plan
