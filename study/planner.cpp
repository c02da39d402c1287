#include "study/planner.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "common/format.hpp"
#include "common/progress.hpp"
#include "config/options.hpp"
#include "config/scenario_loader.hpp"
#include "model/capacity.hpp"
#include "model/cost.hpp"
#include "model/errors.hpp"
#include "model/layout.hpp"
#include "model/llm.hpp"
#include "model/units.hpp"
#include "model/weight_stream.hpp"
#include "sim/economics.hpp"
#include "sim/metrics.hpp"
#include "sim/same_timings.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/inference/metrics.hpp"
#include "sim/workloads/traits.hpp"
#include "study/metric_names.hpp"
#include "study/parallel.hpp"

namespace tiersim::plan {
namespace {

using config::YNode;

// The one metric the planner works out itself rather than reading it from a run (metric_value):
// 1 / energy_j_per_token.
constexpr const char* kTokensPerJoule = "tokens_per_joule";

// Metrics whose better direction is obvious, so `pareto:` may name them without minimize/maximize.
const std::map<std::string, Sense>& known_senses() {
  static const std::map<std::string, Sense> k = {
      {"throughput_tokens_per_s", Sense::kMaximize},
      {kTokensPerJoule, Sense::kMaximize},
      {"tokens_per_kwh", Sense::kMaximize},
      {"tokens_per_usd", Sense::kMaximize},
      {"return_per_dollar", Sense::kMaximize},
      {"usd_per_million_tokens", Sense::kMinimize},
      {"energy_j_per_token", Sense::kMinimize},
      {"capex_usd", Sense::kMinimize},
      {"usd_per_hour", Sense::kMinimize},
      {"ttft_s", Sense::kMinimize},
      {"total_s", Sense::kMinimize},
      {"decode_s_per_token", Sense::kMinimize},
      {"avg_power_w", Sense::kMinimize},
      // Serving (capacity_requests_per_s with `capacity_search:`).
      {"capacity_requests_per_s", Sense::kMaximize},
      {"usd_per_request", Sense::kMinimize},
      {"goodput_requests_per_s", Sense::kMaximize},
      {"slo_attainment_pct", Sense::kMaximize},
      {"ttft_p99_s", Sense::kMinimize},
      {"tpot_p99_s", Sense::kMinimize},
      {"usd_per_request_at_capacity", Sense::kMinimize},
      // Rent (economics.cloud_instance, an axis over prices.yaml `cloud`): the instance's price
      // per hour, per million tokens and per served request.
      {"rent_usd_per_hour", Sense::kMinimize},
      {"rent_usd_per_million_tokens", Sense::kMinimize},
      {"rent_usd_per_request", Sense::kMinimize},
      {"servers_for_traffic", Sense::kMinimize},
      {"gpus_for_traffic", Sense::kMinimize},
      {"usd_per_request_for_traffic", Sense::kMinimize},
  };
  return k;
}

std::vector<std::string> known_metric_names() {
  std::vector<std::string> names;
  for (const auto& [k, v] : known_senses()) names.push_back(k);
  return names;
}

}  // namespace

std::optional<Sense> known_sense(const std::string& metric) {
  const auto it = known_senses().find(metric);
  if (it == known_senses().end()) return std::nullopt;
  return it->second;
}

namespace {

// A plan names metrics a run reports (sim/metrics.hpp declares every one) or the planner works
// out (metric_value): one that is neither fails at its line, not after every point has run.
void check_metric_name(const YNode& node, const std::string& metric) {
  const std::string problem = study::unknown_metric_text(metric, {kTokensPerJoule});
  if (!problem.empty()) node.fail("'" + metric + "' is an " + problem);
}

Goal parse_goal(const YNode& node) {
  if (node.is_scalar()) {
    const std::string m = node.as_string();
    auto it = known_senses().find(m);
    if (it == known_senses().end())
      node.fail("unknown direction for metric '" + m + "'" + config::did_you_mean(m, known_metric_names()) +
                "; write {minimize: " + m + "} or {maximize: " + m + "}");
    return {m, it->second};
  }
  node.check_keys({"minimize", "maximize"});
  auto mn = node.get("minimize"), mx = node.get("maximize");
  if (mn && mx) node.fail("give either minimize or maximize, not both");
  if (!mn && !mx) node.fail_missing("minimize", "minimize: METRIC or maximize: METRIC");
  const YNode& m = mn ? *mn : *mx;
  Goal g{m.as_string(), mn ? Sense::kMinimize : Sense::kMaximize};
  check_metric_name(m, g.metric);
  return g;
}

// "hardware.nvme.count=2 (capex +2260 USD)": a configuration listed under its twin, by the axis
// values in which the two differ.
std::string twin_text(const Candidate& twin, const Candidate& listed) {
  std::string t = sweep::label_items_not_in(twin.point.label, listed.point.label);
  if (t.empty()) t = twin.point.label;
  const auto a = metric_value(twin.scenario, twin.result, "capex_usd");
  const auto b = metric_value(listed.scenario, listed.result, "capex_usd");
  // Whole dollars: a DRAM population in GiB prices to fractions of a dollar.
  if (a && b) {
    const double diff_usd = std::round(*a - *b) + 0.0;  // + 0.0: no "-0"
    t += " (capex " + std::string(*a >= *b ? "+" : "") + format::usd(diff_usd) + ")";
  }
  return t;
}

// "> max 10", "< min 2" or "outside [2, 10]": the limit a constraint's value misses.
std::string limit_text(const Constraint& c) {
  if (c.min && c.max)
    return "outside [" + config::format_number(*c.min) + ", " + config::format_number(*c.max) + "]";
  if (c.max) return "> max " + config::format_number(*c.max);
  if (c.min) return "< min " + config::format_number(*c.min);
  return "";
}

// a dominates b on the goals: no worse on any, better on one.
bool dominates(const std::vector<double>& a, const std::vector<double>& b, const std::vector<Goal>& goals) {
  bool strictly = false;
  for (std::size_t k = 0; k < goals.size(); ++k) {
    if (goals[k].better(b[k], a[k])) return false;
    if (goals[k].better(a[k], b[k])) strictly = true;
  }
  return strictly;
}

}  // namespace

PlanSpec parse_plan_text(const std::string& text, const std::string& file) {
  return parse_plan(config::parse_yaml_text(text, file), text);
}

PlanSpec parse_plan(const YNode& root, const std::string& text) {
  if (!root.is_map()) root.fail("expected a plan file (a map with name, base, grid, constraints, objective), got " + root.describe());
  root.check_keys({"name", "description", "base", "set", "grid", "zip", "constraints", "objective",
                   "pareto", "top", "capacity_search"});
  PlanSpec spec;
  spec.name = root.require("name", "the plan name").as_string();
  if (auto d = root.get("description")) spec.description = d->as_string();
  spec.text = text;
  spec.space = sweep::parse_point_space(root);
  sweep::check_point_count(spec.space, sweep::kMaxPlanPoints, "plan");
  if (auto cs = root.get("constraints")) {
    for (const auto& [metric, node] : cs->entries()) {
      Constraint c;
      c.metric = metric;
      c.line = node.line();
      if (metric == "fits") {  // every candidate must fit; accepted for readability
        if (!node.as_bool()) node.fail("configurations that do not fit have no metrics; fits must be true");
        continue;
      }
      check_metric_name(node, metric);
      node.check_keys({"min", "max"});
      if (auto v = node.get("min")) c.min = v->as_double(-1e300, 1e300);
      if (auto v = node.get("max")) c.max = v->as_double(-1e300, 1e300);
      if (!c.min && !c.max) node.fail_missing("min", "min: VALUE and/or max: VALUE");
      if (c.min && c.max && *c.min > *c.max)
        node.fail("min (" + format::significant(*c.min, 6) + ") is above max (" +
                  format::significant(*c.max, 6) + "): no configuration can meet it");
      spec.constraints.push_back(c);
    }
  }
  spec.objective = parse_goal(root.require("objective", "{minimize: METRIC} or {maximize: METRIC}"));
  if (auto p = root.get("pareto")) {
    for (const auto& item : p->items()) spec.pareto.push_back(parse_goal(item));
    if (spec.pareto.size() != 2) p->fail("expected two metrics, e.g. [throughput_tokens_per_s, usd_per_million_tokens]");
  }
  if (auto t = root.get("top")) spec.top = static_cast<std::size_t>(t->as_int(1, 1000));
  if (auto cs = root.get("capacity_search")) {
    capacity::SearchOptions o;
    if (!cs->is_map())
      cs->fail("expected a map, e.g. {attainment_pct: 90, tolerance: 0.02, stability: true}");
    cs->check_keys({"attainment_pct", "tolerance", "stability", "slo", "traffic_requests_per_s"});
    if (auto v = cs->get("slo")) o.criteria.check_slo = v->as_bool();
    if (auto v = cs->get("attainment_pct")) o.criteria.attainment_pct = v->as_double(1e-9, 100);
    if (auto v = cs->get("tolerance")) o.tolerance = v->as_double(1e-6, 10);
    if (auto v = cs->get("stability")) o.criteria.check_stability = v->as_bool();
    if (auto v = cs->get("traffic_requests_per_s"))
      o.traffic_requests_per_s = v->as_double(1e-9, 1e12);
    spec.capacity = o;
  }
  return spec;
}

PlanSpec parse_plan_file(const std::string& path) {
  return parse_plan_text(config::read_input_file(path, "plan file"), path);
}

Bounds optimistic_bounds(const Scenario& s, const ExecutionModel& em) {
  return optimistic_bounds(s, em,
                           has_capability(s, kCapFixedBatch) ? weight_modules(s.model, s.policy)
                                                             : std::vector<WeightModule>{});
}

Bounds optimistic_bounds(const Scenario& s, const ExecutionModel& em,
                         const std::vector<WeightModule>& modules) {
  Bounds b;
  try {
    // A lower bound: where DRAM is sized to the need after the run (sim/economics.hpp), the
    // least it can be sized to is what a need of nothing gets: the platform's floor (sizing
    // grows with the need).
    // (A copy of the hardware, its catalog sources included, only where the DRAM is resized.)
    std::optional<Hardware> sized;
    if (sim::dram_sized_to_need(s)) {
      sized = s.hardware;
      sized->host.dram_gb = sized_dram_gb(0, sized->host);
    }
    const CapexBreakdown c = compute_capex(sized ? *sized : s.hardware, s.economics.prices);
    b.capex_usd = c.total_usd();
  } catch (const Error&) {
    // A missing price: no capex figure, so no budget or cost pruning for this point.
  }
  if (!has_capability(s, kCapFixedBatch)) return b;  // only a fixed batch has a roofline here
  b.roofline = true;
  const Policy& p = s.policy;
  const LlmSpec& m = s.model;
  const auto& w = s.inference;
  const GpuSpec& gpu = s.hardware.gpu;
  const double tp = std::max(1, p.parallelism.tensor);
  const double stages = std::max(1, p.parallelism.pipeline);
  const double passes = std::max(1, w.gen_tokens);
  const double micro = std::max(1, std::min(p.parallelism.micro_batches, w.batch));
  const double gpu_batches = std::max(1, p.gpu_batches);

  // GPU: every layer of every pass, for every micro-batch and GPU batch, pays the launch overhead
  // and reads its weights from HBM at least once, as the stack reads them (fp16 copies, or the
  // packed weights) (kernel time is the max of compute and memory time, so the memory part alone
  // is a lower bound).
  const ExecutionModel sem = with_stack(em, p.stack);
  const double hbm = units::gbps_to_bytes_per_s(gpu.hbm_gbps) * sem.hbm_efficiency;
  const double per_layer_s =
      sem.layer_overhead_s +
      layer_active_params(m) * gemm_path(gpu, sem, p).weight_bytes_per_elem / tp / hbm;
  const double gpu_pass_s = m.layers * micro * gpu_batches * per_layer_s / stages;

  // Streamed weights, from the weight-stream model (model/weight_stream.hpp): PCIe host-to-device
  // time, NVMe read time, and the fetch process's sequential per-tensor cost (overhead, then its
  // host copy at the link's rate, the least a pinned or pageable copy takes; NVMe reads are
  // asynchronous and only occupy the drive). Every byte of a tensor reaches each GPU over its
  // link at least in its tensor-parallel share: with data-parallel ranks over PCIe, a rank's own
  // partition and the others' gathered. A pass fetches what its tokens need: with a runtime that
  // loads only routed experts (policy.moe_fetch: routed) the experts its tokens hit, fewer in a
  // decode pass than in the prefill, as the simulator fetches them.
  const double streamed = p.weights.cpu + p.weights.nvme;
  const WeightStreamPoint stream = weight_stream_point(s, em, modules);
  const auto pass_lb_s = [&](double pass_tokens) {
    double h2d_pass_s = 0, nvme_pass_s = 0, fetch_pass_s = 0;
    if (streamed > 0) {
      const double experts_hit = stream_experts_hit(m, p, pass_tokens);
      // The layers of a dense model are one stream (same_module_stream), worked out once and
      // still summed tensor by tensor in order.
      const WeightModule* last = nullptr;
      ModuleStream ms;
      for (const auto& mod : modules) {
        if (!last || !same_module_stream(*last, mod)) ms = module_stream(stream, mod, experts_hit);
        last = &mod;
        for (const TensorStream& t : ms.tensors) {
          h2d_pass_s += (t.nvme_bytes + t.cpu_bytes) / tp / stream.link_bytes_per_s;
          nvme_pass_s += t.read_s;
          fetch_pass_s += stream.fetch_overhead_s + t.host_link_s;
        }
      }
      h2d_pass_s /= stages;  // each stage has its own link; the busiest carries at least the mean
      fetch_pass_s /= stages;
    }
    return std::max({gpu_pass_s, h2d_pass_s, nvme_pass_s, fetch_pass_s});
  };
  // Each data-parallel rank runs its own share of the batch (sim/workloads/inference).
  const double rank_batch = double(w.batch) / std::max(1, p.parallelism.data);
  const double prefill_s = pass_lb_s(rank_batch * w.prompt_tokens);
  b.ttft_s_lb = prefill_s;
  b.total_s_lb = p.moe_fetch == MoeFetch::kAll
                     ? passes * prefill_s
                     : prefill_s + (passes - 1) * pass_lb_s(rank_batch);
  const double tokens = double(w.batch) * double(w.gen_tokens);
  b.throughput_ub = b.total_s_lb > 0 ? tokens / b.total_s_lb : std::numeric_limits<double>::infinity();
  if (b.capex_usd && b.throughput_ub > 0) {
    const Economics& e = s.economics;
    if (e.amortization_years > 0 && e.duty_cycle > 0) {
      const double capex_per_h = *b.capex_usd / (e.amortization_years * kHoursPerYear * e.duty_cycle);
      b.usd_per_million_tokens_lb = capex_per_h / (b.throughput_ub * 3600.0) * 1e6;
    }
  }
  return b;
}

std::optional<double> optimistic_value(const Bounds& b, const std::string& metric) {
  if (metric == "capex_usd") return b.capex_usd;
  if (!b.roofline) return std::nullopt;  // a serving or training point: no timing bound
  if (metric == "throughput_tokens_per_s") return b.throughput_ub;
  if (metric == "ttft_s" || metric == "prefill_s") return b.ttft_s_lb;
  if (metric == "total_s") return b.total_s_lb;
  if (metric == "capex_usd") return b.capex_usd;
  if (metric == "usd_per_million_tokens") return b.usd_per_million_tokens_lb;
  if (metric == "tokens_per_usd" && b.usd_per_million_tokens_lb && *b.usd_per_million_tokens_lb > 0)
    return 1e6 / *b.usd_per_million_tokens_lb;
  if (metric == "return_per_dollar" && b.capex_usd && *b.capex_usd > 0)
    return b.throughput_ub / (*b.capex_usd / 1000.0);
  return std::nullopt;
}

std::optional<double> metric_value(const Scenario& s, const sim::RunResult& r, const std::string& metric) {
  if (auto v = r.find(metric)) return v;
  if (metric == kTokensPerJoule) {
    if (auto e = r.find(sim::metric::kEnergyJPerToken); e && *e > 0) return 1.0 / *e;
    return std::nullopt;
  }
  if (metric == "capex_usd") return optimistic_bounds(s).capex_usd;
  return std::nullopt;
}

PlanResult run_plan(const PlanSpec& spec, const config::Catalog& catalog, const PlanOptions& options) {
  const double t0 = monotonic_s();
  sweep::check_axis_values(spec.space, catalog);
  const std::size_t n = spec.space.point_count();
  PlanResult out;
  PlanStats& st = out.stats;
  st.considered = n;
  const ExecutionModel em;

  // Phase 1, no simulation: build each point, check capacity, budget and the optimistic bounds.
  enum class Verdict { kInvalid, kCapacity, kConstraint, kSurvivor, kEquivalent };
  std::vector<Candidate> cands(n);
  std::vector<Verdict> verdict(n, Verdict::kInvalid);
  std::vector<std::string> pruned_by(n);
  // Why each point left the race, for PlanResult::verdicts ("" for the feasible ones).
  std::vector<std::string> reason(n);
  // Building every point is most of a pruned plan's time: a stop (Ctrl-C) is honoured here too,
  // not only between simulations.
  const auto stopped = [&] { return options.stop && *options.stop; };
  // Points that resolve to the same scenario (e.g. an I/O path with no weights on NVMe) are one
  // configuration: the first in space order stands for the others. Only it is checked: the
  // others' checks would read the same values (over a third of opt66b-10tps's points). So only
  // its scenario is kept: a point's is freed as soon as a point before it in space order is known
  // to share its hash, mostly on the thread that made it, so that thousands of them are not
  // all freed at the end (glibc frees another thread's blocks under that arena's lock).
  std::vector<std::string> hash(n);
  std::mutex first_mu;
  std::unordered_map<std::string, std::size_t> first_seen;  // hash -> lowest point loaded so far
  study::parallel_for(n, options.threads, [&](std::size_t i) {
    if (stopped()) return;
    Candidate& c = cands[i];
    c.point = sweep::point_at(spec.space, i);
    try {
      c.scenario = sweep::load_point(spec.space, c.point, catalog);
    } catch (const Error& e) {
      reason[i] = std::string("invalid: ") + e.what();
      return;
    }
    verdict[i] = Verdict::kSurvivor;  // until checked below
    hash[i] = c.scenario.hash;
    std::size_t later = n;  // a point after this one that no longer stands for the hash
    {
      std::lock_guard lock(first_mu);
      const auto [it, fresh] = first_seen.emplace(hash[i], i);
      if (!fresh && it->second < i) {
        later = i;  // an earlier point stands for this one
      } else if (!fresh) {
        later = it->second;  // this one stands for that one now
        it->second = i;
      }
    }
    if (later < n) cands[later].scenario = Scenario{};
  });
  if (stopped()) throw Interrupted("plan interrupted");
  // Every point loaded, first_seen holds the first point in space order of each hash.
  for (std::size_t i = 0; i < n; ++i) {
    if (verdict[i] == Verdict::kInvalid) continue;
    const std::size_t first = first_seen.at(hash[i]);
    if (first == i) continue;
    cands[first].equivalent.push_back(cands[i].point.label);
    verdict[i] = Verdict::kEquivalent;
    reason[i] = "the same configuration as " + cands[first].point.label;
  }
  study::parallel_for(n, options.threads, [&](std::size_t i) {
    if (verdict[i] != Verdict::kSurvivor) return;
    Candidate& c = cands[i];
    // The weight modules, worked out once for the capacity check and the bounds.
    std::vector<WeightModule> modules;
    if (has_capability(c.scenario, kCapFixedBatch)) {
      modules = weight_modules(c.scenario.model, c.scenario.policy);
      if (const CapacityReport cap = inference_capacity(c.scenario, em, modules); !cap.fits) {
        verdict[i] = Verdict::kCapacity;
        reason[i] = "memory: does not fit (" + cap.shortfall + ")";
        c.scenario = Scenario{};  // out of the race: only its hash is reported
        return;
      }
    }
    c.bounds = optimistic_bounds(c.scenario, em, modules);
    if (!options.prune) return;
    for (const auto& con : spec.constraints) {
      const auto v = optimistic_value(c.bounds, con.metric);
      // The optimistic value is a bound in the metric's better direction; it refutes a constraint
      // only on that side (an upper bound on throughput can miss a minimum, never a maximum).
      const auto it = known_senses().find(con.metric);
      if (!v || it == known_senses().end()) continue;
      const bool exact = con.metric == "capex_usd";
      const bool miss = it->second == Sense::kMaximize ? (con.min && *v < *con.min) || (exact && con.max && *v > *con.max)
                                                       : (con.max && *v > *con.max) || (exact && con.min && *v < *con.min);
      if (miss) {
        verdict[i] = Verdict::kConstraint;
        pruned_by[i] = con.metric;
        reason[i] = std::string(exact ? "budget: " : "constraint: ") + con.metric + " " +
                    (exact ? "" : "at best ") + config::format_number(*v) + " " + limit_text(con);
        c.scenario = Scenario{};  // out of the race: only its hash is reported
        return;
      }
    }
  });
  std::vector<std::size_t> survivors;
  for (std::size_t i = 0; i < n; ++i) switch (verdict[i]) {
      case Verdict::kEquivalent: ++st.equivalent; break;
      case Verdict::kInvalid: ++st.invalid; break;
      case Verdict::kCapacity: ++st.pruned_capacity; break;
      case Verdict::kConstraint: ++st.pruned_constraint[pruned_by[i]]; break;
      case Verdict::kSurvivor: survivors.push_back(i); break;
    }

  // Phase 2: simulate best optimistic objective first, in parallel batches; between batches,
  // skip points that cannot enter the top list nor the Pareto front.
  const Goal& obj = spec.objective;
  auto opt_obj = [&](std::size_t i) { return optimistic_value(cands[i].bounds, obj.metric); };
  std::stable_sort(survivors.begin(), survivors.end(), [&](std::size_t a, std::size_t b) {
    const auto va = opt_obj(a), vb = opt_obj(b);
    if (!va) return vb.has_value();  // no bound: cannot be pruned, simulate first
    if (!vb) return false;
    return obj.better(*va, *vb);
  });
  std::vector<std::size_t> best;         // feasible, sorted best first
  std::vector<std::size_t> front;        // feasible, non-dominated
  std::vector<std::vector<double>> front_values;
  auto value_of = [&](std::size_t i, const std::string& m) {
    return metric_value(cands[i].scenario, cands[i].result, m);
  };
  auto cannot_improve = [&](std::size_t i) {
    if (!options.prune) return false;
    // Top list: full, and the bound is no better than its last entry.
    const auto v = opt_obj(i);
    if (!v || best.size() < spec.top) return false;
    if (obj.better(*v, *value_of(best.back(), obj.metric))) return false;
    if (spec.pareto.empty()) return true;
    // Front: the optimistic point is dominated by (or equal to) a feasible simulated one.
    std::vector<double> o;
    for (const auto& g : spec.pareto) {
      const auto ov = optimistic_value(cands[i].bounds, g.metric);
      if (!ov) return false;
      o.push_back(*ov);
    }
    for (const auto& f : front_values) {
      bool no_better = true;
      for (std::size_t k = 0; k < o.size(); ++k)
        if (spec.pareto[k].better(o[k], f[k])) no_better = false;
      if (no_better) return true;
    }
    return false;
  };
  // The order of the top list: the objective, ties (equal to 1e-9 relative) broken by the lower
  // capex (kTieBreak), then by the point's place in the plan's space, so that the same plan
  // lists the same configurations in the same order whichever was simulated first.
  const auto ranks_before = [&](std::size_t a, std::size_t b) {
    const double va = *value_of(a, obj.metric), vb = *value_of(b, obj.metric);
    if (std::fabs(va - vb) > 1e-9 * std::max(std::fabs(va), std::fabs(vb)))
      return obj.better(va, vb);
    const auto ca = value_of(a, kTieBreak), cb = value_of(b, kTieBreak);
    if (ca && cb && *ca != *cb) return *ca < *cb;
    return a < b;
  };
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = options.threads > 0 ? std::size_t(options.threads) : hw;
  // Small batches let the bound prune between them. Without pruning there is nothing to decide
  // between batches, and each waits for its slowest point (a tensor-parallel point simulates
  // several times longer than a single-GPU one): large batches keep every thread busy, and
  // still report progress.
  const std::size_t batch_size = options.prune ? 2 * threads : 64 * threads;
  // Workload runs by key, for the points that share them (below).
  std::map<std::string, sim::RunResult> shared_runs;
  std::string missing_metric;
  for (std::size_t pos = 0; pos < survivors.size();) {
    std::vector<std::size_t> batch;
    while (pos < survivors.size() && batch.size() < batch_size) {
      const std::size_t i = survivors[pos++];
      if (cannot_improve(i)) {
        ++st.pruned_objective;
        reason[i] = "objective: its optimistic " + obj.metric + " cannot enter the top " +
                    std::to_string(spec.top) + (spec.pareto.empty() ? "" : " nor the Pareto front");
      } else
        batch.push_back(i);
    }
    if (options.on_progress && !batch.empty())
      options.on_progress(st.simulated, batch.size() + (survivors.size() - pos));
    std::vector<char> failed(batch.size(), 0);
    std::vector<std::string> no_capacity(batch.size());
    const auto simulate_point = [&](std::size_t k, auto&& how) {
      // Outside the try below, which records a point's errors: parallel_for rethrows this one.
      if (stopped()) throw Interrupted("plan interrupted");
      Candidate& c = cands[batch[k]];
      try {
        c.result = how(c);
        c.simulated = true;
      } catch (const Error& e) {
        failed[k] = 1;
        c.why_not = e.what();
        reason[batch[k]] = std::string("invalid: ") + e.what();
      }
    };
    // Points whose scenarios differ only in keys their workload reads through its capacity
    // report alone (sim::capacity_only_keys: the host's DRAM size for ZeRO-Inference) share one
    // workload run: the first of them in the batch runs it, the others take it with their own
    // capacity report, energy and cost (sim::simulate_like, bit for bit simulate()). Keyed by the
    // hash of the resolved scenario without those keys, as points are by their scenario's hash
    // (the text itself, 10 kB, was copied into and compared in the maps below).
    enum class Role { kAlone, kRuns, kShares };
    std::vector<Role> role(batch.size(), Role::kAlone);
    std::vector<std::string> key(batch.size());
    if (!spec.capacity)
      study::parallel_for(batch.size(), options.threads, [&](std::size_t k) {
        Scenario& s = cands[batch[k]].scenario;
        if (const auto keys = sim::capacity_only_keys(s); !keys.empty())
          key[k] = config::stable_hash(config::resolved_yaml_without(s, keys));
      });
    std::map<std::string, std::size_t> runner;  // key -> the batch position that runs it
    for (std::size_t k = 0; k < batch.size(); ++k) {
      if (key[k].empty()) continue;
      if (shared_runs.count(key[k]) || !runner.emplace(key[k], k).second)
        role[k] = Role::kShares;
      else
        role[k] = Role::kRuns;
    }
    std::vector<std::optional<sim::RunResult>> workload_run(batch.size());
    study::parallel_for(batch.size(), options.threads, [&](std::size_t k) {
      if (role[k] == Role::kShares) return;
      if (role[k] == Role::kRuns) {
        simulate_point(k, [&](const Candidate& p) {
          workload_run[k] = sim::run_workload(p.scenario);
          return sim::finish_run(p.scenario, *workload_run[k]);
        });
        return;
      }
      simulate_point(k, [&](Candidate& p) {
        if (spec.capacity && has_capability(p.scenario, kCapArrivalRate)) {
          // The point at the highest rate it sustains; the rate is one more override, so the
          // scenario written out (and stored) carries it.
          const auto at_rate = [&](double rate) {
            sweep::Point pt = p.point;
            pt.overrides.push_back("workload.arrival_rate=" + format::exact(rate));
            pt.settings.emplace_back(pt.overrides.back());
            return sweep::load_point(spec.space, pt, catalog);
          };
          const capacity::ServingCapacity cap =
              capacity::search_serving_capacity(p.scenario, at_rate, *spec.capacity);
          p.capacity = capacity::answer_of(p.scenario, spec.capacity->criteria, cap);
          // Without a sustained rate, the lowest rate tried (the zero-load probe that showed the
          // targets missed with nothing queued), as `tiersim capacity --db` stores it.
          const capacity::RatePoint& at = *cap.entry();
          p.scenario = at.scenario;
          if (!cap.found) no_capacity[k] = "sustains no rate: " + cap.limit;
          return at.result;
        }
        return sim::simulate(p.scenario);
      });
    });
    for (std::size_t k = 0; k < batch.size(); ++k)
      if (workload_run[k]) shared_runs.emplace(key[k], std::move(*workload_run[k]));
    study::parallel_for(batch.size(), options.threads, [&](std::size_t k) {
      if (role[k] != Role::kShares) return;
      simulate_point(k, [&](const Candidate& p) {
        // The point that ran it failed: this one is simulated, for its own error.
        const auto it = shared_runs.find(key[k]);
        return it == shared_runs.end() ? sim::simulate(p.scenario)
                                       : sim::simulate_like(p.scenario, it->second);
      });
    });
    for (std::size_t k = 0; k < batch.size(); ++k)
      if (role[k] == Role::kShares && !failed[k] && shared_runs.count(key[k])) ++st.shared;
    for (std::size_t k = 0; k < batch.size(); ++k) {
      const std::size_t i = batch[k];
      Candidate& c = cands[i];
      if (failed[k]) {
        ++st.invalid;
        continue;
      }
      ++st.simulated;
      if (options.on_simulated) options.on_simulated(c);
      if (!c.result.fits) {
        c.why_not = "does not fit: " + c.result.shortfall;
        reason[i] = "memory: " + c.why_not;
        continue;
      }
      if (!no_capacity[k].empty()) {
        c.why_not = no_capacity[k];
        reason[i] = "SLO: " + c.why_not;
        out.no_capacity.push_back(c);
        continue;
      }
      // The bounds must hold for every simulated point; a violation means pruning was unsafe.
      for (const sim::MetricDecl& metric : {sim::metric::kThroughputTokensPerS, sim::metric::kTtftS,
                                            sim::metric::kUsdPerMillionTokens}) {
        const std::string m(metric.name);
        const auto g = known_senses().find(m);
        const auto bound = optimistic_value(c.bounds, m);
        const auto actual = value_of(i, m);
        if (!bound || !actual) continue;
        const bool beaten = g->second == Sense::kMaximize ? *actual > *bound * (1 + 1e-9)
                                                          : *actual < *bound * (1 - 1e-9);
        if (beaten) ++st.bound_violations;
      }
      c.feasible = true;
      for (const auto& con : spec.constraints) {
        const auto v = value_of(i, con.metric);
        if (!v) {
          missing_metric = con.metric;
          c.feasible = false;
          break;
        }
        if (!con.met(*v)) {
          c.feasible = false;
          c.why_not = con.metric + " = " + config::format_number(*v) + " " + limit_text(con);
          reason[i] = (con.metric == "capex_usd" ? "budget: " : "constraint: ") + c.why_not;
          break;
        }
      }
      const auto ov = value_of(i, obj.metric);
      if (!ov) missing_metric = obj.metric;
      if (!c.feasible || !ov) continue;
      ++st.feasible;
      // A configuration with the same timings as one listed differs from it only in hardware the
      // run does not use (drives when the weights are on the GPU, DRAM nothing spills to): the two
      // are listed once, the better ranked (the cheaper, on a tie) standing for both. Another host
      // platform is another server, not unused hardware: a GPU-only run's timings do not depend
      // on it, so hosts are ranked apart (issue 33).
      const auto twin = std::find_if(best.begin(), best.end(), [&](std::size_t j) {
        return cands[j].scenario.hardware.host.name == c.scenario.hardware.host.name &&
               sim::same_timings(cands[j].result.metrics, c.result.metrics) &&
               sweep::differ_in_hardware_only(cands[j].point.label, c.point.label);
      });
      if (twin != best.end()) {
        const std::size_t j = *twin;
        const std::size_t keep = ranks_before(j, i) ? j : i, drop = keep == j ? i : j;
        cands[keep].same_timings.push_back(twin_text(cands[drop], cands[keep]));
        for (auto& t : cands[drop].same_timings) cands[keep].same_timings.push_back(std::move(t));
        cands[drop].same_timings.clear();
        if (keep == i) {
          best.erase(twin);
          best.insert(std::upper_bound(best.begin(), best.end(), i, ranks_before), i);
        }
      } else {
        best.insert(std::upper_bound(best.begin(), best.end(), i, ranks_before), i);
        if (best.size() > spec.top) best.pop_back();
      }
      if (!spec.pareto.empty()) {
        std::vector<double> pv;
        for (const auto& g : spec.pareto) {
          const auto v = value_of(i, g.metric);
          if (!v) {
            missing_metric = g.metric;
            break;
          }
          pv.push_back(*v);
        }
        if (pv.size() != spec.pareto.size()) continue;
        bool dominated = false;
        for (const auto& f : front_values)
          if (dominates(f, pv, spec.pareto)) dominated = true;
        if (dominated) continue;
        for (std::size_t k = front.size(); k-- > 0;)
          if (dominates(pv, front_values[k], spec.pareto)) {
            front.erase(front.begin() + static_cast<std::ptrdiff_t>(k));
            front_values.erase(front_values.begin() + static_cast<std::ptrdiff_t>(k));
          }
        front.push_back(i);
        front_values.push_back(pv);
      }
    }
  }
  if (!missing_metric.empty() && st.feasible == 0)
    throw ModelError("plan '" + spec.name + "': the simulator does not report metric '" + missing_metric +
                     "' for these scenarios (see `tiersim run --json` for the metrics it does report)");
  for (std::size_t i : best) out.best.push_back(cands[i]);
  for (std::size_t i = 0; i < n; ++i) {
    const Candidate& c = cands[i];
    // A point still holding its scenario reports that one's hash: a capacity search replaces it
    // with the scenario at the rate it sustains.
    PointVerdict v{c.point.label, c.scenario.hash.empty() ? hash[i] : c.scenario.hash, "",
                   reason[i], std::nullopt};
    // A search of a point that does not fit says nothing its memory verdict does not.
    if (c.simulated && c.result.fits) v.capacity = c.capacity;
    if (c.feasible)
      v.status = "feasible";
    else if (verdict[i] == Verdict::kEquivalent)
      v.status = "equivalent";
    else if (c.simulated)
      v.status = "rejected";
    else
      v.status = verdict[i] == Verdict::kInvalid || reason[i].rfind("invalid: ", 0) == 0
                     ? "invalid"
                     : "pruned";
    out.verdicts.push_back(std::move(v));
  }
  std::vector<std::size_t> order(front.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return spec.pareto[0].better(front_values[a][0], front_values[b][0]);
  });
  for (std::size_t k : order) out.pareto.push_back(cands[front[k]]);
  // Every point's resolved scenario is freed on all threads, not on this one alone at the
  // return: thousands of them, a few hundred blocks each, were a tenth of a plan's time.
  study::parallel_for(n, options.threads, [&](std::size_t i) { cands[i] = Candidate{}; });
  st.wall_s = monotonic_s() - t0;
  return out;
}

}  // namespace tiersim::plan
