#pragma once
// Writing calibration runs and points into the results store (tables created on first use).
#include <cstdint>
#include <string>
#include <vector>

#include "store/calibration_points.hpp"
#include "store/sqlite.hpp"

namespace tiersim::store {

// CREATE TABLE IF NOT EXISTS for calibration_runs and calibration_points.
void create_calibration_tables(store::Database& db);

struct CalibrationRun {
  std::string started_at;      // ISO 8601 UTC
  std::string host;
  std::string kernel;
  std::string mode;            // quick, full or point
  std::string engine;
  bool direct = true;
  std::int64_t file_size_bytes = 0;
  std::vector<std::string> targets;
  std::string options_json;    // every option of the command line, as JSON
  std::string tool_version;
};

std::int64_t insert_run(store::Database& db, const CalibrationRun& run);
// Inserts `point` (its run_id must be set) and returns its id.
std::int64_t insert_point(store::Database& db, const CalibrationPoint& point);
// Records the fit's verdict on a stored point.
void update_point_fit(store::Database& db, std::int64_t point_id, const std::string& fit_role,
                      double model_bandwidth_gbps);
void set_run_profile(store::Database& db, std::int64_t run_id, const std::string& profile_path,
                     const std::string& finished_at);

}  // namespace tiersim::store
