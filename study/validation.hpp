#pragma once
// The reference validation: every scenario in a folder that carries a published measurement is
// simulated and its prediction compared with the measurement. `tiersim validate` prints it;
// `tiersim report` quotes its mean absolute error next to the predictions.
#include <string>
#include <vector>

#include "model/scenario.hpp"

namespace tiersim::validation {

struct ValidationRow {
  std::string file;  // file name within the folder
  std::string case_name, metric, source;
  double published = 0, predicted = 0, error_pct = 0;  // error: signed, percent of published
  bool approx = false;  // value read off a published chart
  bool calibration = false;  // this measurement set a hardware parameter of its own scenario
  std::string note;     // e.g. "does not fit: ..."
  std::string group;    // validation_groups() entry
};

// The error of one group of rows (one kind of mechanism). A provisional group's mechanism is not
// modelled yet: its rows are reported with their honest errors but do not gate `validate`.
struct ValidationGroup {
  std::string name;
  std::size_t rows = 0;  // prediction rows (calibration rows left out)
  double mape_pct = 0;   // mean absolute percentage error over those rows
  double max_abs_error_pct = 0;
  bool provisional = false;
  std::string why_provisional;  // what is not modelled, or the bound it misses
};

struct ValidationSummary {
  std::vector<ValidationRow> rows;
  double mape_pct = 0;           // mean absolute percentage error over rows
  double max_abs_error_pct = 0;
  // The same over the prediction rows only (calibration rows left out): the honest figure.
  double prediction_mape_pct = 0;
  double prediction_max_abs_error_pct = 0;
  std::size_t prediction_rows = 0;
  // Per group, in validation_groups() order; groups without a row are left out.
  std::vector<ValidationGroup> groups;
  // True when every established (non-provisional) group's prediction MAPE is <= `limit_pct`.
  bool established_within(double limit_pct) const;
  // The group called `name`, or nullptr when no row belongs to it.
  const ValidationGroup* group(const std::string& name) const;
};

// The group a reference row belongs to: its `group` key, else derived from the scenario
// (workload kind; for inference: FlexGen's block schedule, no offload at all = serving stack,
// otherwise ZeRO-Inference).
std::string reference_group(const Scenario& s, const Reference& r);

// Why a group is provisional whatever its error: its mechanism is not modelled ("" otherwise).
std::string provisional_reason(const std::string& group);

// Issue 14's bound for a group whose mechanism has just been modelled: mean absolute error at
// most 12%, no row worse than 30%.
inline constexpr double kProbationMeanPct = 12.0;
inline constexpr double kProbationMaxPct = 30.0;
// Why a modelled group on probation (the serving stack) is still provisional given its errors:
// it misses that bound ("" when it meets it, and for every other group).
std::string probation_reason(const std::string& group, double mape_pct, double max_abs_error_pct);

// Runs every *.yaml in `reference_dir` (sorted by name) that has references. `data_dir`: folder
// holding catalog/ ("" = config::default_data_dir()). Throws Error when the folder does not exist
// or holds no reference, or a reference names a metric the workload does not produce.
ValidationSummary run_validation(const std::string& reference_dir, const std::string& data_dir);

// <data_dir>/reference, with "" meaning the default data folder.
std::string default_reference_dir(const std::string& data_dir);

}  // namespace tiersim::validation
