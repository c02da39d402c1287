// tiersim report: turn the runs in a results database into a report for people who buy hardware.
#include <boost/program_options.hpp>
#include <iostream>

#include "app/command.hpp"
#include "model/errors.hpp"
#include "reports/entries.hpp"
#include "reports/report.hpp"
#include "reports/report_study.hpp"
#include "reports/run_output.hpp"
#include "sim/metrics.hpp"

namespace po = boost::program_options;

namespace tiersim::app {
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
      "$TIERSIM_VENDOR_DIR or the source tree's reports/vendor)")(
      "json", "print the files written, the number of runs and the validation figures as one "
              "JSON object");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts
              << "\nexample:\n  tiersim run a.yaml --db tiersim-results.db && tiersim run b.yaml --db "
                 "tiersim-results.db\n  tiersim report --db tiersim-results.db --out report/\n";
    return kExitOk;
  }
  reports::ReportRequest request;
  request.db = db_path;
  request.out_dir = out_dir;
  request.sweep = sweep;
  request.has_sweep = vm.count("sweep") > 0;
  request.title = title;
  request.data_dir = data_dir;
  request.vendor_dir = vendor_dir;
  request.objective = objective;
  request.validation = vm.count("no-validation") == 0;
  request.sensitivity = vm.count("no-sensitivity") == 0;
  request.output.force = vm.count("force") > 0;
  request.tool_version = TIERSIM_VERSION;
  const reports::ReportOutcome outcome = reports::run_report(request);
  if (outcome.validation_failed)
    std::cerr << "tiersim report: warning: validation failed: " << outcome.validation.error << "\n";
  if (vm.count("json")) {
    std::cout << reports::json_text(reports::report_json(outcome), 2) << "\n";
    return kExitOk;
  }
  const reports::ReportFiles& files = outcome.files;
  std::cout << "wrote " << files.html << "\n      " << files.markdown << "\n      " << files.csv
            << "\n(" << outcome.runs << " runs)\n";
  if (outcome.validation.available)
    std::cout << reports::validation_sentence(outcome.validation) << "\n";
  return kExitOk;
}

}  // namespace tiersim::app
