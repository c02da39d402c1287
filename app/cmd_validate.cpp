// tiersim validate: predicted vs published for every reference scenario.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "sim/simulate.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace tiersim::app {

namespace {

struct Row {
  std::string file, case_name, metric, source;
  double published = 0, predicted = 0, error_pct = 0;
  bool approx = false;
  std::string note;
};

}  // namespace

int cmd_validate(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim validate [options]\n\n"
      "Runs every scenario under the reference folder (scenarios/reference by default), each of\n"
      "which carries a published measurement, and prints predicted vs published with the error\n"
      "and the mean absolute percentage error (MAPE). Exits 1 when the MAPE exceeds --max-mape.\n\n"
      "options");
  std::string dir, data_dir;
  double max_mape = 15.0;
  opts.add_options()("help,h", "show this help")(
      "dir", po::value<std::string>(&dir), "folder of reference scenarios (default: <data>/reference)")(
      "data-dir", po::value<std::string>(&data_dir), "folder holding catalog/ and reference/")(
      "max-mape", po::value<double>(&max_mape)->default_value(15.0),
      "fail (exit 1) when the mean absolute percentage error is above this, in percent")(
      "json", "print the table as JSON");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\nexample:\n  tiersim validate --max-mape 15\n";
    return kExitOk;
  }
  if (dir.empty()) dir = (fs::path(data_dir.empty() ? config::default_data_dir() : data_dir) / "reference").string();
  if (!fs::is_directory(dir)) throw Error("reference folder '" + dir + "' does not exist");

  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());

  config::LoadOptions load;
  load.data_dir = data_dir;
  const config::Catalog catalog = config::Catalog::load(data_dir);
  load.catalog = &catalog;
  std::vector<Row> rows;
  for (const auto& f : files) {
    const Scenario s = config::load_scenario(f.string(), load);
    if (s.references.empty()) continue;
    const sim::RunResult r = sim::simulate(s);
    for (const auto& ref : s.references) {
      Row row{f.filename().string(), ref.case_name, ref.metric, ref.source, ref.value, 0, 0,
              ref.approx, ""};
      if (!r.fits) {
        row.note = "does not fit: " + r.shortfall;
        row.error_pct = 100;
      } else if (!r.has_metric(ref.metric)) {
        throw Error(f.string() + ": reference metric '" + ref.metric +
                    "' is not an output of a " + r.workload + " workload");
      } else {
        row.predicted = r.metric(ref.metric);
        row.error_pct = 100.0 * (row.predicted - row.published) / row.published;
      }
      rows.push_back(row);
    }
  }
  if (rows.empty()) throw Error("no reference scenarios found in '" + dir + "'");
  double sum = 0, worst = 0;
  for (const auto& r : rows) {
    sum += std::fabs(r.error_pct);
    worst = std::max(worst, std::fabs(r.error_pct));
  }
  const double mape = sum / double(rows.size());

  if (vm.count("json")) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows)
      j.push_back({{"case", r.case_name}, {"metric", r.metric}, {"source", r.source},
                   {"published", r.published}, {"predicted", r.predicted},
                   {"error_pct", r.error_pct}, {"approx", r.approx}, {"note", r.note}});
    std::cout << nlohmann::json{{"cases", j}, {"mape_pct", mape}, {"max_abs_error_pct", worst}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("%-36s %-24s %10s %10s %8s\n", "case", "metric", "published", "predicted",
                "error");
    for (const auto& r : rows) {
      std::printf("%-36s %-24s %9.3g%s %10.3g %+7.1f%%%s%s\n", r.case_name.c_str(),
                  r.metric.c_str(), r.published, r.approx ? "~" : " ", r.predicted, r.error_pct,
                  r.note.empty() ? "" : "  ", r.note.c_str());
    }
    std::printf("\n%zu cases; mean absolute percentage error %.1f%% (max %.1f%%); limit %.1f%%\n",
                rows.size(), mape, worst, max_mape);
    std::printf("(~ marks values read off a published bar chart)\n");
  }
  return mape <= max_mape ? kExitOk : kExitFailure;
}

}  // namespace tiersim::app
