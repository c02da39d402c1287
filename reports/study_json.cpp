#include "reports/study_json.hpp"

#include <algorithm>
#include <cmath>

#include "common/format.hpp"
#include "config/economics_sources.hpp"
#include "reports/notes_section.hpp"
#include "reports/run_output.hpp"
#include "sim/economics.hpp"
#include "sim/metrics.hpp"
#include "sim/workloads/serving/metrics.hpp"

namespace tiersim::reports {

namespace {

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

const char* sense_name(plan::Sense sense) {
  return sense == plan::Sense::kMinimize ? "minimize" : "maximize";
}

// The closest configurations that fit (study/fit_search.hpp), as run and capacity give them.
nlohmann::json closest_fits_json(const std::vector<fit::Suggestion>& closest) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : closest)
    list.push_back({{"what", c.what}, {"set", c.sets}, {"detail", c.detail}});
  return list;
}

}  // namespace

// ---- run --------------------------------------------------------------------------------------

nlohmann::json run_json(const Scenario& scenario, const sim::RunResult& result,
                        const std::vector<fit::Suggestion>& closest,
                        const std::optional<validation::RunAccuracy>& accuracy) {
  nlohmann::json j = to_json(scenario, result);
  const auto energy = energy_bands(accuracy, result);
  j["accuracy"] = accuracy_json(error_band(accuracy), energy ? &*energy : nullptr);
  if (!closest.empty()) j["closest_fits"] = closest_fits_json(closest);
  return j;
}

// ---- compare ----------------------------------------------------------------------------------

nlohmann::json compare_sources_json(const studies::CompareRow& row) {
  nlohmann::json src = config::economics_sources(*row.scenario);
  if (const std::string note = sim::dram_note(*row.scenario, row.result); !note.empty())
    src["power"]["hardware.host.dram_gb"] = {
        {"value", row.result.get(sim::metric::kDramSizedGb)}, {"unit", "GB"}, {"source", note}};
  return src;
}

nlohmann::json compare_json(const studies::CompareOutcome& outcome) {
  const config::Comparison& cmp = outcome.comparison;
  const auto& rows = outcome.rows;
  nlohmann::json j;
  j["comparison"] = cmp.name;
  if (!cmp.description.empty()) j["description"] = cmp.description;
  j["baseline"] = rows.empty() ? nlohmann::json() : nlohmann::json(rows.front().name);
  j["metrics"] = sim::comparison_metrics();
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json v;
    v["name"] = r.name;
    v["fits"] = r.error.empty() && r.result.fits;
    if (!r.error.empty()) v["error"] = r.error;
    if (!r.result.fits) v["shortfall"] = r.result.shortfall;
    if (!r.note.empty()) v["note"] = r.note;
    if (r.scenario) {
      v["scenario"] = r.scenario->name;
      v["scenario_hash"] = r.scenario->hash;
      v["file"] = r.scenario->file;
      const std::string note = sim::cost_note(*r.scenario);
      if (!note.empty()) v["cost_note"] = note;
      if (const std::string dram = sim::dram_note(*r.scenario, r.result); !dram.empty())
        v["dram_note"] = dram;
      if (!r.scenario->notes.empty()) v["notes"] = notes_json(r.scenario->notes);
      v["sources"] = compare_sources_json(r);
      v["accuracy"] = accuracy_json(error_band(r.accuracy));
    }
    nlohmann::json metrics = nlohmann::json::object(), units = nlohmann::json::object();
    for (const auto& m : r.result.metrics) {
      metrics[m.name] = m.value;
      units[m.name] = m.unit;
    }
    v["metrics"] = metrics;
    v["units"] = units;
    nlohmann::json ratios = nlohmann::json::object();
    for (const auto& [name, ratio] : sim::metric_ratios(r.result, rows.front().result))
      ratios[name] = ratio;
    v["ratios"] = ratios;
    if (!r.result.bottleneck.empty()) v["bottleneck"] = r.result.bottleneck;
    if (!r.result.phases.empty()) v["phases"] = breakdown_json(r.result);
    variants.push_back(std::move(v));
  }
  j["variants"] = variants;
  return j;
}

// ---- capacity ---------------------------------------------------------------------------------

