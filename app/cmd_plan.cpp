// tiersim plan: branch-and-bound search for the best configuration meeting constraints.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <unistd.h>

#include "app/command.hpp"
#include "common/progress.hpp"
#include "model/errors.hpp"
#include "reports/decision.hpp"
#include "reports/run_output.hpp"
#include "reports/study_json.hpp"
#include "sim/metrics.hpp"
#include "study/planner.hpp"
#include "study/studies.hpp"

namespace po = boost::program_options;

namespace tiersim::app {
namespace {

std::string fmt(const plan::Candidate& c, const std::string& metric) {
  return studies::plan_metric_text(metric, plan::metric_value(c.scenario, c.result, metric));
}

}  // namespace

int cmd_plan(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim plan PLAN.yaml [options]\n\n"
      "Searches a space of hardware and policy choices (format in scenarios/plans/README.md) for\n"
      "the configurations that meet the plan's constraints and are best on its objective, and the\n"
      "Pareto front of two metrics. Points are pruned without simulation by capacity, budget and\n"
      "an optimistic roofline bound; the survivors are simulated best-bound first. Each result is\n"
      "written as a resolved scenario file that `tiersim run` reproduces.\n\n"
      "options");
  std::string file, out_dir, db, data_dir;
  int threads = 0;
  opts.add_options()("help,h", "show this help")(
      "out,o", po::value<std::string>(&out_dir), "folder for the scenario files (default: <plan name>-plan)")(
      "force", "replace files in --out that tiersim did not write (by default they are refused)")(
      "db", po::value<std::string>(&db),
      "also store every simulated point in this results database under the plan's name "
      "(`tiersim report` can plot the front)")(
      "threads,j", po::value<int>(&threads)->default_value(0), "threads (0 = every hardware thread)")(
      "no-prune", "simulate every point that fits (brute force; for checking the pruning)")(
      "json", "print the result as JSON (stats, best, Pareto front, each with its metrics, "
      "equivalent points and file) instead of text")(
      "progress", "report progress on stderr after each batch of simulations (default: only "
      "when stderr is a terminal)")(
      "data-dir", po::value<std::string>(&data_dir),
      kDataDirHelp);
  po::options_description hidden;
  hidden.add_options()("plan", po::value<std::string>(&file));
  const po::variables_map vm = parse_command_line(args, opts, hidden, "plan", 1);
  if (printed_help(
          vm, opts,
          "  tiersim plan scenarios/plans/opt66b-10tps.yaml --out plan-out --db "
          "tiersim-results.db\n"
          "  tiersim plan scenarios/plans/opt66b-10tps.yaml --out plan-out --json --progress\n"
          "\nPoints whose resolved scenarios are identical (same hash; e.g. an I/O path with\n"
          "no weights on NVMe) are simulated once and listed together, and so are points\n"
          "with the same timings that add hardware the run does not use (drives with the\n"
          "weights on the GPU), under the cheaper. Files are named best-K.yaml and\n"
          "pareto-K.yaml, the scenario inside <plan>-best-K (or -pareto-K), and\n"
          "manifest.txt lists what each holds.\n"
          "\nEach best configuration shows its error band: the out-of-sample validation\n"
          "error of its group (tiersim validate; prov. for a provisional group, the row\n"
          "count where it has fewer than five), and a last line says whether the first's\n"
          "margin over the second is larger than the two bands.\n"
          "\nA serving plan with capacity_search: judges each point at the highest rate it\n"
          "sustains; with --db it stores each point's targets and answer, and `tiersim\n"
          "report` draws the SLO and says why a configuration sustains no rate. To rent\n"
          "instead of buy, make economics.cloud_instance an axis (zipped with the GPUs it\n"
          "holds) and minimize rent_usd_per_million_tokens (scenarios/plans/README.md):\n"
          "  tiersim plan scenarios/plans/llama3-70b-rent.yaml --out rent-plan\n"))
    return kExitOk;
  if (file.empty()) throw Error("missing PLAN.yaml (see tiersim plan --help)");

  studies::PlanRequest request;
  request.file = file;
  request.out_dir = out_dir;
  request.db = db;
  request.data_dir = data_dir;
  request.tool_version = TIERSIM_VERSION;
  request.threads = threads;
  request.prune = vm.count("no-prune") == 0;
  request.output.force = vm.count("force") > 0;
  const bool json = vm.count("json") > 0;
  std::optional<ProgressLine> progress;
  if (vm.count("progress") || isatty(fileno(stderr))) {
    progress.emplace(std::cerr, isatty(fileno(stderr)) != 0, 0.0);
    request.on_progress = [&](const std::string& name, std::size_t simulated,
                              std::size_t queued) {
      progress->update("plan " + name + ": simulated " + std::to_string(simulated) +
                           ", up to " + std::to_string(queued) + " more queued",
                       /*force=*/true);
    };
  }
  const studies::PlanOutcome outcome = studies::run_plan(request);
  const plan::PlanSpec& spec = outcome.spec;
  const plan::PlanResult& r = outcome.result;
  if (progress && progress->tty()) progress->finish("plan " + spec.name + ": done");
  const auto& st = r.stats;
  if (json) {
    std::cout << reports::json_text(reports::plan_json(outcome), 2) << "\n";
    return r.best.empty() ? kExitFailure : kExitOk;
  }

