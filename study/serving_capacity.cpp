#include "study/serving_capacity.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/format.hpp"
#include "model/errors.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/serving/metrics.hpp"
#include "sim/workloads/traits.hpp"

namespace tiersim::capacity {

namespace {

std::string pct(double v) {
  return format::fixed(v, 1) + "%";
}

std::string seconds(double v) {
  return format::significant(v, 3) + " s";
}

// The percentile of a latency the attainment target speaks of: the reported one at or above it
// (90% of requests within the target: the 90th percentile must meet it).
struct Percentile {
  double pct;
  const sim::MetricDecl& ttft;
  const sim::MetricDecl& tpot;
  const char* name;
};
const Percentile& percentile_for(double attainment_pct) {
  static const Percentile kReported[] = {
      {50, sim::metric::kTtftP50S, sim::metric::kTpotP50S, "p50"},
      {90, sim::metric::kTtftP90S, sim::metric::kTpotP90S, "p90"},
      {99, sim::metric::kTtftP99S, sim::metric::kTpotP99S, "p99"}};
  for (const Percentile& p : kReported)
    if (attainment_pct <= p.pct) return p;
  return kReported[2];
}

}  // namespace

std::string zero_load_reason(const Scenario& s, const sim::RunResult& r, const ServingCriteria& c) {
  if (!r.fits) return "does not fit: " + r.shortfall;
  const ServingWorkload& w = s.serving;
  const Percentile& p = percentile_for(c.attainment_pct);
  std::string out;
  const auto missed = [&](const char* what, const sim::MetricDecl& m, double target_s) {
    if (!(target_s > 0)) return;
    const auto v = r.find(m);
    if (!v || *v <= target_s) return;
    out += (out.empty() ? "" : "; ") + std::string("zero-load ") + what + " " + p.name + " " +
           seconds(*v) + " > " + seconds(target_s) + " target";
  };
  if (c.check_slo) {
    missed("TTFT", p.ttft, w.slo_ttft_s);
    missed("TPOT", p.tpot, w.slo_tbt_s);
  }
  // Each target alone is met at its percentile, but not both by the same requests.
  if (out.empty()) out = serving_verdict(s, r, c) + " at zero load";
  return out;
}

Scenario with_rate(Scenario s, double rate_per_s) {
  s.serving.arrival_rate_per_s = rate_per_s;
  return s;
}

std::string serving_verdict(const Scenario& s, const sim::RunResult& r, const ServingCriteria& c) {
  if (!r.fits) return "does not fit: " + r.shortfall;
  const ServingWorkload& w = s.serving;
  const bool slo = c.check_slo && (w.slo_ttft_s > 0 || w.slo_tbt_s > 0);
  if (slo) {
    const double attained = r.get(sim::metric::kSloAttainmentPct);
    if (attained < c.attainment_pct)
      return "slo attainment " + pct(attained) + " < " + pct(c.attainment_pct);
  }
  if (c.check_stability) {
    // Noise on delays far below the time scale that matters is not drift: a tenth of the TTFT
    // target, or without one of the run's median TTFT (about one prefill at low load).
    const double scale_s = slo && w.slo_ttft_s > 0 ? w.slo_ttft_s : r.get(sim::metric::kTtftP50S);
    const double drift = r.get(sim::metric::kQueueDelayDriftS);
    const double allowed = 0.5 * r.get(sim::metric::kQueueDelayMeanS) + 0.1 * scale_s;
    if (drift > allowed)
      return "queue not stable: queueing delay grows by " + seconds(drift) +
             " from the middle to the last third of the run (allowed " + seconds(allowed) + ")";
  }
  return "";
}

ServingCapacity search_serving_capacity(const Scenario& base, const AtRate& at_rate,
                                        const SearchOptions& options, const OnPoint& on_point) {
  if (!has_capability(base, kCapArrivalRate))
    throw ConfigError(base.file, 0, "workload.kind",
                      "the serving capacity search needs a serving workload");
  if (!base.serving.trace.empty())
    throw ConfigError(base.file, 0, "workload.trace",
                      "the capacity search varies workload.arrival_rate, and a trace fixes the "
                      "arrivals; use a synthetic stream (arrival_rate with prompt_dist and "
                      "output_dist fitted to the trace)");
  const double start =
      options.start_rate_per_s > 0 ? options.start_rate_per_s : base.serving.arrival_rate_per_s;
  if (!(start > 0) || !std::isfinite(start))
    throw ConfigError(base.file, 0, "workload.arrival_rate",
                      "the capacity search starts from a positive arrival rate");
  if (!(options.tolerance > 0) || options.max_runs < 2)
    throw ModelError("capacity search: the tolerance must be positive and at least 2 runs allowed");

  ServingCapacity out;
  // The bracket: `lo` passed, `hi` failed (indices into out.points).
  std::optional<std::size_t> lo, hi;
  auto run = [&](double rate) {
    RatePoint p;
    p.rate_per_s = rate;
    p.scenario = at_rate(rate);
    sim::SimOptions sim_options;
    sim_options.stop = options.stop;
    p.result = sim::simulate(p.scenario, sim_options);
    p.why_not = serving_verdict(p.scenario, p.result, options.criteria);
    p.meets = p.why_not.empty();
    out.points.push_back(std::move(p));
    (out.points.back().meets ? lo : hi) = out.points.size() - 1;
    if (on_point) on_point(out.points.back());
    return out.points.back().meets;
  };
  const auto runs_left = [&] { return int(out.points.size()) < options.max_runs; };
  const auto rate = [&](std::size_t i) { return out.points[i].rate_per_s; };

  // Bracket: double from a passing start until a rate fails, halve from a failing one until one
  // passes. Memory does not depend on the rate, so a start that does not fit ends the search.
  if (run(start)) {
    for (double r = 2 * start; runs_left() && run(r); r *= 2) {
    }
  } else if (out.points.back().result.fits) {
    // A millionth of the start rate: the requests arrive one at a time, with no queue. If they
    // miss the targets even then, no rate meets them, and halving 20 times towards it would only
    // say so 20 runs later.
    const double zero_load = kZeroLoadFraction * start;
    if (runs_left() && !run(zero_load)) {
      out.zero_load_miss = true;
      out.zero_load_rate_per_s = zero_load;
      out.failing_rate_per_s = zero_load;
      out.limit = "cannot meet the SLO at any load: " +
                  zero_load_reason(out.points.back().scenario, out.points.back().result,
                                   options.criteria);
      return out;
    }
    // It passed: halve from the start until a rate passes, then bisect below.
    for (double r = start / 2; runs_left() && r > zero_load && !run(r); r /= 2) {
    }
  }
  // Bisect it. Only the bracket moves, so a rate that passes above one that failed (a run's noise
  // near the knee) cannot raise the answer past a failure.
  if (lo && hi)
    while (runs_left() && rate(*hi) - rate(*lo) > options.tolerance * rate(*lo)) {
      const double mid = 0.5 * (rate(*lo) + rate(*hi));
      run(mid);
    }
  out.found = lo.has_value();
  out.unbounded = lo && !hi;
  if (lo) {
    out.best = *lo;
    out.rate_per_s = rate(*lo);
    // The run at capacity carries the rate and what a request costs at it. A finite run's
    // requests_per_s (completions over the run, its drain included) understates the rate a
    // stable server completes requests at, which in steady state is the arrival rate.
    sim::RunResult& r = out.points[*lo].result;
    r.set(sim::metric::kCapacityRequestsPerS, out.rate_per_s);
    if (r.has(sim::metric::kUsdPerHour))
      r.set(sim::metric::kUsdPerRequestAtCapacity,
            r.get(sim::metric::kUsdPerHour) / (out.rate_per_s * 3600.0));
    if (const double traffic = options.traffic_requests_per_s; traffic > 0) {
      // Whole servers: the traffic split evenly over them loads each at traffic / servers, at
      // most its capacity.
      const double servers = std::ceil(traffic / out.rate_per_s);
      r.set(sim::metric::kServersForTraffic, servers);
      r.set(sim::metric::kGpusForTraffic, servers * out.points[*lo].scenario.hardware.gpu_count);
      if (r.has(sim::metric::kUsdPerHour))
        r.set(sim::metric::kUsdPerRequestForTraffic,
              servers * r.get(sim::metric::kUsdPerHour) / (traffic * 3600.0));
    }
  }
  if (hi) {
    out.failing_rate_per_s = rate(*hi);
    out.limit = out.points[*hi].why_not;
  }
  return out;
}

const RatePoint* ServingCapacity::entry() const {
  if (found) return &points[best];
  if (points.empty()) return nullptr;
  return &*std::min_element(points.begin(), points.end(), [](const RatePoint& x, const RatePoint& y) {
    return x.rate_per_s < y.rate_per_s;
  });
}

SearchAnswer answer_of(const Scenario& base, const ServingCriteria& criteria,
                       const ServingCapacity& c) {
  SearchAnswer a;
  a.attainment_pct = criteria.attainment_pct;
  if (criteria.check_slo && base.serving.slo_ttft_s > 0) a.slo_ttft_s = base.serving.slo_ttft_s;
  if (criteria.check_slo && base.serving.slo_tbt_s > 0) a.slo_tbt_s = base.serving.slo_tbt_s;
  a.stability = criteria.check_stability;
  a.found = c.found;
  a.unbounded = c.unbounded;
  a.zero_load_miss = c.zero_load_miss;
  if (c.found) a.rate_per_s = c.rate_per_s;
  if (std::isfinite(c.failing_rate_per_s)) a.failing_rate_per_s = c.failing_rate_per_s;
  a.limit = c.limit;
  return a;
}

}  // namespace tiersim::capacity
