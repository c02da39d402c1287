#include "study/validation.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "sim/simulate.hpp"

namespace fs = std::filesystem;

namespace tiersim::sim {

std::string default_reference_dir(const std::string& data_dir) {
  return (fs::path(data_dir.empty() ? config::default_data_dir() : data_dir) / "reference")
      .string();
}

ValidationSummary run_validation(const std::string& dir, const std::string& data_dir) {
  if (!fs::is_directory(dir)) throw Error("reference folder '" + dir + "' does not exist");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());

  config::LoadOptions load;
  load.data_dir = data_dir;
  const config::Catalog catalog = config::Catalog::load(data_dir);
  load.catalog = &catalog;
  ValidationSummary out;
  for (const auto& f : files) {
    const Scenario s = config::load_scenario(f.string(), load);
    if (s.references.empty()) continue;
    const RunResult r = simulate(s);
    for (const auto& ref : s.references) {
      ValidationRow row{f.filename().string(), ref.case_name, ref.metric, ref.source, ref.value,
                        0, 0, ref.approx, ref.calibration, ""};
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
      out.rows.push_back(row);
    }
  }
  if (out.rows.empty()) throw Error("no reference scenarios found in '" + dir + "'");
  double sum = 0, prediction_sum = 0;
  for (const auto& r : out.rows) {
    const double e = std::fabs(r.error_pct);
    sum += e;
    out.max_abs_error_pct = std::max(out.max_abs_error_pct, e);
    if (r.calibration) continue;
    prediction_sum += e;
    ++out.prediction_rows;
    out.prediction_max_abs_error_pct = std::max(out.prediction_max_abs_error_pct, e);
  }
  out.mape_pct = sum / double(out.rows.size());
  if (out.prediction_rows > 0) out.prediction_mape_pct = prediction_sum / double(out.prediction_rows);
  return out;
}

}  // namespace tiersim::sim
