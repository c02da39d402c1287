// tiersim run: simulate one scenario file.
#include <boost/program_options.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "app/command.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "model/files.hpp"
#include "store/results_store.hpp"
#include "reports/run_output.hpp"
#include "sim/simulate.hpp"
#include "reports/study_json.hpp"
#include "study/studies.hpp"

namespace po = boost::program_options;

namespace tiersim::app {

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim run SCENARIO.yaml [options]\n\n"
      "Simulates one scenario (hardware, model, workload, offload policy) and prints how fast it\n"
      "runs, where the time goes and whether it fits in memory. Exit code 3 when it does not fit;\n"
      "then it names the closest configurations that do (largest batch, smallest DRAM, fewest\n"
      "GPUs; for training the largest global batch, or activation checkpointing; for serving the\n"
      "tensor-parallel degree that holds the model), found on the capacity model without\n"
      "simulating them.\n\n"
      "The accuracy line says how far to trust the numbers: the out-of-sample error of the\n"
      "validation group the scenario belongs to (tiersim validate; the figures are kept in\n"
      "scenarios/validation/accuracy.json), and 'unvalidated' for a GPU or execution stack no\n"
      "published measurement runs on.\n\n"
      "options");
  std::string file, trace_path, data_dir, db_path;
  std::vector<std::string> sets;
  opts.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(),
      "override one scenario key before validation, e.g. --set workload.batch=128 "
      "--set hardware.nvme.count=8 (repeatable; keys as in `tiersim schema`)")(
      "json", "print one JSON object instead of the table")(
      "trace", po::value<std::string>(&trace_path),
      "write every simulated event as a Chrome trace-event file (open in Perfetto)")(
      "force", "replace the --trace file even if tiersim did not write it")(
      "data-dir", po::value<std::string>(&data_dir),
      kDataDirHelp)(
      "db", po::value<std::string>(&db_path),
      "also store the run (scenario, metrics, one decode step's timeline) in this SQLite results "
      "database, replacing an earlier run of the same scenario; read it with `tiersim report`");
  po::options_description hidden;
  hidden.add_options()("scenario", po::value<std::string>(&file));
  const po::variables_map vm = parse_command_line(args, opts, hidden, "scenario", 1);
  if (vm.count("help")) {
    std::cout << opts << "\nexample:\n  tiersim run scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml "
                         "--set hardware.nvme.count=8 --json\n";
    return kExitOk;
  }
  if (file.empty()) throw Error("missing SCENARIO.yaml (see tiersim run --help)");

  config::LoadOptions load;
  load.overrides = sets;
  load.data_dir = data_dir;
  OutputOptions output;
  output.force = vm.count("force") > 0;
  if (!trace_path.empty()) check_output_file(trace_path, "trace file", output);
  const Scenario scenario = config::load_scenario(file, load);
  sim::SimOptions sim_opts;
  // The store keeps one decode step's timeline for the report's Gantt chart, so --db traces too.
  sim_opts.trace = !trace_path.empty() || !db_path.empty();
  sim_opts.breakdown = true;  // where the time goes, in the table and --json
  const sim::RunResult result = sim::simulate(scenario, sim_opts);

  // A refusal still answers: the closest configurations the capacity model says fit.
  const std::vector<fit::Suggestion> closest =
      studies::closest_fits(scenario, result, sim_opts.exec);
  // How far to trust it: what the validation found for this kind of configuration.
  const std::optional<validation::RunAccuracy> accuracy =
      reports::run_accuracy_of(scenario, data_dir);
  if (vm.count("json")) {
    std::cout << reports::json_text(reports::run_json(scenario, result, closest, accuracy), 2)
              << "\n";
  } else {
    const reports::ErrorBand band = reports::error_band(accuracy);
    const auto energy = reports::energy_bands(accuracy, result);
    reports::print_human(std::cout, scenario, result, &band, energy ? &*energy : nullptr);
    reports::print_closest_fits(std::cout, closest);
  }
  if (!trace_path.empty()) {
    std::ostringstream out;
    reports::write_chrome_trace(out, scenario, result);
    write_output_file(trace_path, out.str(), "trace file", output);
  }
  if (!db_path.empty()) {
    store::ResultsStore store(db_path);
    const std::int64_t id = store.save(scenario, result, TIERSIM_VERSION);
    if (!vm.count("json")) std::cout << "stored as run " << id << " in " << db_path << "\n";
  }
  return result.fits ? kExitOk : kExitDoesNotFit;
}

}  // namespace tiersim::app