  std::cout << "plan " << spec.name << (spec.description.empty() ? "" : ": " + spec.description) << "\n";
  std::cout << "  considered " << st.considered << " configurations\n";
  std::cout << "  invalid (cannot be built or modelled): " << st.invalid << "\n";
  std::cout << "  the same resolved scenario as an earlier point (not re-run): " << st.equivalent << "\n";
  std::cout << "  pruned by capacity (does not fit, no simulation): " << st.pruned_capacity << "\n";
  for (const auto& [m, count] : st.pruned_constraint)
    std::cout << "  pruned by " << (m == sim::metric::kCapexUsd.name ? "budget" : "bound") << " on "
              << m << ": " << count << "\n";
  std::cout << "  pruned by bound against the incumbents" << (spec.pareto.empty() ? "" : " and the Pareto front")
            << ": " << st.pruned_objective << "\n";
  std::cout << "  simulated " << st.simulated << ", feasible " << st.feasible << "; " << st.wall_s << " s\n";
  if (st.bound_violations)
    std::cout << "  WARNING: " << st.bound_violations << " simulated values beat their optimistic bound; "
              << "pruning may have been unsafe (please report)\n";

  const std::vector<std::string>& shown = outcome.shown_metrics;

  if (!r.no_capacity.empty()) {
    std::cout << "  sustaining no arrival rate within the targets:\n";
    for (const auto& c : r.no_capacity)
      std::cout << "    " << c.point.label << ": " << c.why_not << "\n";
  }

  if (r.best.empty()) {
    std::cout << "no configuration meets the constraints\n";
    return kExitFailure;
  }
  const bool lower = spec.objective.sense == plan::Sense::kMinimize;
  std::cout << "\nbest (" << (lower ? "lowest " : "highest ") << spec.objective.metric
            << "; ties: lower " << plan::kTieBreak << ", then plan order):\n";
  // How far to trust each: its group's error band (tiersim validate), and whether the first's
  // margin over the second is larger than the bands.
  std::vector<reports::ErrorBand> bands;
  for (const auto& accuracy : outcome.best_accuracy) bands.push_back(reports::error_band(accuracy));
  for (std::size_t k = 0; k < r.best.size(); ++k) {
    const auto& c = r.best[k];
    const std::string& path = outcome.best_files[k];
    std::cout << "  " << k + 1 << ". " << c.point.label << "\n     ";
    for (const auto& e : c.equivalent) std::cout << "(same configuration: " << e << ")\n     ";
    for (const auto& e : c.same_timings)
      std::cout << "(same timings, hardware it does not use: " << e << ")\n     ";
    for (const auto& m : shown) std::cout << m << "=" << fmt(c, m) << "  ";
    std::cout << "\n     error band " << reports::compact_band(bands[k]) << " ("
              << (bands[k].group.empty() ? "group unknown" : "group " + bands[k].group) << ")";
    std::cout << "\n     -> " << path << "\n";
  }
  const auto value = [&](std::size_t k) {
    return plan::metric_value(r.best[k].scenario, r.best[k].result, spec.objective.metric);
  };
  if (r.best.size() > 1 && value(0) && value(1)) {
    const double w = *value(0), v = *value(1);
    std::cout << "  1. is " << reports::margin_text(w, v, lower) << " 2. on "
              << spec.objective.metric << ": "
              << reports::margin_verdict_text(w, bands[0], v, bands[1], lower) << "\n";
  }
  if (!spec.pareto.empty()) {
    std::cout << "\nPareto front (" << spec.pareto[0].metric << " vs " << spec.pareto[1].metric << "):\n";
    for (std::size_t k = 0; k < r.pareto.size(); ++k) {
      const auto& c = r.pareto[k];
      const std::string& path = outcome.pareto_files[k];
      std::cout << "  " << fmt(c, spec.pareto[0].metric) << "  "
                << fmt(c, spec.pareto[1].metric) << "  " << c.point.label
                << "  -> " << path << "\n";
    }
  }
  return kExitOk;
}

}  // namespace tiersim::app
