#include "study/studies.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>

#include "common/format.hpp"
#include "config/catalog.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "sim/metrics.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/traits.hpp"
#include "store/capacity_studies.hpp"
#include "store/results_store.hpp"
#include "store/sweep_tables.hpp"

namespace fs = std::filesystem;

namespace tiersim::studies {

void check_stop(const std::atomic<bool>* stop, const std::string& what) {
  if (stop && *stop) throw Interrupted(what + " interrupted");
}

// ---- run --------------------------------------------------------------------------------------

std::vector<fit::Suggestion> closest_fits(const Scenario& scenario, const sim::RunResult& result,
                                          const ExecutionModel& exec) {
  if (result.fits) return {};
  return fit::closest_fits(scenario, with_stack(exec, scenario.policy.stack));
}

// ---- compare ----------------------------------------------------------------------------------

CompareOutcome run_compare(const CompareRequest& request) {
  CompareOutcome out;
  out.comparison = request.comparison;
  const config::CatalogOnce catalogs(request.data_dir);
  const std::optional<validation::AccuracyRecord> accuracy =
      validation::shipped_accuracy(request.data_dir);
  for (const auto& spec : out.comparison.variants) {
    check_stop(request.stop, "compare");
    config::LoadOptions load;
    load.overrides = request.sets;
    load.data_dir = request.data_dir;
    load.catalogs = &catalogs;
    CompareRow row;
    row.note = spec.note;
    row.scenario = config::load_variant(spec, load);
    row.name = spec.name.empty() ? row.scenario->name : spec.name;
    if (accuracy) row.accuracy = validation::run_accuracy(*row.scenario, *accuracy);
    try {
      sim::SimOptions sim_opts;
      // The store keeps one decode step's timeline for the report's Gantt chart.
      sim_opts.trace = !request.db.empty();
      sim_opts.stop = request.stop;
      sim_opts.breakdown = true;  // each configuration's time breakdown
      row.result = sim::simulate(*row.scenario, sim_opts);
      // The variant's own name only: without one the report falls back to the scenario name.
      if (!request.db.empty())
        store::ResultsStore(request.db)
            .save(*row.scenario, row.result, request.tool_version, "", store::OnDuplicate::kReplace,
                  spec.name);
    } catch (const ModelError& e) {
      // One configuration the model cannot express should not hide the others.
      row.error = e.what();
      row.result.fits = false;
      out.failed = true;
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

// ---- capacity ---------------------------------------------------------------------------------

namespace {

// A search's targets and answer as the results database keeps them (capacity --db, plan --db).
store::CapacityStudy stored_answer(const std::string& sweep, const capacity::SearchAnswer& a) {
  store::CapacityStudy st;
  st.sweep = sweep;
  st.attainment_pct = a.attainment_pct;
  st.slo_ttft_s = a.slo_ttft_s;
  st.slo_tbt_s = a.slo_tbt_s;
  st.stability = a.stability;
  st.found = a.found;
  st.unbounded = a.unbounded;
  st.zero_load_miss = a.zero_load_miss;
  st.rate_requests_per_s = a.rate_per_s;
  st.failing_rate_requests_per_s = a.failing_rate_per_s;
  st.limit = a.limit;
  return st;
}

// The search as one configuration in the results database: the run at the sustained rate stored
// again with the capacity metrics search_serving_capacity set on it after the progress callback
// had stored it, and the study naming it (or, when no rate is sustained, the lowest rate tried:
// the zero-load probe when there was one), so that a report shows one entry per configuration.
void record_study(store::ResultsStore& store, const std::string& sweep, const Scenario& base,
                  const capacity::SearchOptions& search, const capacity::ServingCapacity& c,
                  const std::string& tool_version) {
  store::CapacityStudy st = stored_answer(sweep, capacity::answer_of(base, search.criteria, c));
  st.scenario_name = base.name;
  if (const capacity::RatePoint* at = c.at_capacity())
    st.entry_run = store.save(at->scenario, at->result, tool_version, sweep);
  else if (const capacity::RatePoint* entry = c.entry())
    st.entry_run = store.find(entry->scenario.hash, sweep);
  save_capacity_study(store.database(), st);
}

}  // namespace

namespace {

void check_search(const capacity::SearchOptions& s) {
  if (!s.criteria.check_slo && !s.criteria.check_stability)
    throw Error("--no-slo and --no-stability together leave no criterion");
  if (!(s.start_rate_per_s >= 0) || !std::isfinite(s.start_rate_per_s))
    throw Error("--start: expected an arrival rate in requests/s > 0 (0 = the scenario's), got " +
                std::to_string(s.start_rate_per_s));
  if (!(s.criteria.attainment_pct > 0 && s.criteria.attainment_pct <= 100))
    throw Error("--attainment: expected a percentage in (0, 100], got " +
                std::to_string(s.criteria.attainment_pct));
}

}  // namespace

CapacityOutcome run_capacity(const CapacityRequest& request) {
  const config::CatalogOnce catalogs(request.data_dir);
  config::LoadOptions load;
  load.overrides = request.sets;
  load.data_dir = request.data_dir;
  load.catalogs = &catalogs;
  CapacityOutcome out;
  out.base = config::load_scenario(request.file, load);
  if (has_capability(out.base, kCapArrivalRate)) {
    out.serving = true;
    check_search(request.search);
    // The file read once and its keys resolved once: each rate is one more typed setting.
    const config::ScenarioSource source(request.file);
    const auto at_rate = [&](double rate) {
      check_stop(request.stop, "capacity");
      config::LoadOptions l = load;
      l.settings.emplace_back("workload.arrival_rate=" + format::exact(rate));
      return source.load(l);
    };
    std::unique_ptr<store::ResultsStore> store;
    if (!request.db.empty()) store = std::make_unique<store::ResultsStore>(request.db);
    out.store_sweep = "capacity:" + out.base.name;
    const auto on_point = [&](const capacity::RatePoint& p) {
      if (store) store->save(p.scenario, p.result, request.tool_version, out.store_sweep);
      if (request.on_point) request.on_point(p);
    };
    capacity::SearchOptions search = request.search;
    search.stop = request.stop;
    out.rates = capacity::search_serving_capacity(out.base, at_rate, search, on_point);
    if (store) record_study(*store, out.store_sweep, out.base, search, out.rates, request.tool_version);
    for (std::size_t i = 0; i < out.rates.points.size(); ++i) out.by_rate.push_back(i);
    std::stable_sort(out.by_rate.begin(), out.by_rate.end(), [&](std::size_t x, std::size_t y) {
      return out.rates.points[x].rate_per_s < out.rates.points[y].rate_per_s;
    });
    if (!out.rates.at_capacity() && !out.rates.points.empty() &&
        !out.rates.points.front().result.fits)
      out.closest = closest_fits(out.base, out.rates.points.front().result, ExecutionModel{});
    return out;
  }
  if (!has_capability(out.base, kCapZeroTraining))
    throw Error(request.file + ": capacity needs a training or a serving workload (workload.kind)");
  const ExecutionModel em;
  for (const auto& st : zero_strategies()) {
    check_stop(request.stop, "capacity");
    StrategyCapacity row;
    row.strategy = st.name;
    Scenario s = out.base;
    apply_strategy(s, st);
    const bool needs_nvme = st.params == Tier::kNvme || st.optimizer == Tier::kNvme;
    row.no_nvme = needs_nvme && s.hardware.nvme.count <= 0;
    if (!row.no_nvme) row.search = largest_trainable(s, em);
    out.strategies.push_back(std::move(row));
  }
  return out;
}

// ---- plan -------------------------------------------------------------------------------------

std::string plan_metric_text(const std::string& metric, std::optional<double> v) {
  if (!v) return "-";
  // Derived metrics (tokens_per_joule) are not declared: a number without a unit.
  const sim::MetricDecl* decl = sim::find_metric(metric);
  return format::quantity(*v, decl ? decl->unit : std::string_view());
}

namespace {

// The resolved scenario with the plan's figures on top: `tiersim run FILE` reproduces them. It is
// renamed after what it is (`name` is the first key of a resolved scenario), so that it does not
// carry the plan's base scenario's name with other contents.
void write_scenario(const fs::path& path, const std::string& name, const plan::PlanSpec& spec,
                    const plan::Candidate& c, const std::vector<std::string>& metrics,
                    const OutputOptions& output) {
  std::ostringstream out;
  out << "# Found by `tiersim plan` (" << spec.name << "): " << c.point.label << "\n";
  for (const auto& e : c.equivalent) out << "# the same configuration as: " << e << "\n";
  for (const auto& e : c.same_timings)
    out << "# the same timings, with hardware it does not use: " << e << "\n";
  for (const auto& m : metrics)
    out << "#   " << m << ": " << plan_metric_text(m, plan::metric_value(c.scenario, c.result, m))
        << "\n";
  // Paths (a trace, a device profile) absolute: relative ones were relative to the base file's
  // folder and named another file, or none, from the output folder.
  std::string yaml = config::resolved_yaml_with_absolute_paths(c.scenario);
  if (const auto eol = yaml.find('\n'); yaml.rfind("name: ", 0) == 0 && eol != std::string::npos)
    yaml.replace(0, eol, "name: " + name);
  out << yaml;
  if (!yaml.empty() && yaml.back() != '\n') out << "\n";
  write_output_file(path.string(), out.str(), "plan scenario", output);
}

// best-1.yaml, pareto-2.yaml: short names; manifest.txt says what each holds (the axis values
// made names of 200 characters).
fs::path output_path(const std::string& dir, const std::string& kind, std::size_t k) {
  return fs::path(dir) / (kind + "-" + std::to_string(k + 1) + ".yaml");
}

// manifest.txt in the output folder: each file written, the point it holds, its figures and the
// points listed with it.
void write_manifest(const std::string& dir, const plan::PlanSpec& spec, const plan::PlanResult& r,
                    const std::vector<std::string>& metrics, const OutputOptions& output) {
  std::ostringstream m;
  m << "# tiersim plan " << spec.name << ": the scenario files written here and what each holds\n";
  const auto entries = [&](const std::vector<plan::Candidate>& cs, const std::string& kind) {
    for (std::size_t k = 0; k < cs.size(); ++k) {
      const plan::Candidate& c = cs[k];
      m << output_path("", kind, k).string() << ": " << c.point.label << "\n ";
      for (const auto& name : metrics)
        m << " " << name << "=" << plan_metric_text(name, plan::metric_value(c.scenario, c.result, name));
      m << "\n";
      for (const auto& e : c.equivalent) m << "  same configuration: " << e << "\n";
      for (const auto& e : c.same_timings)
        m << "  same timings, hardware it does not use: " << e << "\n";
    }
  };
  entries(r.best, "best");
  entries(r.pareto, "pareto");
  write_output_file((fs::path(dir) / "manifest.txt").string(), m.str(), "plan manifest", output);
}

std::vector<std::string> shown_metrics(const plan::PlanSpec& spec) {
  std::vector<std::string> shown = {spec.objective.metric};
  for (const auto& c : spec.constraints)
    if (std::find(shown.begin(), shown.end(), c.metric) == shown.end()) shown.push_back(c.metric);
  for (const auto& g : spec.pareto)
    if (std::find(shown.begin(), shown.end(), g.metric) == shown.end()) shown.push_back(g.metric);
  return shown;
}

}  // namespace

PlanOutcome run_plan(const PlanRequest& request) {
  PlanOutcome out;
  out.spec = plan::parse_plan_file(request.file);
  const plan::PlanSpec& spec = out.spec;
  const config::Catalog catalog = config::Catalog::load(request.data_dir);
  // Before the search (seconds to minutes): a folder that cannot be made fails at once.
  out.out_dir = request.out_dir.empty() ? spec.name + "-plan" : request.out_dir;
  make_output_dir(out.out_dir, "the output folder");
  std::unique_ptr<sweep::SweepStore> store;
  if (!request.db.empty()) store = std::make_unique<sweep::SweepStore>(request.db);
  plan::PlanOptions options;
  options.threads = request.threads;
  options.prune = request.prune;
  if (request.on_progress)
    options.on_progress = [&](std::size_t simulated, std::size_t queued) {
      request.on_progress(spec.name, simulated, queued);
    };
  options.stop = request.stop;
  if (store)
    options.on_simulated = [&](const plan::Candidate& c) {
      sweep::Outcome o;
      o.point = c.point;
      o.status = c.result.fits ? sweep::Status::kSimulated : sweep::Status::kNoFit;
      o.scenario = c.scenario;
      o.result = c.result;
      store->save(o, spec.name, request.tool_version);
    };
  out.result = plan::run_plan(spec, catalog, options);
  if (store) {
    // Why each point was rejected, for `tiersim report` (store/sweep_tables.hpp plan_verdicts).
    store->flush();
    store::Database& db = store->results().database();
    store::Transaction tx(db);
    store::clear_plan_verdicts(db, spec.name);
    store::clear_plan_capacity(db, spec.name);
    for (const auto& v : out.result.verdicts) {
      store::record_plan_verdict(db, spec.name, {v.label, v.scenario_hash, v.status, v.reason});
      // A serving point's targets and search answer: the report's SLO line and its reasons.
      if (v.capacity)
        store::save_plan_capacity(
            db, {v.label, v.scenario_hash, stored_answer(spec.name, *v.capacity)});
    }
    tx.commit();
  }
  out.shown_metrics = shown_metrics(spec);
  const auto write = [&](const std::vector<plan::Candidate>& list, const std::string& kind,
                         std::vector<std::string>& files) {
    for (std::size_t k = 0; k < list.size(); ++k) {
      const std::string n = std::to_string(k + 1);
      const fs::path path = output_path(out.out_dir, kind, k);
      write_scenario(path, spec.name + "-" + kind + "-" + n, spec, list[k], out.shown_metrics,
                     request.output);
      files.push_back(path.string());
    }
  };
  write(out.result.best, "best", out.best_files);
  write(out.result.pareto, "pareto", out.pareto_files);
  const std::optional<validation::AccuracyRecord> accuracy =
      validation::shipped_accuracy(request.data_dir);
  const auto accuracy_of = [&](const std::vector<plan::Candidate>& list) {
    std::vector<std::optional<validation::RunAccuracy>> out_list;
    for (const auto& c : list)
      out_list.push_back(accuracy ? std::optional(validation::run_accuracy(c.scenario, *accuracy))
                                  : std::nullopt);
    return out_list;
  };
  out.best_accuracy = accuracy_of(out.result.best);
  out.pareto_accuracy = accuracy_of(out.result.pareto);
  write_manifest(out.out_dir, spec, out.result, out.shown_metrics, request.output);
  return out;
}

// ---- sensitivity ------------------------------------------------------------------------------

SensitivityOutcome run_sensitivity(const SensitivityRequest& request) {
  sensitivity::check_metric_name(request.metric, "--metric");
  // 0 varies nothing: every swing would be 0, a table that looks like an answer and is not one.
  if (!(request.range > 0 && request.range < 1))
    throw Error("--range must lie in (0, 1), got " + format::exact(request.range));
  const config::Comparison& cmp = request.comparison;
  const config::Catalog catalog = config::Catalog::load(request.data_dir);
  sensitivity::Options o;
  o.metric = request.metric;
  o.load.overrides = request.sets;
  o.load.catalog = &catalog;
  o.stop = request.stop;
  for (const auto& in : request.inputs) {
    o.inputs.push_back(sensitivity::parse_input(in, request.range, "--input"));
    // The same input twice printed two identical rows of the tornado.
    for (std::size_t i = 0; i + 1 < o.inputs.size(); ++i)
      if (o.inputs[i].key == o.inputs.back().key)
        throw ConfigError("--input", 0, o.inputs.back().key, "given twice; give each input once");
  }
  if (o.inputs.empty()) o.inputs = sensitivity::default_inputs(request.range);

  std::vector<const config::VariantSpec*> chosen;
  for (const auto& name : request.variants)
    chosen.push_back(&config::find_variant(cmp, name, "--variant"));
  if (chosen.empty())
    for (const auto& v : cmp.variants) chosen.push_back(&v);

  SensitivityOutcome out;
  out.metric = request.metric;
  out.range = request.range;
  for (const auto* v : chosen)
    out.tornadoes.push_back(sensitivity::run_tornado(*v, o, request.threads));
  return out;
}

// ---- breakeven --------------------------------------------------------------------------------

namespace {

// The better direction of `metric` (breakeven, whatif): --sense when given, else the one known for
// the common metrics.
plan::Sense sense_of(const std::string& metric, const std::string& sense) {
  if (sense == "minimize") return plan::Sense::kMinimize;
  if (sense == "maximize") return plan::Sense::kMaximize;
  if (!sense.empty()) throw Error("--sense must be minimize or maximize, got '" + sense + "'");
  if (auto known = plan::known_sense(metric)) return *known;
  throw Error("which direction of '" + metric +
              "' is better? add --sense minimize or --sense maximize");
}

// The two configurations breakeven and whatif weigh: those `names` (--variants A B), else the
// first two of the comparison.
std::pair<const config::VariantSpec*, const config::VariantSpec*> two_variants(
    const config::Comparison& cmp, const std::vector<std::string>& names) {
  if (cmp.variants.size() < 2)
    throw Error("need two configurations: a comparison file or two scenario files");
  if (names.empty()) return {&cmp.variants[0], &cmp.variants[1]};
  const config::VariantSpec* a = &config::find_variant(cmp, names[0], "--variants");
  const config::VariantSpec* b = &config::find_variant(cmp, names[1], "--variants");
  // One configuration against itself ties everywhere: no break-even value and no ratio to reach.
  if (a == b)
    throw Error("--variants names '" + names[0] +
                "' twice: name two different configurations of the comparison");
  return {a, b};
}

}  // namespace

BreakEvenOutcome run_breakeven(const BreakEvenRequest& request) {
  sensitivity::check_metric_name(request.metric, "--metric");
  if (request.key.empty()) throw Error("missing --vary KEY (see tiersim breakeven --help)");
  if (!request.variants.empty() && request.variants.size() != 2)
    throw Error("--variants takes two names, A B");
  if (request.points < 2) throw Error("--points must be at least 2");

  BreakEvenOutcome out;
  out.sense = sense_of(request.metric, request.sense);

  const auto [a, b] = two_variants(request.comparison, request.variants);

  const config::Catalog catalog = config::Catalog::load(request.data_dir);
  sensitivity::BreakEvenOptions o;
  o.key = request.key;
  o.metric = request.metric;
  o.scan_points = request.points;
  o.load.overrides = request.sets;
  o.load.catalog = &catalog;
  o.stop = request.stop;
  if (request.between) {
    o.low = request.between->first;
    o.high = request.between->second;
  }
  out.result = sensitivity::break_even(*a, *b, o);
  return out;
}

// ---- whatif -----------------------------------------------------------------------------------

WhatIfOutcome run_whatif(const WhatIfRequest& request) {
  if (!request.variants.empty() && request.variants.size() != 2)
    throw Error("--variants takes two names, A B");
  if (request.points < 2) throw Error("--points must be at least 2");
  sensitivity::check_metric_name(request.metric, "--metric");

  WhatIfOutcome out;
  whatif::Options& o = out.options;
  o.metric = request.metric;
  o.higher_is_better = sense_of(request.metric, request.sense) == plan::Sense::kMaximize;
  o.ratio = request.ratio;
  o.scan_points = request.points;
  o.max_points = request.max_points;
  o.threads = request.threads;
  for (const auto& v : request.vary)
    o.inputs.push_back(whatif::parse_input(v, whatif::Scope::kBoth, "--vary"));
  for (const auto& v : request.vary_a)
    o.inputs.push_back(whatif::parse_input(v, whatif::Scope::kA, "--vary-a"));
  for (const auto& v : request.vary_b)
    o.inputs.push_back(whatif::parse_input(v, whatif::Scope::kB, "--vary-b"));

  const auto [a, b] = two_variants(request.comparison, request.variants);
  const config::Catalog catalog = config::Catalog::load(request.data_dir);
  o.load.overrides = request.sets;
  o.load.catalog = &catalog;
  o.on_progress = request.on_progress;
  o.stop = request.stop;
  out.result = whatif::solve(*a, *b, o);
  // What does not outlive this call (the catalog is a local; the flag and the callback are the
  // caller's) is not handed back.
  o.load.catalog = nullptr;
  o.on_progress = nullptr;
  o.stop = nullptr;
  return out;
}

// ---- validate ---------------------------------------------------------------------------------

validation::ValidationSummary run_validate(const ValidateRequest& request) {
  const std::string dir =
      request.dir.empty() ? validation::default_reference_dir(request.data_dir) : request.dir;
  return validation::run_validation(dir, request.data_dir, request.stop);
}

}  // namespace tiersim::studies
