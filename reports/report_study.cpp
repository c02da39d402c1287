#include "reports/report_study.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "config/catalog.hpp"
#include "config/compare_file.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "reports/entries.hpp"
#include "store/calibration_points.hpp"
#include "store/capacity_studies.hpp"
#include "store/results_store.hpp"
#include "store/sweep_tables.hpp"
#include "study/planner.hpp"
#include "study/sensitivity.hpp"
#include "study/studies.hpp"
#include "study/validation.hpp"

namespace fs = std::filesystem;

namespace tiersim::reports {
namespace {

// The validation group of every stored run (re-created from its resolved scenario), with that
// group's error, in validate's group order.
std::vector<ValidationInfo::Group> report_groups(const std::vector<store::StoredRun>& runs,
                                                 const validation::ValidationSummary& v,
                                                 const std::string& data_dir,
                                                 const config::CatalogOnce& catalogs) {
  config::LoadOptions load;
  load.data_dir = data_dir;
  load.catalogs = &catalogs;
  // Each run counts once in its own group and once in every group one of its metrics declares
  // (sim/metrics.hpp validation_group: the energy metrics of every run, the prefix-caching
  // first-token times of a run that reports them), which bands that metric
  // (reports/decision.cpp band_group).
  std::map<std::string, std::size_t> counts;
  for (const auto& run : runs) {
    const Scenario s = config::load_scenario_text(run.scenario_yaml, run.scenario_name, load);
    std::set<std::string> groups = {validation::reference_group(s, Reference{})};
    for (const sim::Metric& m : run.metrics)
      if (const sim::MetricDecl* d = sim::find_metric(m.name); d && !d->validation_group.empty())
        groups.emplace(d->validation_group);
    for (const std::string& g : groups) ++counts[g];
  }
  std::vector<ValidationInfo::Group> out;
  for (const auto& def : v.data.groups) {
    const auto it = counts.find(def.name);
    if (it == counts.end()) continue;
    ValidationInfo::Group g;
    g.name = def.name;
    g.configurations = it->second;
    g.why_provisional = validation::provisional_reason(def, 0, 0);
    g.provisional = !g.why_provisional.empty();
    if (const validation::ValidationGroup* vg = v.group(def.name)) {
      g.provisional = vg->provisional;  // validate's verdict, which also weighs the errors
      g.why_provisional = vg->why_provisional;
      g.measurements = vg->rows;
      g.mape_pct = vg->mape_pct;
      g.max_abs_error_pct = vg->max_abs_error_pct;
      // The band: leave-one-source-out (study/validation.hpp), not the in-sample mean.
      g.out_of_sample_measurements = vg->out_of_sample_rows;
      g.out_of_sample_mape_pct = vg->out_of_sample_mape_pct;
      g.out_of_sample_max_abs_error_pct = vg->out_of_sample_max_abs_error_pct;
    }
    out.push_back(g);
  }
  return out;
}

// The decision summary's inputs: each run's description and validation group, and the tornado of
// the two leading configurations on the recommendation metric (re-simulated from the stored,
// fully resolved scenarios).
void fill_decision(ReportInput& in, const std::string& data_dir,
                   const config::CatalogOnce& catalogs, bool sensitivity,
                   const validation::ValidationSummary* v, const std::atomic<bool>* stop) {
  config::LoadOptions load;
  load.data_dir = data_dir;
  load.catalogs = &catalogs;
  for (const auto& run : in.runs) {
    const Scenario s = config::load_scenario_text(run.scenario_yaml, run.scenario_name, load);
    const sim::Metric* sized = run.find_metric(sim::metric::kDramSizedGb.name);
    in.decision.descriptions.push_back(
        describe_configuration(s, sized ? std::optional<double>(sized->value) : std::nullopt));
    in.decision.groups.push_back(validation::reference_group(s, Reference{}));
    in.decision.unvalidated.push_back(v ? v->unanchored_parts(s) : std::vector<std::string>{});
    // The notes on its inputs, which the store does not keep: the loader derives them again.
    in.notes.push_back(s.notes);
  }
  if (!sensitivity) {
    in.decision.sensitivity_note = "skipped with --no-sensitivity.";
    return;
  }
  const auto order = ranking(in, in.decision.metric, in.decision.lower_is_better);
  if (order.empty()) {
    in.decision.sensitivity_note = "no configuration that fits has " + in.decision.metric + ".";
    return;
  }
  const config::Catalog& catalog = catalogs.get();
  sensitivity::Options o;
  o.metric = in.decision.metric;
  o.inputs = sensitivity::default_inputs(in.decision.range);
  o.load.catalog = &catalog;
  o.stop = stop;
  for (std::size_t k = 0; k < std::min<std::size_t>(2, order.size()); ++k) {
    const store::StoredRun& run = in.runs[order[k]];
    config::VariantSpec spec;
    spec.name = run.display_name();
    spec.inline_yaml = run.scenario_yaml;
    spec.display = run.display_name();
    const sensitivity::Tornado t = sensitivity::run_tornado(spec, o);
    if (!t.error.empty()) continue;
    TornadoChart chart;
    chart.run = order[k];
    chart.base_metric = t.base_metric;
    for (const auto& r : t.rows)
      if (r.skipped.empty() && r.metric_low && r.metric_high)
        chart.bars.push_back(
            {r.input.what, r.input.key, r.low_value, r.high_value, *r.metric_low, *r.metric_high});
    in.decision.tornadoes.push_back(std::move(chart));
  }
}

}  // namespace

ReportOutcome run_report(const ReportRequest& request) {
  if (request.db.empty()) throw Error("missing --db (see tiersim report --help)");
  if (request.out_dir.empty()) throw Error("missing --out (see tiersim report --help)");
  // Checked before the validation runs and the pages are built (tens of seconds).
  check_report_outputs(request.out_dir, request.output);
  sensitivity::check_metric_name(request.objective, "--objective");
  const auto sense = plan::known_sense(request.objective);
  if (!sense)
    throw Error("--objective " + request.objective +
                ": which direction is better is not known for this metric; choose one of "
                "usd_per_million_tokens, throughput_tokens_per_s, energy_j_per_token, ...");
  // Opening would create an empty database; a typo should be an error instead.
  std::error_code ec;
  if (!fs::exists(request.db, ec))
    throw StoreError("cannot open results database '" + request.db + "': no such file");

  // Read-only: a report must work on a file it may not write (chmod 444, a read-only folder or
  // mount) and must not change the file it reads, not even its journal mode.
  store::ResultsStore store(request.db, store::Access::kReadOnly);
  ReportInput in;
  in.title = request.title;
  in.sweep = request.sweep;
  in.database_name = fs::path(request.db).filename().string();
  in.tool_version = request.tool_version;
  in.vendor_dir = request.vendor_dir;
  in.decision.metric = request.objective;
  in.decision.lower_is_better = *sense == plan::Sense::kMinimize;
  store::RunFilter filter;
  if (request.has_sweep) filter.sweep = request.sweep;
  in.runs = store.runs(filter);
  if (in.runs.empty())
    throw Error("no runs in '" + request.db + "'" +
                (request.sweep.empty() ? "" : " for sweep '" + request.sweep + "'") +
                " (store some with tiersim run FILE --db " + request.db + ")");

  // One entry per configuration: a capacity search's load points become its run at the
  // sustained rate (the charts against load still draw every one).
  reports::Entries entries =
      reports::one_entry_per_configuration(std::move(in.runs), store::capacity_studies(store.database()));
  reports::attach_plan_capacity(entries, store::plan_capacities(store.database(), request.sweep));
  // Points that differ only in hardware their runs do not use: one entry, as in the plan's list.
  reports::collapse_same_timings(entries);
  in.plan_verdicts = store::plan_verdicts(store.database(), request.sweep);
  in.runs = std::move(entries.runs);
  in.capacity = std::move(entries.capacity);
  in.load_points = std::move(entries.load_points);
  in.same_timings = std::move(entries.same_timings);

  if (store::latest_calibration_run(store.database()) != 0)
    for (const auto& c : store::read_bandwidth_curves(store.database()))
      in.calibration.push_back({c.target, c.rw, c.threads, c.queue_depth, c.block_bytes,
                                c.bandwidth_gbps, c.model_bandwidth_gbps});

  ReportOutcome out;
  // Every stored run is loaded again from its resolved scenario: the catalogs are read once.
  const config::CatalogOnce catalogs(request.data_dir);
  std::optional<validation::ValidationSummary> summary;
  if (!request.validation) {
    in.validation.error = "skipped with --no-validation";
  } else {
    studies::check_stop(request.stop, "report");
    try {
      summary = validation::run_validation(validation::default_reference_dir(request.data_dir),
                                           request.data_dir, request.stop);
      const validation::ValidationSummary& v = *summary;
      in.validation.available = true;
      in.validation.measurements = v.rows.size();
      in.validation.mape_pct = v.mape_pct;
      in.validation.max_abs_error_pct = v.max_abs_error_pct;
      in.validation.out_of_sample_measurements = v.out_of_sample_rows;
      in.validation.out_of_sample_mape_pct = v.out_of_sample_mape_pct;
      in.validation.groups = report_groups(in.runs, v, request.data_dir, catalogs);
    } catch (const Interrupted&) {
      throw;  // Ctrl-C, not a failed validation
    } catch (const Error& e) {
      // The report is still useful without it; the header says why the number is missing.
      in.validation.error = e.what();
      out.validation_failed = true;
    }
  }
  studies::check_stop(request.stop, "report");
  fill_decision(in, request.data_dir, catalogs, request.sensitivity, summary ? &*summary : nullptr,
                request.stop);
  studies::check_stop(request.stop, "report");
  out.files = write_report(in, request.out_dir, request.output);
  out.runs = in.runs.size();
  out.validation = in.validation;
  return out;
}

nlohmann::json report_json(const ReportOutcome& outcome) {
  nlohmann::json j;
  j["files"] = {{"html", outcome.files.html},
                {"markdown", outcome.files.markdown},
                {"csv", outcome.files.csv}};
  j["runs"] = outcome.runs;
  const ValidationInfo& v = outcome.validation;
  nlohmann::json val;
  val["available"] = v.available;
  if (v.available) {
    val["measurements"] = v.measurements;
    val["mape_pct"] = v.mape_pct;
    val["max_abs_error_pct"] = v.max_abs_error_pct;
    val["out_of_sample_measurements"] = v.out_of_sample_measurements;
    val["out_of_sample_mape_pct"] = v.out_of_sample_mape_pct;
    val["sentence"] = validation_sentence(v);
  } else {
    val["error"] = v.error;
  }
  j["validation"] = val;
  return j;
}

}  // namespace tiersim::reports
