#pragma once
// Reports built from the results store: one self-contained HTML page (Vega-Lite plots, all
// JavaScript inlined, opens offline), the same comparison table as Markdown, and a CSV of every
// metric. `tiersim report` gathers the inputs (runs, calibration curves, validation error) and
// calls write_report().
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/files.hpp"
#include "reports/decision.hpp"
#include "store/capacity_studies.hpp"
#include "store/results_store.hpp"
#include "store/sweep_tables.hpp"

namespace tiersim::reports {

// One measured bandwidth-vs-block-size line (from store/calibration_points.hpp's read_bandwidth_curves;
// copied here so the report library does not depend on the calibration library).
struct CalibrationCurve {
  std::string target;
  std::string rw;
  int threads = 1;
  int queue_depth = 1;
  std::vector<double> block_bytes;
  std::vector<double> bandwidth_gbps;
  std::vector<double> model_bandwidth_gbps;  // 0 where not fitted
};

// The model's error against published measurements (study/validation.hpp), quoted in the header.
struct ValidationInfo {
  bool available = false;
  std::size_t measurements = 0;
  double mape_pct = 0;  // in-sample, every row
  double max_abs_error_pct = 0;
  // Leave-one-source-out over every prediction row (study/validation.hpp).
  std::size_t out_of_sample_measurements = 0;
  double out_of_sample_mape_pct = 0;
  std::string error;  // why it is not available
  // The error of each validation group the report's configurations belong to (tiersim validate's
  // groups). Empty: the header quotes the global figure above.
  struct Group {
    std::string name;
    std::size_t configurations = 0;  // runs of this report in the group
    std::size_t measurements = 0;    // published prediction rows in the group (0: none covers it)
    double mape_pct = 0;  // in-sample: every prediction row of the group
    double max_abs_error_pct = 0;
    // Leave-one-source-out (study/validation.hpp): the rows whose source fed no constant they
    // use. The error band is this figure; 0 rows: no out-of-sample error is known.
    std::size_t out_of_sample_measurements = 0;
    double out_of_sample_mape_pct = 0;
    double out_of_sample_max_abs_error_pct = 0;
    bool provisional = false;  // validate's verdict: not modelled yet, or outside its bound
    std::string why_provisional;  // validate's reason, quoted in the header
  };
  std::vector<Group> groups;
};

struct ReportInput {
  std::string title = "tiersim cost report";
  std::string sweep;           // "" = every run in the store
  std::string database_name;   // shown in the header (file name only)
  std::string tool_version;
  // One entry per configuration (reports/entries.hpp one_entry_per_configuration: a capacity
  // search's load points are one entry, its run at the sustained rate).
  std::vector<store::StoredRun> runs;
  // Per entry (same order as runs): the capacity search it stands for, when it stands for one.
  std::vector<std::optional<store::CapacityStudy>> capacity;
  // Every serving run at an offered rate, the load points of the capacity searches included:
  // what the latency-vs-load charts draw. Empty: they draw `runs`.
  std::vector<store::StoredRun> load_points;
  // Per entry (same order as runs; may be shorter): the points of its sweep or plan with the same
  // timings that add only hardware the run does not use (reports/entries.hpp
  // collapse_same_timings), listed with it instead of as entries of their own.
  std::vector<std::vector<std::string>> same_timings;
  // What the plan(s) the runs belong to decided about each point (`tiersim plan --db`), to say why
  // a configuration was rejected; empty outside plans.
  std::vector<store::PlanVerdict> plan_verdicts;
  std::vector<CalibrationCurve> calibration;
  ValidationInfo validation;
  std::string vendor_dir;  // folder holding vega*.min.js; "" = default_vendor_dir()
  DecisionInput decision;  // the summary at the top (reports/decision.hpp)
  // Per entry (same order as runs; may be shorter, e.g. empty): the notes on its inputs
  // (InputNote, model/scenario.hpp), from its stored resolved scenario loaded again.
  std::vector<std::vector<InputNote>> notes;
};

struct ReportFiles {
  std::string html;      // index.html
  std::string markdown;  // report.md
  std::string csv;       // metrics.csv
};

// The validation error that applies to the report's configurations, per validation group (or
// "no published case covers it"), as one sentence for the report's header and the console.
std::string validation_sentence(const ValidationInfo& v);

// The paths write_report writes in out_dir.
ReportFiles report_files(const std::string& out_dir);
// Throws IoError when one of them may not be replaced (model/files.hpp), so that a command can
// refuse before its long work; write_report checks the same first.
void check_report_outputs(const std::string& out_dir, const OutputOptions& output);
// Writes the three files into out_dir (created if needed) under the one rule for outputs
// (model/files.hpp: each replaced atomically, never through a link, and a file tiersim did not
// write is replaced only with `output.force`). Throws IoError, before writing anything, when one
// of them may not be replaced or a vendored script is missing, and when a file cannot be written.
ReportFiles write_report(const ReportInput& input, const std::string& out_dir,
                         const OutputOptions& output = {});

// $TIERSIM_VENDOR_DIR when set, else the source tree's reports/vendor.
std::string default_vendor_dir();

// Pieces exposed for tests. Each escapes for one context and replaces invalid UTF-8 first.
// A CSV field (RFC 4180 quoting; a leading = + - @ TAB CR gets a ' so spreadsheets show text).
std::string csv_escape(const std::string& s);
// HTML text and quoted attribute values.
std::string html_escape(const std::string& s);
// Markdown text (table cells, headings, list items).
std::string md_escape(const std::string& s);
// `s` with every byte that is not part of well-formed UTF-8 replaced by U+FFFD.
std::string valid_utf8(std::string_view s);
// "catalog", "profile", "override", "default" or "other": the kind of a provenance source.
std::string provenance_kind(const std::string& source);

}  // namespace tiersim::reports
