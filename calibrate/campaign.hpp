#pragma once
// A whole calibration: open the targets safely, sweep block size x queue depth x threads for
// reads and writes (each target alone, then all together), store every point, fit the device
// model with held-out points and build the device profile.
#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "calibrate/io_engine.hpp"
#include "calibrate/runner.hpp"
#include "calibrate/target.hpp"
#include "common/progress.hpp"
#include "config/device_profile.hpp"
#include "store/calibration_points.hpp"

namespace tiersim::calibrate {

// "4096", "4k", "4KiB", "1MiB", "16M", "2GiB": binary multiples, as fio reads them. Zero only
// with `allow_zero` (a reserve may be none; a block or file size may not).
std::uint64_t parse_size_bytes(const std::string& text, bool allow_zero = false);
std::string size_text(std::uint64_t bytes);  // 4KiB, 1MiB, 2GiB

struct SweepPlan {
  std::vector<std::uint32_t> block_bytes;
  std::vector<unsigned> queue_depths;
  std::vector<unsigned> threads;
  std::vector<IoDirection> directions{IoDirection::read, IoDirection::write};
  Pattern pattern = Pattern::random;
  RunLimits limits;
  // Points whose buffers in flight (block x depth x threads) exceed this are skipped: they
  // measure memory pinning, not the drive, and 16 MiB x 256 would need 4 GiB of buffers.
  std::uint64_t max_inflight_bytes = 512ull << 20;
  // Mixed reads and writes (`--rwmix-read`): for each read percentage, a random-offset stream
  // whose requests are reads with that probability, swept over `mixed_block_bytes` and the plan's
  // queue depths and threads, each target alone. Empty: no mixed points. The block sizes are the
  // KV cache's transfers (one block of one layer or layer group: tens of KiB to a few MiB; the
  // serving KV tiers, sim/workloads/serving/kv_tiers.hpp).
  std::vector<int> rwmix_read_pcts;
  std::vector<std::uint32_t> mixed_block_bytes{16u << 10, 64u << 10, 256u << 10, 1u << 20, 2u << 20};
};
SweepPlan quick_plan();  // ~1 minute: 7 block sizes x 4 depths x 1 thread x read/write
SweepPlan full_plan();   // 4 KiB..16 MiB x depth 1..256 x threads 1, 4

struct CalibrationOptions;

// One point of a sweep: the targets measured together and the job.
struct PlannedPoint {
  std::vector<std::size_t> targets;  // indices into the open targets
  JobSpec job;
};
// The points `options.plan` measures on `n_targets` targets whose measured regions hold
// `region_bytes` each, in measurement order: each target alone in each direction, then its mixed
// points, then all targets together.
std::vector<PlannedPoint> plan_points(const CalibrationOptions& options, std::size_t n_targets,
                                      std::uint64_t region_bytes);

struct CalibrationOptions {
  std::vector<std::string> targets;  // directories or files
  std::string raw_device;            // instead of targets, with raw_confirmation naming it again
  std::string raw_confirmation;
  EngineKind engine = EngineKind::io_uring;
  BufferPages buffer_pages = BufferPages::automatic;  // pages under the I/O buffers of every point
  std::string mode = "quick";        // quick, full or point
  SweepPlan plan;
  FileOptions file;                  // region size, O_DIRECT, keep, seed, safety limits
  std::string db_path;               // empty: do not store
  std::string out_path;              // empty: do not write a profile
  OutputOptions out_options;         // the rule for replacing out_path (model/files.hpp)
  std::string name;                  // profile name; empty: derived from the device
  std::string catalog_drive;         // written as the profile's catalog_drive; empty: none
  int heldout_every = 5;
  // Per-drive interface bound for the cache check (calibrate/plausibility.hpp), GB/s; 0: the PCIe
  // link sysfs reports for every target, or no bound when it reports none.
  double interface_gbps = 0;
  std::string options_json;          // the command line, stored with the run
  std::string tool_version;
};

// Calibration progress: a bar, the ETA and the last point, drawn by the one progress line
// (common/progress.hpp): redrawn on a terminal, one plain line per point otherwise (logs, CI).
// Virtual so that tests can silence it.
class Progress {
 public:
  Progress(std::ostream& os, bool tty);
  virtual ~Progress() = default;
  virtual void begin(std::size_t total_points, double estimate_per_point_s);
  virtual void point_done(const std::string& label, const PointResult& result);
  virtual void message(const std::string& line);
  virtual void finish();

 private:
  ProgressLine line_;
  std::size_t total_ = 0, done_ = 0;
  double estimate_per_point_s_ = 1;
  double start_s_ = 0;
};

struct CalibrationOutcome {
  std::int64_t run_id = 0;                 // 0 when not stored
  std::vector<store::CalibrationPoint> points;
  DeviceProfile profile;
};

// Runs the sweep. Throws Interrupted when `stop` is set (files already removed by then),
// SafetyError on refusals, IoError / EngineUnavailable / DirectIoUnsupported on I/O problems.
CalibrationOutcome run_calibration(const CalibrationOptions& options, const std::atomic<bool>* stop,
                                   Progress& progress);

// One point (`tiersim calibrate --point`): same safety rules, stored when db_path is set. A mixed
// job gives two rows, its reads and its writes (rw randrw70-read, randrw70-write); any other one.
std::vector<store::CalibrationPoint> run_single_point(const CalibrationOptions& options, const JobSpec& job, const RunLimits& limits,
                                  const std::atomic<bool>* stop);

}  // namespace tiersim::calibrate