namespace {

nlohmann::json serving_capacity_json(const studies::CapacityOutcome& o,
                                     const capacity::SearchOptions& search) {
  const ServingWorkload& w = o.base.serving;
  const capacity::ServingCapacity& c = o.rates;
  nlohmann::json j;
  j["scenario"] = o.base.name;
  j["criteria"] = {{"attainment_pct", search.criteria.attainment_pct},
                   {"slo", search.criteria.check_slo},
                   {"stability", search.criteria.check_stability},
                   {"tolerance", search.tolerance}};
  if (w.slo_ttft_s > 0) j["criteria"]["slo_ttft_s"] = w.slo_ttft_s;
  if (w.slo_tbt_s > 0) j["criteria"]["slo_tbt_s"] = w.slo_tbt_s;
  j["found"] = c.found;
  j["unbounded"] = c.unbounded;
  j[std::string(sim::metric::kCapacityRequestsPerS.name)] =
      c.found ? nlohmann::json(c.rate_per_s) : nlohmann::json();
  j["failing_rate_requests_per_s"] =
      std::isfinite(c.failing_rate_per_s) ? nlohmann::json(c.failing_rate_per_s) : nlohmann::json();
  j["limit"] = c.limit;
  j["zero_load_miss"] = c.zero_load_miss;
  j["points"] = nlohmann::json::array();
  for (const std::size_t i : o.by_rate) {
    const capacity::RatePoint& p = c.points[i];
    nlohmann::json m = nlohmann::json::object();
    for (const auto& x : p.result.metrics) m[x.name] = x.value;
    j["points"].push_back({{"rate_requests_per_s", p.rate_per_s},
                           {"sustained", p.meets},
                           {"why_not", p.why_not},
                           {"fits", p.result.fits},
                           {"metrics", m}});
  }
  const capacity::RatePoint* best = c.at_capacity();
  j["at_capacity"] = best ? to_json(best->scenario, best->result) : nlohmann::json();
  if (!o.closest.empty()) j["closest_fits"] = closest_fits_json(o.closest);
  return j;
}

nlohmann::json training_capacity_json(const studies::CapacityOutcome& o) {
  nlohmann::json j;
  j["scenario"] = o.base.name;
  j["strategies"] = nlohmann::json::array();
  for (const auto& s : o.strategies) {
    nlohmann::json row = {{"strategy", s.strategy}, {"found", s.search.found}};
    if (s.search.found) {
      row["max_params"] = s.search.params;
      row["layers"] = s.search.model.layers;
      row["hidden"] = s.search.model.hidden;
    } else {
      row["max_params"] = nullptr;
      row["layers"] = nullptr;
      row["hidden"] = nullptr;
    }
    // What stops the next larger model (its shortfall), or why the strategy does not apply.
    row["limit"] = s.no_nvme ? std::string("no NVMe drives") : s.search.limit;
    j["strategies"].push_back(std::move(row));
  }
  return j;
}

}  // namespace

nlohmann::json capacity_json(const studies::CapacityOutcome& outcome,
                             const capacity::SearchOptions& search) {
  return outcome.serving ? serving_capacity_json(outcome, search) : training_capacity_json(outcome);
}

// ---- plan -------------------------------------------------------------------------------------

nlohmann::json plan_json(const studies::PlanOutcome& outcome) {
  const plan::PlanSpec& spec = outcome.spec;
  const plan::PlanResult& r = outcome.result;
  const auto& st = r.stats;
  nlohmann::json j;
  j["plan"] = spec.name;
  if (!spec.description.empty()) j["description"] = spec.description;
  j["objective"] = {{"metric", spec.objective.metric}, {"sense", sense_name(spec.objective.sense)}};
  nlohmann::json pruned = nlohmann::json::object();
  for (const auto& [m, count] : st.pruned_constraint) pruned[m] = count;
  j["stats"] = {{"considered", st.considered},
                {"invalid", st.invalid},
                {"equivalent", st.equivalent},
                {"pruned_capacity", st.pruned_capacity},
                {"pruned_constraint", pruned},
                {"pruned_objective", st.pruned_objective},
                {"simulated", st.simulated},
                {"feasible", st.feasible},
                {"bound_violations", st.bound_violations}};
  auto entry = [&](const plan::Candidate& c, const std::string& file,
                   const std::optional<validation::RunAccuracy>& accuracy) {
    nlohmann::json e;
    e["label"] = c.point.label;
    e["overrides"] = c.point.overrides;
    e["equivalent"] = c.equivalent;
    e["same_timings"] = c.same_timings;
    e["scenario_hash"] = c.scenario.hash;
    e["file"] = file;
    nlohmann::json m = nlohmann::json::object();
    for (const auto& name : outcome.shown_metrics)
      if (const auto v = plan::metric_value(c.scenario, c.result, name)) m[name] = *v;
    e["metrics"] = m;
    e["accuracy"] = accuracy_json(error_band(accuracy));
    return e;
  };
  nlohmann::json best = nlohmann::json::array(), front = nlohmann::json::array();
  for (std::size_t k = 0; k < r.best.size(); ++k)
    best.push_back(entry(r.best[k], outcome.best_files.at(k), outcome.best_accuracy.at(k)));
  for (std::size_t k = 0; k < r.pareto.size(); ++k)
    front.push_back(entry(r.pareto[k], outcome.pareto_files.at(k), outcome.pareto_accuracy.at(k)));
  j["best"] = best;
  if (!spec.pareto.empty()) {
    j["pareto_metrics"] = {spec.pareto[0].metric, spec.pareto[1].metric};
    j["pareto"] = front;
  }
  nlohmann::json none = nlohmann::json::array();
  for (const auto& c : r.no_capacity)
    none.push_back({{"label", c.point.label}, {"why", c.why_not}});
  j["no_capacity"] = none;
  return j;
}

