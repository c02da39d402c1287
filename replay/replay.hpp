#pragma once
// Replay: run the simulator's offloaded-inference schedule on a real drive and compare.
//
// Data-loading benchmarks check themselves by replacing accelerator compute with a timed wait and
// running the real I/O; tiersim does the same. A ReplayPlan is the schedule the simulator runs for
// a scenario (per pass and module: the NVMe-resident bytes and the GPU time the model assigns),
// optionally scaled so a 140 GB model fits the machine: every tensor's bytes and every compute
// time are multiplied by the same factor, keeping the layer count and the ratio of I/O to compute.
//
// run_replay executes the plan with real threads on tiersim-owned files (calibrate/target.hpp):
// a fetch thread walking the schedule and reading the first share of each module itself, further
// reader threads for the policy's other threads, each with its own io_uring ring (policy block
// size and queue depth, O_DIRECT, registered buffers), pinned (mlock'ed) host
// buffers, a copy thread for the AIO bounce (memcpy into a buffer standing in for GPU memory) and
// a compute thread that holds each module for its compute time. Prefetch slots bound the queue
// between fetch and compute exactly as in sim/workloads/inference/inference.cpp.
//
// predict_replay runs the same plan on the simulator's event engine with the drive model of a
// calibrated profile, so measured and predicted time line up phase by phase.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "model/scenario.hpp"
#include "model/ssd_model.hpp"
#include "sim/result.hpp"

namespace tiersim::calibrate {
class DeferredRemoval;  // calibrate/target.hpp
class CalibrationFile;  // calibrate/target.hpp
}  // namespace tiersim::calibrate

namespace tiersim::replay {

using calibrate::CalibrationFile;
using calibrate::DeferredRemoval;

// One module of one pass: what the fetch process reads and what the compute process holds.
struct ReplayStep {
  int pass = 0;
  int module = 0;
  std::uint64_t nvme_bytes = 0;  // this module's NVMe-resident tensors, laid out contiguously
  std::uint64_t file_offset_bytes = 0;  // where they start in the replay file's region
  int tensors = 0;                      // tensors read (each pays the fetch overhead)
  double compute_s = 0;                 // GPU (and CPU-attention) time the model assigns
};

struct ReplayPlan {
  std::string scenario;
  double scale = 1;
  int passes = 1;
  int modules = 0;
  IoPath io_path = IoPath::kAio;
  std::uint32_t block_bytes = 1 << 20;
  unsigned queue_depth = 16;
  unsigned threads = 1;
  unsigned swap_buffers = 5;  // AIO bounce buffers
  int prefetch_layers = 1;
  double fetch_overhead_s = 0;    // per tensor, scaled like compute
  std::vector<ReplayStep> steps;  // schedule order: pass-major, then module
  std::uint64_t file_bytes = 0;   // one copy of every streamed module
  std::uint64_t largest_module_bytes = 0;
  double io_bytes() const;   // every read of the schedule
  double compute_s() const;  // every compute stage of the schedule
};

struct PlanOptions {
  double scale = 1;  // bytes and compute times multiplied by this
  int passes = 0;    // 0: the scenario's gen_tokens (prefill + decode steps)
  // Override the policy's I/O operating point (0 = keep): replay at a calibrated point.
  std::uint32_t block_bytes = 0;
  unsigned queue_depth = 0;
  unsigned threads = 0;
};

// Builds the plan from the simulator: modules from model/layout.hpp with DeepSpeed's small-tensor
// rule applied at the unscaled sizes (the real run decides placement, not the shrunken one),
// compute per (pass, module) from the simulator's own timeline. Throws ModelError when the
// scenario streams nothing from NVMe.
ReplayPlan build_replay_plan(const Scenario& scenario, const PlanOptions& options);

// Multiplies every compute time so that compute = `ratio` x the predicted read time of the
// schedule (the suite's knob for I/O-bound, balanced and compute-bound cases).
void set_compute_to_io_ratio(ReplayPlan& plan, double ratio, double read_gbps);

// Rates of this host that the prediction needs besides the drive: a large memcpy (the bounce
// copy, the stand-in for a PCIe copy).
struct HostRates {
  double memcpy_gbps = 8;
  // Dirty page cache below which the kernel does not start writeback by itself
  // (vm.dirty_background_*): a buffered checkpoint smaller than this is written out only at its
  // fsync.
  double dirty_background_bytes = 0;
  // Buffered write() into a fresh file's page cache, 1e9 B/s; 0: the software model's default. On
  // a VM whose guest memory is backed on first touch this was 0.25 GB/s, not ~3.
  double page_cache_write_gbps = 0;
};
HostRates measure_host_rates();

struct PhaseTimes {
  double prefill_s = 0;
  double decode_s = 0;
  double total_s = 0;
};

struct ReplayPrediction {
  PhaseTimes times;
  double read_gbps = 0;  // the drive model at the plan's operating point
  std::vector<sim::TimelineSpan> timeline;
};

// The plan on the event engine: NVMe reads at the drive model's bandwidth for the module's
// transfer (block size, threads x queue depth), bounce copies at memcpy speed, compute as given.
ReplayPrediction predict_replay(const ReplayPlan& plan, const SsdModel& drive,
                                const HostRates& host);

struct ReplayOptions {
  std::string target_dir;
  bool keep_files = false;
  DeferredRemoval* deferred_removal = nullptr;  // remove the replay file later, with its owner's
  const std::atomic<bool>* stop = nullptr;      // SIGINT flag: stop between modules, then clean up
  std::uint64_t reserve_free_bytes = 1ull << 30;
};

struct ReplayMeasurement {
  PhaseTimes times;
  std::vector<sim::TimelineSpan> timeline;  // same resource/label names as the simulator's trace
  double read_bytes = 0;
  double read_busy_s = 0;  // union of the intervals with reads in flight
  double read_gbps() const { return read_busy_s > 0 ? read_bytes / read_busy_s / 1e9 : 0; }
  bool pinned = false;  // mlock succeeded on every host buffer
  std::string file;     // the replay file (removed unless keep_files)
};

// Lays the plan's tensors out in a tiersim-owned file in `target_dir`, runs the schedule and
// removes the file. Throws SafetyError, IoError, EngineUnavailable, DirectIoUnsupported,
// Interrupted.
ReplayMeasurement run_replay(const ReplayPlan& plan, const ReplayOptions& options);

// The same in two steps, so that several replays of one layout (the suite's repeated attempts) pay
// for writing it once and leave one file, not one per attempt: create_replay_file lays out `plan`'s
// modules (any plan with file_bytes not larger can run on it); run_replay runs on that file and
// throws ModelError when the file is too small.
CalibrationFile create_replay_file(const ReplayPlan& plan, const ReplayOptions& options);
ReplayMeasurement run_replay(const ReplayPlan& plan, const CalibrationFile& file,
                             const ReplayOptions& options);

// Signed relative error of a prediction against a measurement, in percent.
double error_pct(double predicted, double measured);

}  // namespace tiersim::replay
