#include "study/studies.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>

#include "config/catalog.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/traits.hpp"
#include "store/results_store.hpp"

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
    try {
      sim::SimOptions sim_opts;
      // The store keeps one decode step's timeline for the report's Gantt chart.
      sim_opts.trace = !request.db.empty();
      sim_opts.stop = request.stop;
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

std::string rate_text(double rate) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", rate);
  return buf;
}

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
      l.settings.emplace_back("workload.arrival_rate=" + rate_text(rate));
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
    for (std::size_t i = 0; i < out.rates.points.size(); ++i) out.by_rate.push_back(i);
    std::stable_sort(out.by_rate.begin(), out.by_rate.end(), [&](std::size_t x, std::size_t y) {
      return out.rates.points[x].rate_per_s < out.rates.points[y].rate_per_s;
    });
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

std::string plan_metric_text(std::optional<double> v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", *v);
  return buf;
}

namespace {

// What a point is, for a file and scenario name: its axis values as
// "gpu.model-H200_host.dram_gb-256" (the last two segments of each key), in characters any file
// system takes.
std::string point_slug(const sweep::Point& p) {
  std::string out;
  for (const auto& kv : p.overrides) {
    const auto eq = kv.find('=');
    std::string key = kv.substr(0, eq);
    const auto last = key.rfind('.');
    if (last != std::string::npos && last > 0) {
      const auto prev = key.rfind('.', last - 1);
      if (prev != std::string::npos) key = key.substr(prev + 1);
    }
    std::string item = key;
    if (eq != std::string::npos) {
      item += '-';
      item.append(kv, eq + 1, std::string::npos);
    }
    for (char& ch : item)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-') ch = '_';
    out += (out.empty() ? "" : "_") + item;
  }
  return out.empty() ? "base" : out;
}

// The resolved scenario with the plan's figures on top: `tiersim run FILE` reproduces them. It is
// renamed after what it is (`name` is the first key of a resolved scenario), so that it does not
// carry the plan's base scenario's name with other contents.
void write_scenario(const fs::path& path, const std::string& name, const plan::PlanSpec& spec,
                    const plan::Candidate& c, const std::vector<std::string>& metrics,
                    const OutputOptions& output) {
  std::ostringstream out;
  out << "# Found by `tiersim plan` (" << spec.name << "): " << c.point.label << "\n";
  for (const auto& e : c.equivalent) out << "# the same configuration as: " << e << "\n";
  for (const auto& m : metrics)
    out << "#   " << m << ": " << plan_metric_text(plan::metric_value(c.scenario, c.result, m))
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
  out.shown_metrics = shown_metrics(spec);
  const auto write = [&](const std::vector<plan::Candidate>& list, const std::string& kind,
                         std::vector<std::string>& files) {
    for (std::size_t k = 0; k < list.size(); ++k) {
      const std::string n = std::to_string(k + 1);
      const fs::path path =
          fs::path(out.out_dir) / (kind + "-" + n + "--" + point_slug(list[k].point) + ".yaml");
      write_scenario(path, spec.name + "-" + kind + "-" + n, spec, list[k], out.shown_metrics,
                     request.output);
      files.push_back(path.string());
    }
  };
  write(out.result.best, "best", out.best_files);
  write(out.result.pareto, "pareto", out.pareto_files);
  return out;
}

// ---- sensitivity ------------------------------------------------------------------------------

SensitivityOutcome run_sensitivity(const SensitivityRequest& request) {
  sensitivity::check_metric_name(request.metric, "--metric");
  if (!(request.range >= 0 && request.range < 1))
    throw Error("--range must lie in [0, 1), got " + std::to_string(request.range));
  const config::Comparison& cmp = request.comparison;
  const config::Catalog catalog = config::Catalog::load(request.data_dir);
  sensitivity::Options o;
  o.metric = request.metric;
  o.load.overrides = request.sets;
  o.load.catalog = &catalog;
  o.stop = request.stop;
  for (const auto& in : request.inputs)
    o.inputs.push_back(sensitivity::parse_input(in, request.range, "--input"));
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

BreakEvenOutcome run_breakeven(const BreakEvenRequest& request) {
  sensitivity::check_metric_name(request.metric, "--metric");
  if (request.key.empty()) throw Error("missing --vary KEY (see tiersim breakeven --help)");
  if (!request.variants.empty() && request.variants.size() != 2)
    throw Error("--variants takes two names, A B");
  if (request.points < 2) throw Error("--points must be at least 2");

  BreakEvenOutcome out;
  if (request.sense == "minimize" || request.sense == "maximize") {
    out.sense = request.sense == "minimize" ? plan::Sense::kMinimize : plan::Sense::kMaximize;
  } else if (!request.sense.empty()) {
    throw Error("--sense must be minimize or maximize, got '" + request.sense + "'");
  } else if (auto known = plan::known_sense(request.metric)) {
    out.sense = *known;
  } else {
    throw Error("which direction of '" + request.metric +
                "' is better? add --sense minimize or --sense maximize");
  }

  const config::Comparison& cmp = request.comparison;
  if (cmp.variants.size() < 2)
    throw Error("need two configurations: a comparison file or two scenario files");
  const config::VariantSpec& a = request.variants.empty()
                                     ? cmp.variants[0]
                                     : config::find_variant(cmp, request.variants[0], "--variants");
  const config::VariantSpec& b = request.variants.empty()
                                     ? cmp.variants[1]
                                     : config::find_variant(cmp, request.variants[1], "--variants");

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
  out.result = sensitivity::break_even(a, b, o);
  return out;
}

// ---- validate ---------------------------------------------------------------------------------

validation::ValidationSummary run_validate(const ValidateRequest& request) {
  const std::string dir =
      request.dir.empty() ? validation::default_reference_dir(request.data_dir) : request.dir;
  return validation::run_validation(dir, request.data_dir, request.stop);
}

}  // namespace tiersim::studies