// ---- sensitivity ------------------------------------------------------------------------------

nlohmann::json sensitivity_json(const studies::SensitivityOutcome& outcome) {
  nlohmann::json out;
  out["range"] = outcome.range;
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& t : outcome.tornadoes) {
    nlohmann::json j;
    j["variant"] = t.variant;
    j["metric"] = t.metric;
    if (!t.error.empty()) {
      j["error"] = t.error;
      arr.push_back(j);
      continue;
    }
    j["unit"] = t.unit;
    j["base"] = t.base_metric;
    nlohmann::json rows = nlohmann::json::array(), skipped = nlohmann::json::array();
    for (const auto& r : t.rows) {
      if (!r.skipped.empty()) {
        skipped.push_back({{"key", r.input.key}, {"why", r.skipped}});
        continue;
      }
      nlohmann::json row = {{"key", r.input.key},       {"input", r.input.what},
                            {"key_unit", r.unit},       {"base_value", r.base_value},
                            {"low_value", r.low_value}, {"high_value", r.high_value},
                            {"swing", r.swing()},       {"clamped", r.clamped}};
      row["metric_low"] = optional_json(r.metric_low);
      row["metric_high"] = optional_json(r.metric_high);
      if (!r.error.empty()) row["error"] = r.error;
      rows.push_back(row);
    }
    j["inputs"] = rows;
    j["skipped"] = skipped;
    arr.push_back(j);
  }
  out["configurations"] = arr;
  return out;
}

// ---- breakeven --------------------------------------------------------------------------------

namespace {

std::string num6(double v) {
  return format::significant(v, 6);
}

// The first and last samples where both configurations ran.
std::pair<const sensitivity::BreakEvenSample*, const sensitivity::BreakEvenSample*> ends(
    const sensitivity::BreakEven& be) {
  const sensitivity::BreakEvenSample *first = nullptr, *last = nullptr;
  for (const auto& s : be.scan)
    if (s.metric_a && s.metric_b) {
      if (!first) first = &s;
      last = &s;
    }
  return {first, last};
}

}  // namespace

std::string breakeven_better_at(const sensitivity::BreakEvenSample& s,
                                const sensitivity::BreakEven& be, plan::Sense sense) {
  if (!s.metric_a || !s.metric_b) return "";
  if (*s.metric_a == *s.metric_b) return "tie";
  const bool a_lower = *s.metric_a < *s.metric_b;
  return (a_lower == (sense == plan::Sense::kMinimize)) ? be.a : be.b;
}

