#pragma once
// Calibration results as stored in the SQLite results store (schema: calibrate/README.md), and
// the functions other code (reports, plots) uses to read them back.
#include <cstdint>
#include <string>
#include <vector>

#include "store/sqlite.hpp"

namespace tiersim::store {

// One measured point: one row of calibration_points.
struct CalibrationPoint {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::string target;          // the measured file or device; several joined by ',' when together
  int target_count = 1;        // > 1: all targets at once (RAID-0 case), bandwidth is the sum
  std::string filesystem;
  std::string device;
  // read, write, randread, randwrite; one direction of a mixed point (`--rwmix-read`, 70% reads):
  // randrw70-read, randrw70-write (rw70-... sequential)
  std::string rw;
  std::string engine;          // io_uring or sync
  std::int64_t block_bytes = 0;
  int queue_depth = 0;         // per thread
  int threads = 0;             // per target
  double duration_s = 0;
  std::int64_t bytes = 0;
  std::int64_t ios = 0;
  double bandwidth_gbps = 0;
  double iops = 0;
  double lat_mean_us = 0, lat_p50_us = 0, lat_p90_us = 0, lat_p99_us = 0, lat_p999_us = 0, lat_max_us = 0;
  bool converged = false;      // stopped early because the bandwidth had settled
  std::string fit_role;        // fit, heldout or none
  double model_bandwidth_gbps = 0;  // the fitted model's prediction; 0 when not fitted
  // Not stored (no column): what `--point --json` reports so a comparison can check its layout.
  std::string buffer_pages = "auto";  // auto, 4k or huge, as asked
  double buffer_huge_fraction = 0;    // share of the I/O buffers the kernel put on huge pages

  bool is_read() const { return rw == "read" || rw == "randread"; }
  bool is_mixed() const { return rw.find('-') != std::string::npos; }
};

// Id of the most recent run in the store, 0 when there is none (or no calibration tables).
std::int64_t latest_calibration_run(store::Database& db);

// Every point of run `run_id` (0: the latest run), in measurement order.
std::vector<CalibrationPoint> read_calibration_points(store::Database& db, std::int64_t run_id = 0);

// Bandwidth against block size for one (target, rw, threads, queue depth): one line of a plot.
struct BandwidthCurve {
  std::string target;
  int target_count = 1;
  std::string rw;
  int threads = 1;
  int queue_depth = 1;
  std::vector<double> block_bytes;      // ascending
  std::vector<double> bandwidth_gbps;   // measured, same order
  std::vector<double> model_bandwidth_gbps;  // fitted model at the same points (0 when not fitted)
};

// The curves of run `run_id` (0: latest), ordered by target, rw, threads and queue depth.
std::vector<BandwidthCurve> read_bandwidth_curves(store::Database& db, std::int64_t run_id = 0);

}  // namespace tiersim::store
