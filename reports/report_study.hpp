#pragma once
// `tiersim report` from its options to the written files: reads the runs of a results database,
// runs the reference validation (study/validation.hpp) for the header and the error bands, the
// sensitivity of the two leading configurations for the tornado charts (study/sensitivity.hpp),
// and writes index.html, report.md and metrics.csv (reports/report.hpp). The program and the
// Python module call this one function and print or return report_json of its outcome.
#include <atomic>
#include <nlohmann/json.hpp>
#include <string>

#include "model/files.hpp"
#include "reports/report.hpp"
#include "sim/metrics.hpp"

namespace tiersim::reports {

struct ReportRequest {
  std::string db;          // results database (must exist; opened read-only)
  std::string out_dir;     // folder to write into
  std::string sweep;       // only this sweep's runs (empty: every run)
  bool has_sweep = false;  // --sweep given (an empty name selects the runs of no sweep)
  std::string title = "tiersim cost report";
  std::string data_dir;
  std::string vendor_dir;
  std::string objective = std::string(sim::metric::kUsdPerMillionTokens.name);
  bool validation = true;   // false: --no-validation
  bool sensitivity = true;  // false: --no-sensitivity
  OutputOptions output;     // --force
  std::string tool_version;
  // Set by another thread (the Python module's Ctrl-C): stops before the pages are written
  // (the tornado simulations stop early) and throws Interrupted.
  const std::atomic<bool>* stop = nullptr;
};

struct ReportOutcome {
  ReportFiles files;
  std::size_t runs = 0;
  ValidationInfo validation;       // available false: skipped or failed (error says which)
  bool validation_failed = false;  // asked for and failed: the report was written without it
};

// Throws before the long work when the output files may not be replaced, the objective is not a
// metric with a known better direction, or the database does not exist or has no runs.
ReportOutcome run_report(const ReportRequest& request);

// `tiersim report --json`: the files written, the number of runs and the validation header.
nlohmann::json report_json(const ReportOutcome& outcome);

}  // namespace tiersim::reports