std::string breakeven_verdict(const sensitivity::BreakEven& be, plan::Sense sense) {
  const std::string key = be.key + (be.key_unit.empty() ? "" : " (" + be.key_unit + ")");
  auto [first, last] = ends(be);
  if (!first)
    return "no answer: at no value scanned from " + num6(be.low) + " to " + num6(be.high) +
           " do both configurations run";
  if (be.equal_everywhere)
    return "'" + be.a + "' and '" + be.b + "' give the same " + be.metric + " at every value of " +
           key + " scanned from " + num6(*be.runs_low) + " to " + num6(*be.runs_high) +
           ": nothing in the range separates them, so there is no break-even value (are they "
           "the same configuration?)";
  if (be.tie) {
    std::string s = "they tie at " + key + " = " + num6(*be.tie);
    if (be.tie_below)
      s += " (whole numbers: between " + num6(*be.tie_below) + " and " + num6(*be.tie_above) + ")";
    s += ", where " + be.metric + " = " + num6(*be.tie_metric) + " " + be.unit + "; '" +
         breakeven_better_at(*first, be, sense) + "' is better below it, '" + breakeven_better_at(*last, be, sense) +
         "' above it";
    if (be.crossings > 1)
      s += " (the order changes " + std::to_string(be.crossings) +
           " times in the range; this is the lowest)";
    return s;
  }
  // "the other is 16.4x" or "by 12.3 %": how far apart they are at one sample.
  auto margin = [&](const sensitivity::BreakEvenSample& x) {
    const double a = *x.metric_a, b = *x.metric_b;
    const double worse = sense == plan::Sense::kMinimize ? std::max(a, b) : std::min(a, b);
    const double best = sense == plan::Sense::kMinimize ? std::min(a, b) : std::max(a, b);
    return format::fixed(100 * std::fabs(worse - best) / std::fabs(best), 1) + " % (the other is " +
           format::significant(worse / best, 3) + "x)";
  };
  const bool part = *be.runs_low > be.low || *be.runs_high < be.high;
  std::string s = "no value of " + key + " from " + num6(*be.runs_low) + " to " +
                  num6(*be.runs_high) + (part ? " (where both fit)" : "") + " makes them tie: '" + breakeven_better_at(*first, be, sense) + "' is better at " +
                  num6(first->value) + " by " + margin(*first) + " and '" +
                  breakeven_better_at(*last, be, sense) + "' at " + num6(last->value) + " by " + margin(*last);
  if (!be.extrapolation_blocked.empty()) {
    s += ". The trend points past the end where a configuration stops fitting (" +
         be.extrapolation_blocked + "): no straight line is drawn across values where one fails";
  } else if (be.extrapolated_tie) {
    const double x = *be.extrapolated_tie;
    s += ". A straight line through the two ends would cross at " + num6(x);
    if (x < be.valid_min || x > be.valid_max)
      s += ", outside the key's valid range (" +
           (be.valid_max >= 1e300 ? ">= " + num6(be.valid_min)
                                  : num6(be.valid_min) + " .. " + num6(be.valid_max)) +
           "): no valid value makes them tie if the trend holds";
    else
      s += "; search there with --between to check";
  } else if (first != last) {
    s += ". The difference does not change with " + be.key + ": no value makes them tie";
  }
  return s;
}

nlohmann::json breakeven_json(const studies::BreakEvenOutcome& outcome) {
  const sensitivity::BreakEven& be = outcome.result;
  const plan::Sense sense = outcome.sense;
  nlohmann::json j = {{"key", be.key},
                      {"key_unit", be.key_unit},
                      {"metric", be.metric},
                      {"unit", be.unit},
                      {"sense", sense_name(sense)},
                      {"a", be.a},
                      {"b", be.b},
                      {"a_uses_key", be.a_uses_key},
                      {"b_uses_key", be.b_uses_key},
                      {"a_value_as_given", be.base_a},
                      {"b_value_as_given", be.base_b},
                      {"low", be.low},
                      {"high", be.high},
                      {"crossings", be.crossings},
                      {"simulations", be.simulations},
                      {"verdict", breakeven_verdict(be, sense)}};
  j["runs_low"] = optional_json(be.runs_low);
  j["runs_high"] = optional_json(be.runs_high);
  j["stops_low"] = be.stops_low;
  j["stops_high"] = be.stops_high;
  j["extrapolation_blocked"] = be.extrapolation_blocked;
  nlohmann::json others = nlohmann::json::array();
  for (const auto& [from, to] : be.other_runs) others.push_back({from, to});
  j["other_runs"] = others;
  nlohmann::json failed = nlohmann::json::array();
  for (const auto& f : be.failed) failed.push_back({{"value", f.value}, {"error", f.error}});
  j["failed"] = failed;
  j["tie"] = optional_json(be.tie);
  j["equal_everywhere"] = be.equal_everywhere;
  j["tie_metric"] = optional_json(be.tie_metric);
  j["extrapolated_tie"] = optional_json(be.extrapolated_tie);
  nlohmann::json scan = nlohmann::json::array();
  for (const auto& s : be.scan) {
    nlohmann::json x = {{"value", s.value}, {"better", breakeven_better_at(s, be, sense)}};
    x["a"] = optional_json(s.metric_a);
    x["b"] = optional_json(s.metric_b);
    if (!s.error.empty()) x["error"] = s.error;
    scan.push_back(x);
  }
  j["scan"] = scan;
  return j;
}

// ---- whatif -----------------------------------------------------------------------------------

nlohmann::json whatif_json(const studies::WhatIfOutcome& outcome) {
  return whatif::to_json(outcome.result);
}

