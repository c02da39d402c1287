#pragma once
// The reference validation: every scenario in a folder that carries a published measurement is
// simulated and its prediction compared with the measurement. `tiersim validate` prints it;
// `tiersim report` quotes its out-of-sample error next to the predictions.
//
// In-sample and out-of-sample: some constants of the model and the catalogs were derived from
// published rows (scenarios/validation/derivations.yaml names them). A row that fed a constant, or
// whose source fed a constant its scenario uses, says less about predictions on unseen systems
// than one that did not. Per group, validate reports three means:
//   - in-sample: every prediction row;
//   - no-constant rows: the rows that fed no constant;
//   - leave-one-source-out: each row predicted with the constants derived without its source.
//     No constant can be re-derived mechanically (each was derived by hand), so a row counts as
//     in-sample here when any constant that applies to its scenario was derived from a row of
//     its own source, and the figure is the mean over the other rows.
// Reports and error bands use the leave-one-source-out figure.
#include <atomic>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "model/scenario.hpp"

namespace tiersim::validation {

// One group of mechanisms (scenarios/validation/groups.yaml).
struct GroupDef {
  std::string name;
  // Where a newly modelled group's mechanism lives: the group is provisional until it meets
  // issue 14's bound. Empty: an established group.
  std::string probation;
  // Why the group's mechanism is not modelled ("" = it is): the group never gates.
  std::string provisional;
};

// One constant derived from published rows (scenarios/validation/derivations.yaml).
struct Derivation {
  std::string constant;  // what and where
  std::string value;     // with its unit
  // Reference rows it came from: "case", "case metric" or a source name (every row of it).
  std::vector<std::string> derived_from;
  // Scenario key paths and the values that select the scenarios using it (all must match).
  std::vector<std::pair<std::string, std::string>> applies_to;
  std::string how;
  int line = 0;  // in derivations.yaml, for messages
};

struct ValidationData {
  std::vector<GroupDef> groups;  // report order
  std::vector<Derivation> derivations;
  std::string groups_file, derivations_file;
  const GroupDef* group(const std::string& name) const;
  std::vector<std::string> group_names() const;
};

// Reads <data_dir>/validation/groups.yaml and derivations.yaml ("" = the default data folder).
// Strict: unknown keys and malformed entries are ConfigErrors naming file, line and key.
ValidationData load_validation_data(const std::string& data_dir);

// True when every `applies_to` key of `d` has its value in `s` (case-insensitive; a key the
// scenario's workload kind does not have never matches).
bool derivation_applies(const Derivation& d, const Scenario& s);

struct ValidationRow {
  std::string file;  // file name within the folder
  std::string case_name, metric, source;
  double published = 0, predicted = 0, error_pct = 0;  // error: signed, percent of published
  bool approx = false;  // value read off a published chart
  bool calibration = false;  // this measurement set a hardware parameter of its own scenario
  std::string note;     // e.g. "does not fit: ..."
  std::string group;    // a groups.yaml entry
  std::string ratio_to;  // the denominator's file for a ratio row ("" otherwise)
  bool refused = false;  // a scenario of the row does not fit: error counted as 100%
  // Named by a derivation's derived_from (directly, or through its source).
  bool fed_constant = false;
  // Derivations that apply to the row's scenario(s), by index into ValidationData::derivations.
  std::vector<std::size_t> constants_used;
  // In-sample for leave-one-source-out: a constant it uses was derived from its own source.
  bool source_in_sample = false;
  std::string gpu, stack;  // the (numerator) scenario's GPU and execution stack
  std::vector<std::string> features;  // its model_features (study/accuracy.hpp)
};

// The error of one group of rows (one kind of mechanism). A provisional group's mechanism is not
// modelled yet: its rows are reported with their honest errors but do not gate `validate`.
struct ValidationGroup {
  std::string name;
  std::size_t rows = 0;  // prediction rows (calibration rows left out)
  double mape_pct = 0;   // in-sample: mean absolute percentage error over those rows
  double max_abs_error_pct = 0;
  std::size_t refused_rows = 0;  // of `rows`, scenarios that do not fit (counted at 100%)
  // Over the prediction rows that fed no constant.
  std::size_t no_constant_rows = 0;
  double no_constant_mape_pct = 0;
  // Leave-one-source-out: over the prediction rows whose source fed no constant they use.
  std::size_t out_of_sample_rows = 0;
  double out_of_sample_mape_pct = 0;
  double out_of_sample_max_abs_error_pct = 0;
  bool provisional = false;
  std::string why_provisional;  // what is not modelled, or the bound it misses

  // The error band reports quote, in %: the leave-one-source-out mean, but never less than the
  // in-sample mean (a group whose few out-of-sample rows happen to be its best ones must not
  // promise more than its rows show); the in-sample mean where no row is out of sample.
  double error_band_pct() const {
    return out_of_sample_rows > 0 ? std::max(out_of_sample_mape_pct, mape_pct) : mape_pct;
  }
};

struct ValidationSummary {
  std::vector<ValidationRow> rows;
  double mape_pct = 0;           // mean absolute percentage error over rows
  double max_abs_error_pct = 0;
  // The same over the prediction rows only (calibration rows left out).
  double prediction_mape_pct = 0;
  double prediction_max_abs_error_pct = 0;
  std::size_t prediction_rows = 0;
  // Leave-one-source-out over all prediction rows (see the header).
  double out_of_sample_mape_pct = 0;
  std::size_t out_of_sample_rows = 0;
  // Per group, in groups.yaml order; groups without a row are left out.
  std::vector<ValidationGroup> groups;
  // The groups and derivations the summary was made with.
  ValidationData data;
  // True when every established (non-provisional) group's prediction MAPE is <= `limit_pct`.
  bool established_within(double limit_pct) const;
  // The group called `name`, or nullptr when no row belongs to it.
  const ValidationGroup* group(const std::string& name) const;
  // The parts of `s` no published prediction row anchors (a fitting prediction row on the same
  // GPU, on the same execution stack): "GPU X", "stack Y"; empty when both are anchored.
  std::vector<std::string> unanchored_parts(const Scenario& s) const;
};

// The group a reference row belongs to: its `group` key, else derived from the scenario
// (workload kind; for inference: FlexGen's block schedule, several data-parallel ranks =
// ZeRO-Inference data parallel, no offload at all = serving stack or eager, otherwise
// ZeRO-Inference).
std::string reference_group(const Scenario& s, const Reference& r);

// Issue 14's bound for a group whose mechanism has just been modelled: mean absolute error at
// most 12%, no row worse than 30%.
inline constexpr double kProbationMeanPct = 12.0;
inline constexpr double kProbationMaxPct = 30.0;
// Why a group is provisional given its definition and errors: its mechanism is not modelled
// (GroupDef::provisional), or it is on probation and misses the bound; "" when neither.
std::string provisional_reason(const GroupDef& g, double mape_pct, double max_abs_error_pct);

// Runs every *.yaml in `reference_dir` (sorted by name) that has references. `data_dir`: folder
// holding catalog/ and validation/ ("" = config::default_data_dir()). Throws Error when the folder
// does not exist or holds no reference, a reference names a metric the workload does not produce
// or a group groups.yaml does not define, or a derivation names a row that does not exist.
// `stop` (set by another thread: the Python module's Ctrl-C) stops the simulation in progress and
// throws Interrupted.
ValidationSummary run_validation(const std::string& reference_dir, const std::string& data_dir,
                                 const std::atomic<bool>* stop = nullptr);

// <data_dir>/reference, with "" meaning the default data folder.
std::string default_reference_dir(const std::string& data_dir);

}  // namespace tiersim::validation
