#pragma once
// One measured point: `threads` workers per target, each with its own engine (ring) keeping
// `queue_depth` requests of `block_bytes` in flight, for a bounded time or size after a warm-up.
// Bandwidth and IOPS come from completion counters sampled by the calling thread; latency from
// per-worker histograms merged at the end.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/io_engine.hpp"
#include "calibrate/histogram.hpp"
#include "calibrate/target.hpp"
#include "model/errors.hpp"

namespace tiersim::calibrate {

enum class Pattern { sequential, random };

struct JobSpec {
  IoDirection direction = IoDirection::read;
  Pattern pattern = Pattern::random;
  std::uint32_t block_bytes = 1 << 20;
  unsigned queue_depth = 1;   // per thread; the sync engine always runs 1
  unsigned threads = 1;       // per target
  BufferPages buffer_pages = BufferPages::automatic;  // pages under each worker's buffers
  // Mixed reads and writes (fio's randrw with rwmixread): each new request is a read with this
  // probability in percent, else a write, over the same queue; `direction` is then ignored.
  // -1 = every request in `direction`.
  int rwmix_read_pct = -1;
  bool mixed() const { return rwmix_read_pct >= 0; }
};

// "read", "write", "randread", "randwrite" (fio's names) <-> direction and pattern. A mixed job's
// name is "randrw<pct>" ("rw<pct>" sequential): randrw70 is 70% reads.
JobSpec parse_rw(const std::string& rw);
std::string rw_name(const JobSpec& job);

struct RunLimits {
  double warmup_s = 0.2;              // run but do not count: fills queues, wakes the drive
  double min_s = 0.5;                 // measure at least this long before convergence may stop
  double max_s = 2.0;                 // time bound
  std::uint64_t max_bytes = 0;        // size bound; 0 = none
  double window_s = 0.05;             // sampling interval of the counters
  bool stop_on_convergence = true;
  double converge_tolerance = 0.02;   // cumulative bandwidth stable within +-2% ...
  int converge_windows = 6;           // ... over this many windows
};

struct PointTarget {
  int fd = -1;
  std::uint64_t region_offset_bytes = 0;
  std::uint64_t region_bytes = 0;
};

// What one direction of a point did (a mixed point has both): bandwidth and IOPS of its
// completions over the whole measured interval, and its completion latency.
struct DirectionResult {
  std::uint64_t bytes = 0;
  std::uint64_t ios = 0;
  double bandwidth_gbps = 0;
  double iops = 0;
  double lat_mean_us = 0, lat_p50_us = 0, lat_p90_us = 0, lat_p99_us = 0, lat_p999_us = 0,
         lat_max_us = 0;
};

struct PointResult {
  DirectionResult read, write;  // each direction's share of the totals below
  double duration_s = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ios = 0;
  double bandwidth_gbps = 0;
  double iops = 0;
  double lat_mean_us = 0;
  double lat_p50_us = 0;
  double lat_p90_us = 0;
  double lat_p99_us = 0;
  double lat_p999_us = 0;
  double lat_max_us = 0;
  bool converged = false;
  unsigned effective_queue_depth = 0;  // per thread, after the engine's capabilities
  unsigned engine_caps = 0;
  std::uint64_t short_ios = 0;         // completions that moved fewer bytes than asked (resubmitted)
  std::uint64_t retries = 0;           // -EAGAIN / -EINTR completions (resubmitted)
  double buffer_huge_fraction = 0;     // share of the I/O buffers the kernel put on huge pages
};

// Runs one point. `stop` (may be null) is polled every window: when set, the point ends early and
// the function throws Interrupted after the workers have drained. Throws IoError on I/O errors.
PointResult run_point(EngineKind engine, const std::vector<PointTarget>& targets, const JobSpec& job,
                      const RunLimits& limits, const std::atomic<bool>* stop, std::uint64_t seed);

// The run was stopped by SIGINT/SIGTERM (or a test's stop flag): the one error for that
// (model/errors.hpp), which the simulator throws too.
using Interrupted = tiersim::Interrupted;

}  // namespace tiersim::calibrate
