#pragma once
// The `replay_runs` table: one row per replayed case, predicted against measured times. Written
// by `tiersim replay --db` (one scenario) and by the hardware validation suite (`replay --suite`,
// `validate --hardware`); read by people with sqlite3. Every write to it goes through here.
#include <optional>
#include <string>
#include <vector>

namespace tiersim::store {

struct ReplayRunRow {
  std::string created_at;  // ISO 8601 UTC (store::utc_timestamp())
  std::string target;      // the folder replayed on
  std::string name;        // the scenario file, or the suite's case name
  std::string kind;        // inference or checkpoint
  std::string detail;      // scale, path, prefetch, block x depth, ...
  double predicted_prefill_s = 0, measured_prefill_s = 0;
  double predicted_decode_s = 0, measured_decode_s = 0;
  double predicted_total_s = 0, measured_total_s = 0;
  double error_pct = 0;  // (predicted - measured) / measured, percent
  // With the profile measured at the replay's own operating point (the suite only; NULL otherwise).
  std::optional<double> predicted_point_total_s, point_error_pct;
  double replay_read_gbps = 0;                       // drive bandwidth the replay saw
  std::optional<double> calibrated_read_gbps;        // the calibration's, where one ran (suite)
};

// Appends the rows to `replay_runs` in the results database at `db_path` (created, or its replay
// part brought up to date, as needed), in one transaction.
void append_replay_runs(const std::string& db_path, const std::vector<ReplayRunRow>& rows);

}  // namespace tiersim::store