// ---- validate ---------------------------------------------------------------------------------

const char* const kOutOfSampleMethod =
    "leave-one-source-out: the derived constants (scenarios/validation/derivations.yaml) cannot be "
    "re-derived mechanically without a source, so a row counts as in-sample when a constant its "
    "scenario uses was derived from a row of its own source, and the figure is the mean over the "
    "other rows";

nlohmann::json validation_json(const validation::ValidationSummary& v, double max_mape_pct) {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& r : v.rows) {
    nlohmann::json constants = nlohmann::json::array();
    for (const std::size_t i : r.constants_used)
      constants.push_back(v.data.derivations[i].constant);
    cases.push_back({{"case", r.case_name},
                     {"metric", r.metric},
                     {"source", r.source},
                     {"published", r.published},
                     {"predicted", r.predicted},
                     {"error_pct", r.error_pct},
                     {"approx", r.approx},
                     {"role", r.calibration ? "calibration" : "prediction"},
                     {"note", r.note},
                     {"group", r.group},
                     {"ratio_to", r.ratio_to},
                     {"refused", r.refused},
                     {"fed_constant", r.fed_constant},
                     {"source_in_sample", r.source_in_sample},
                     {"constants_used", constants}});
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : v.groups)
    groups.push_back({{"group", g.name},
                      {"rows", g.rows},
                      {"mape_pct", g.mape_pct},
                      {"max_abs_error_pct", g.max_abs_error_pct},
                      {"refused_rows", g.refused_rows},
                      {"no_constant_rows", g.no_constant_rows},
                      {"no_constant_mape_pct", g.no_constant_mape_pct},
                      {"out_of_sample_rows", g.out_of_sample_rows},
                      {"out_of_sample_mape_pct", g.out_of_sample_mape_pct},
                      {"out_of_sample_max_abs_error_pct", g.out_of_sample_max_abs_error_pct},
                      {"error_band_pct",
                       g.rows > 0 ? nlohmann::json(g.error_band_pct()) : nlohmann::json(nullptr)},
                      {"status", g.provisional ? "provisional" : "established"},
                      {"why_provisional", g.why_provisional}});
  nlohmann::json derivations = nlohmann::json::array();
  for (const auto& d : v.data.derivations)
    derivations.push_back({{"constant", d.constant},
                           {"value", d.value},
                           {"derived_from", d.derived_from},
                           {"how", d.how}});
  return nlohmann::json{{"cases", cases},
                        {"groups", groups},
                        {"derived_constants", derivations},
                        {"out_of_sample_method", kOutOfSampleMethod},
                        {"established_within_limit", v.established_within(max_mape_pct)},
                        {"mape_pct", v.mape_pct},
                        {"max_abs_error_pct", v.max_abs_error_pct},
                        {"prediction_mape_pct", v.prediction_mape_pct},
                        {"prediction_max_abs_error_pct", v.prediction_max_abs_error_pct},
                        {"out_of_sample_rows", v.out_of_sample_rows},
                        {"out_of_sample_mape_pct", v.out_of_sample_mape_pct}};
}

// ---- sweep ------------------------------------------------------------------------------------

nlohmann::json sweep_json(const sweep::SweepSummary& s, const std::string& sweep_name,
                          const std::string& db) {
  return nlohmann::json{{"sweep", sweep_name},      {"points", s.points},
                        {"simulated", s.simulated}, {"no_fit", s.no_fit},
                        {"skipped", s.skipped},     {"invalid", s.invalid},
                        {"failures", s.failures},   {"db", db}};
}

nlohmann::json calibration_point_json(const store::CalibrationPoint& p) {
  return {{"target", p.target},
          {"rw", p.rw},
          {"engine", p.engine},
          {"block_bytes", p.block_bytes},
          {"queue_depth", p.queue_depth},
          {"threads", p.threads},
          {"duration_s", p.duration_s},
          {"bytes", p.bytes},
          {"ios", p.ios},
          {"bandwidth_gbps", p.bandwidth_gbps},
          {"iops", p.iops},
          {"lat_mean_us", p.lat_mean_us},
          {"lat_p50_us", p.lat_p50_us},
          {"lat_p90_us", p.lat_p90_us},
          {"lat_p99_us", p.lat_p99_us},
          {"lat_p999_us", p.lat_p999_us},
          {"lat_max_us", p.lat_max_us},
          {"buffer_pages", p.buffer_pages},
          {"buffer_huge_fraction", p.buffer_huge_fraction}};
}

}  // namespace tiersim::reports
