#pragma once
// The hardware validation suite: a fixed set of small replays (I/O-bound, balanced and compute-
// bound; shallow and deep prefetch; AIO and direct paths; both checkpoint writers) run on one
// drive, each compared with the simulator's prediction for the same drive's calibrated profile.
// `tiersim replay --suite --target DIR` runs it; `validate --hardware` can call it directly.
#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tiersim::replay {

struct SuiteOptions {
  std::string target_dir;
  std::string scenario_path;  // inference scenario the cases are scaled from
  std::string data_dir;       // catalog folder; empty = default
  std::string profile_path;   // empty: run a quick calibration first
  std::string db_path;        // empty: do not store
  // NVMe bytes one forward pass reads, after scaling: 2 GiB keeps a module at ~50 requests of 256
  // KiB, so the ring runs at its full depth for most of each module (at 512 MiB, ~13: never full).
  std::uint64_t bytes_per_pass = 2048ull << 20;
  int passes = 2;  // prefill + one decode step
  std::uint64_t checkpoint_bytes = 512ull << 20;
  const std::atomic<bool>* stop = nullptr;
};

struct SuiteRow {
  std::string name;
  std::string kind;    // inference or checkpoint
  std::string detail;  // path, prefetch, block x depth, compute/io ratio
  double predicted_prefill_s = 0, measured_prefill_s = 0;
  double predicted_decode_s = 0, measured_decode_s = 0;
  double predicted_s = 0, measured_s = 0;  // total
  double predicted_point_s = 0;  // with the profile measured at the replay's operating point
  double replay_read_gbps = 0,
         calibrated_read_gbps = 0;  // drive bandwidth seen by replay vs calibration
  // Median over the attempts of (replay read GB/s / the calibration points just before and after
  // that attempt): pairing each replay with its own probes keeps the disk's drift out of the ratio.
  double bandwidth_ratio = 0;
  std::vector<double> attempt_bandwidth_ratios;  // the per-attempt ratios behind it
  double error_pct() const;
  double point_error_pct() const;
};

struct SuiteReport {
  std::vector<SuiteRow> rows;
  double mean_abs_error_pct = 0, max_abs_error_pct = 0;              // fitted profile
  double mean_abs_point_error_pct = 0, max_abs_point_error_pct = 0;  // operating-point profile
  double measured_speedup = 0, predicted_speedup = 0;                // FastPersist over torch.save
  double min_bandwidth_ratio = 0;  // SuiteRow::bandwidth_ratio, worst inference case
  // The acceptance ratio: per operating point (block size x depth), the median of every paired
  // attempt's replay read GB/s over its probes, all cases at that point pooled; the worst point.
  // One case's five attempts still scatter by +-8% on a disk that drifts within seconds.
  double pooled_bandwidth_ratio = 0;
  bool passed = false;  // the acceptance thresholds
};

// Runs the suite, printing progress and the table to `out`. Throws like run_replay.
SuiteReport run_replay_suite(const SuiteOptions& options, std::ostream& out);

}  // namespace tiersim::replay
