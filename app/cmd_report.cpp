// tiersim report: turn the runs in a results database into a report for people who buy hardware.
#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "app/command.hpp"
#include "config/catalog.hpp"
#include "config/compare_file.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "reports/entries.hpp"
#include "reports/report.hpp"
#include "sim/metrics.hpp"
#include "store/calibration_points.hpp"
#include "store/capacity_studies.hpp"
#include "store/results_store.hpp"
#include "store/sweep_tables.hpp"
#include "study/planner.hpp"
#include "study/sensitivity.hpp"
#include "study/validation.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace tiersim::app {
namespace {

// The validation group of every stored run (re-created from its resolved scenario), with that
// group's error, in validate's group order.
std::vector<reports::ValidationInfo::Group> report_groups(
    const std::vector<store::StoredRun>& runs, const validation::ValidationSummary& v,
    const std::string& data_dir, const config::CatalogOnce& catalogs) {
  config::LoadOptions load;
  load.data_dir = data_dir;
  load.catalogs = &catalogs;
  std::map<std::string, std::size_t> counts;
  for (const auto& run : runs) {
    const Scenario s = config::load_scenario_text(run.scenario_yaml, run.scenario_name, load);
    ++counts[validation::reference_group(s, Reference{})];
  }
  std::vector<reports::ValidationInfo::Group> out;
  for (const auto& def : v.data.groups) {
    const auto it = counts.find(def.name);
    // A group a metric declares (sim/metrics.hpp validation_group: energy, system energy) bands
    // that metric of every run (reports/decision.cpp band_group).
    const bool by_metric = std::any_of(
        sim::metric_declarations().begin(), sim::metric_declarations().end(),
        [&](const sim::MetricDecl& d) { return d.validation_group == def.name; });
    if (it == counts.end() && !by_metric) continue;
    reports::ValidationInfo::Group g;
    g.name = def.name;
    g.configurations = by_metric ? runs.size() : it->second;
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
void fill_decision(reports::ReportInput& in, const std::string& data_dir,
                   const config::CatalogOnce& catalogs, bool sensitivity,
                   const validation::ValidationSummary* v) {
  config::LoadOptions load;
  load.data_dir = data_dir;
  load.catalogs = &catalogs;
  for (const auto& run : in.runs) {
    const Scenario s = config::load_scenario_text(run.scenario_yaml, run.scenario_name, load);
    in.decision.descriptions.push_back(reports::describe_configuration(s));
    in.decision.groups.push_back(validation::reference_group(s, Reference{}));
    in.decision.unvalidated.push_back(v ? v->unanchored_parts(s) : std::vector<std::string>{});
  }
  if (!sensitivity) {
    in.decision.sensitivity_note = "skipped with --no-sensitivity.";
    return;
  }
  const auto order = reports::ranking(in, in.decision.metric, in.decision.lower_is_better);
  if (order.empty()) {
    in.decision.sensitivity_note = "no configuration that fits has " + in.decision.metric + ".";
    return;
  }
  const config::Catalog& catalog = catalogs.get();
  sensitivity::Options o;
  o.metric = in.decision.metric;
  o.inputs = sensitivity::default_inputs(in.decision.range);
  o.load.catalog = &catalog;
  for (std::size_t k = 0; k < std::min<std::size_t>(2, order.size()); ++k) {
    const store::StoredRun& run = in.runs[order[k]];
    config::VariantSpec v;
    v.name = run.display_name();
    v.inline_yaml = run.scenario_yaml;
    v.display = run.display_name();
    const sensitivity::Tornado t = sensitivity::run_tornado(v, o);
    if (!t.error.empty()) continue;
    reports::TornadoChart chart;
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

int cmd_report(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim report --db tiersim-results.db --out DIR [options]\n\n"
      "Writes DIR/index.html (self-contained: a decision summary with the recommendation, the\n"
      "configurations, the headline metric with validation error bands and tornado charts of the\n"
      "two leading configurations (tiersim sensitivity), then the comparison table, plots of\n"
      "throughput, latency, energy and cost per token, one decode step's timeline per\n"
      "configuration, calibration curves when the database has them; opens offline),\n"
      "DIR/report.md (the summary, the table and sources)\n"
      "and DIR/metrics.csv (every metric of every run). The header quotes the model's error\n"
      "against the published reference measurements (tiersim validate).\n\n"
      "options");
  std::string db_path, out_dir, sweep, title, data_dir, vendor_dir, objective;
  opts.add_options()("help,h", "show this help")(
      "db", po::value<std::string>(&db_path), "results database written by run/compare/sweep --db")(
      "out", po::value<std::string>(&out_dir),
      "folder to write the report into (created; files tiersim did not write there are not "
      "replaced without --force)")(
      "force",
      "replace index.html, report.md and metrics.csv in --out even if tiersim did not "
      "write them (a symbolic link is replaced, never followed)")(
      "sweep", po::value<std::string>(&sweep),
      "only the runs of this sweep (default: every run in the database)")(
      "title", po::value<std::string>(&title)->default_value("tiersim cost report"), "page title")(
      "data-dir", po::value<std::string>(&data_dir),
      "folder holding catalog/ and reference/ for the validation (default: the shipped one)")(
      "no-validation", "skip running the reference validation (the header then says so)")(
      "objective",
      po::value<std::string>(&objective)
          ->default_value(std::string(sim::metric::kUsdPerMillionTokens.name)),
      "metric the recommendation and the tornado charts are about (one whose better direction "
      "is known, e.g. throughput_tokens_per_s, energy_j_per_token)")(
      "no-sensitivity",
      "skip the sensitivity analysis of the two leading configurations (the tornado charts)")(
      "vendor-dir", po::value<std::string>(&vendor_dir),
      "folder holding vega.min.js, vega-lite.min.js, vega-embed.min.js (default: "
      "$TIERSIM_VENDOR_DIR or the source tree's reports/vendor)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts
              << "\nexample:\n  tiersim run a.yaml --db tiersim-results.db && tiersim run b.yaml --db "
                 "tiersim-results.db\n  tiersim report --db tiersim-results.db --out report/\n";
    return kExitOk;
  }
  if (db_path.empty()) throw Error("missing --db (see tiersim report --help)");
  if (out_dir.empty()) throw Error("missing --out (see tiersim report --help)");
  OutputOptions output;
  output.force = vm.count("force") > 0;
  // Checked before the validation runs and the pages are built (tens of seconds).
  reports::check_report_outputs(out_dir, output);
  sensitivity::check_metric_name(objective, "--objective");
  const auto sense = plan::known_sense(objective);
  if (!sense)
    throw Error("--objective " + objective +
                ": which direction is better is not known for this metric; choose one of "
                "usd_per_million_tokens, throughput_tokens_per_s, energy_j_per_token, ...");
  // Opening would create an empty database; a typo should be an error instead.
  std::error_code ec;
  if (!fs::exists(db_path, ec)) throw StoreError("cannot open results database '" + db_path + "': no such file");

  // Read-only: a report must work on a file it may not write (chmod 444, a read-only folder or
  // mount) and must not change the file it reads, not even its journal mode.
  store::ResultsStore store(db_path, store::Access::kReadOnly);
  reports::ReportInput in;
  in.title = title;
  in.sweep = sweep;
  in.database_name = fs::path(db_path).filename().string();
  in.tool_version = TIERSIM_VERSION;
  in.vendor_dir = vendor_dir;
  in.decision.metric = objective;
  in.decision.lower_is_better = *sense == plan::Sense::kMinimize;
  store::RunFilter filter;
  if (vm.count("sweep")) filter.sweep = sweep;
  in.runs = store.runs(filter);
  if (in.runs.empty())
    throw Error("no runs in '" + db_path + "'" + (sweep.empty() ? "" : " for sweep '" + sweep + "'") +
                " (store some with tiersim run FILE --db " + db_path + ")");
  // One entry per configuration: a capacity search's load points become its run at the
  // sustained rate (the charts against load still draw every one).
  reports::Entries entries =
      reports::one_entry_per_configuration(std::move(in.runs), store::capacity_studies(store.database()));
  in.runs = std::move(entries.runs);
  in.capacity = std::move(entries.capacity);
  in.load_points = std::move(entries.load_points);
  in.plan_verdicts = store::plan_verdicts(store.database(), sweep);

  if (store::latest_calibration_run(store.database()) != 0)
    for (const auto& c : store::read_bandwidth_curves(store.database()))
      in.calibration.push_back({c.target, c.rw, c.threads, c.queue_depth, c.block_bytes,
                                c.bandwidth_gbps, c.model_bandwidth_gbps});

  // Every stored run is loaded again from its resolved scenario: the catalogs are read once.
  const config::CatalogOnce catalogs(data_dir);
  std::optional<validation::ValidationSummary> summary;
  if (vm.count("no-validation")) {
    in.validation.error = "skipped with --no-validation";
  } else {
    try {
      summary = validation::run_validation(validation::default_reference_dir(data_dir), data_dir);
      const validation::ValidationSummary& v = *summary;
      in.validation.available = true;
      in.validation.measurements = v.rows.size();
      in.validation.mape_pct = v.mape_pct;
      in.validation.max_abs_error_pct = v.max_abs_error_pct;
      in.validation.out_of_sample_measurements = v.out_of_sample_rows;
      in.validation.out_of_sample_mape_pct = v.out_of_sample_mape_pct;
      in.validation.groups = report_groups(in.runs, v, data_dir, catalogs);
    } catch (const Error& e) {
      // The report is still useful without it; the header says why the number is missing.
      in.validation.error = e.what();
      std::cerr << "tiersim report: warning: validation failed: " << e.what() << "\n";
    }
  }

  fill_decision(in, data_dir, catalogs, !vm.count("no-sensitivity"), summary ? &*summary : nullptr);
  const reports::ReportFiles files = reports::write_report(in, out_dir, output);
  std::cout << "wrote " << files.html << "\n      " << files.markdown << "\n      " << files.csv
            << "\n(" << in.runs.size() << " runs)\n";
  if (in.validation.available) std::cout << reports::validation_sentence(in.validation) << "\n";
  return kExitOk;
}

}  // namespace tiersim::app
