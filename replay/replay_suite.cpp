#include "replay/replay_suite.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <map>
#include <ostream>
#include <sstream>
#include <tuple>

#include "calibrate/campaign.hpp"
#include "calibrate/runner.hpp"
#include "calibrate/target.hpp"
#include "config/device_profile.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "replay/ckpt_writer.hpp"
#include "replay/replay.hpp"
#include "sim/workloads/traits.hpp"
#include "store/replay_store.hpp"
#include "store/sqlite.hpp"

namespace tiersim::replay {

// Replay runs on calibrate's I/O engines, buffers, target files and fits.
using namespace tiersim::calibrate;

double SuiteRow::error_pct() const {
  return replay::error_pct(predicted_s, measured_s);
}
double SuiteRow::point_error_pct() const {
  return replay::error_pct(predicted_point_s, measured_s);
}

namespace {

struct InferenceCase {
  const char* name;
  IoPath path;
  int prefetch_layers;
  std::uint32_t block_bytes;
  unsigned queue_depth;
  double compute_to_io;  // compute / predicted read time of the whole schedule
};

// Block size x depth pairs that the quick calibration also measures (4 KiB..16 MiB in 4x steps,
// depth 1, 4, 16, 64, one thread); 256 KiB x 16 keeps a scaled module at ~40 requests, so the
// queue-drain tail at the end of each module stays small (1 MiB x 4 with 11 requests: 66%), so
// replay and calibration meet at the same operating point.
constexpr InferenceCase kCases[] = {
    {"io-bound aio pf1", IoPath::kAio, 1, 256u << 10, 16, 0.3},
    {"balanced aio pf1", IoPath::kAio, 1, 256u << 10, 16, 1.0},
    {"compute-bound aio pf1", IoPath::kAio, 1, 256u << 10, 16, 3.0},
    {"balanced direct pf4", IoPath::kGds, 4, 256u << 10, 16, 1.0},
    {"io-bound direct pf0", IoPath::kGds, 0, 256u << 10, 16, 0.3},
};

using OpPoint =
    std::tuple<IoDirection, std::uint32_t, unsigned, unsigned>;  // dir, block, depth, threads

// The replay's own pattern (it streams each module's bytes in file order) at its block size and
// depth, on the replay's own file: a separate probe file on this virtual disk read at 0.8-1.0 GB/s
// for minutes while the replay file read at 1.2-1.7 (the host's caching and placement of the two
// differ), so a probe elsewhere measures another device. Not cached: the disk drifts by +-20% over
// minutes, so the suite brackets each replay with a point just before and just after it.
double read_point_gbps(const CalibrationFile& file, const OpPoint& p,
                       const std::atomic<bool>* stop) {
  JobSpec job;
  job.direction = std::get<0>(p);
  job.pattern = Pattern::sequential;
  job.block_bytes = std::get<1>(p);
  job.queue_depth = std::get<2>(p);
  job.threads = std::get<3>(p);
  RunLimits limits;
  limits.warmup_s = 0.2;
  limits.min_s = 1.0;
  limits.max_s = 2.0;
  return run_point(EngineKind::io_uring,
                   {PointTarget{file.fd(), file.region_offset_bytes(), file.region_bytes()}}, job,
                   limits, stop, 7)
      .bandwidth_gbps;
}

// The profile "measured at the replay's exact operating point": the fitted model with its time
// per byte scaled so that it reproduces the bandwidth measured at (block, depth) exactly, keeping
// its shape (how bandwidth falls as the queue drains at the end of a transfer).
SsdModel at_point(SsdModel m, IoDirection dir, double block_bytes, double depth, double gbps) {
  SsdDirectionModel& d = dir == IoDirection::read ? m.read : m.write;
  const double k = d.bandwidth_gbps(block_bytes, depth) / gbps;  // > 1: the fit was optimistic
  d.peak_gbps /= k;
  if (d.stream_gbps > 0) d.stream_gbps /= k;
  d.io_overhead_us *= k;
  d.latency_us *= k;
  return m;
}

// Commits the file system's journal and writes back whatever an earlier step left dirty, so each
// measurement starts from a settled file system (no file is deleted until the suite ends).
void settle(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::syncfs(fd);
  ::close(fd);
}

// Replays and checkpoint writes per case (see the loops below for why more than one). A single
// replay's read rate over its bracketing probes scattered by +-10% here (0.67-1.15 in one run of 20
// pairs), so the inference cases, whose ratio is a criterion of its own, take five.
constexpr int kInferenceAttempts = 5;
constexpr int kCheckpointAttempts = 3;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void store_rows(const std::string& db_path, const SuiteReport& report, const std::string& target) {
  const std::string when = store::utc_timestamp();
  std::vector<store::ReplayRunRow> rows;
  for (const auto& r : report.rows) {
    store::ReplayRunRow row;
    row.created_at = when;
    row.target = target;
    row.name = r.name;
    row.kind = r.kind;
    row.detail = r.detail;
    row.predicted_prefill_s = r.predicted_prefill_s;
    row.measured_prefill_s = r.measured_prefill_s;
    row.predicted_decode_s = r.predicted_decode_s;
    row.measured_decode_s = r.measured_decode_s;
    row.predicted_total_s = r.predicted_s;
    row.measured_total_s = r.measured_s;
    row.error_pct = r.error_pct();
    row.predicted_point_total_s = r.predicted_point_s;
    row.point_error_pct = r.point_error_pct();
    row.replay_read_gbps = r.replay_read_gbps;
    row.calibrated_read_gbps = r.calibrated_read_gbps;
    rows.push_back(std::move(row));
  }
  store::append_replay_runs(db_path, rows);
}

}  // namespace

SuiteReport run_replay_suite(const SuiteOptions& o, std::ostream& out) {
  const auto t_start = std::chrono::steady_clock::now();
  // Every file of the suite stays until the end (see DeferredRemoval), declared first so that it
  // outlives them all.
  DeferredRemoval deferred;
  // 1. This drive's fitted model: a quick calibration unless a profile is given.
  SsdModel drive;
  if (!o.profile_path.empty()) {
    drive = load_device_profile(o.profile_path);
    out << "profile: " << o.profile_path << "\n";
  } else {
    out << "calibrating " << o.target_dir << " (quick sweep)...\n" << std::flush;
    CalibrationOptions co;
    co.targets = {o.target_dir};
    co.plan = quick_plan();
    co.file.region_bytes = 512ull << 20;
    co.file.limits.free_bytes = statvfs_free_bytes;
    co.file.deferred_removal = &deferred;
    co.mode = "quick";
    Progress progress(std::cerr, false);
    drive = run_calibration(co, o.stop, progress).profile.model;
  }
  const HostRates host = measure_host_rates();
  out << "host memcpy: " << std::fixed << std::setprecision(2) << host.memcpy_gbps << " GB/s\n";

  config::LoadOptions lo;
  lo.data_dir = o.data_dir;
  const Scenario base = config::load_scenario(o.scenario_path, lo);
  SuiteReport report;

  std::vector<ReplayPlan> plans;
  for (const InferenceCase& c : kCases) {
    Scenario s = base;
    s.policy.io_path = c.path;
    s.policy.prefetch_layers = c.prefetch_layers;
    PlanOptions po;
    po.passes = o.passes;
    po.block_bytes = c.block_bytes;
    po.queue_depth = c.queue_depth;
    po.threads = 1;
    // Scale so that one pass reads bytes_per_pass: the layer count and I/O-to-compute ratio stay.
    const ReplayPlan full = build_replay_plan(s, po);
    po.scale = std::min(1.0, double(o.bytes_per_pass) / (full.io_bytes() / full.passes));
    plans.push_back(build_replay_plan(s, po));
    set_compute_to_io_ratio(plans.back(), c.compute_to_io,
                            predict_replay(plans.back(), drive, host).read_gbps);
  }
  ReplayOptions ro;
  ro.target_dir = o.target_dir;
  ro.stop = o.stop;
  ro.deferred_removal = &deferred;
  // Every case and attempt reads the same scaled model, so one file laid out once serves them all
  // (a file per attempt would leave 25 files of 2 GiB on the target until the end).
  const CalibrationFile replay_file = create_replay_file(
      *std::max_element(
          plans.begin(), plans.end(),
          [](const ReplayPlan& a, const ReplayPlan& b) { return a.file_bytes < b.file_bytes; }),
      ro);

  for (std::size_t ci = 0; ci < plans.size(); ++ci) {
    const InferenceCase& c = kCases[ci];
    const ReplayPlan& plan = plans[ci];
    const OpPoint op{IoDirection::read, c.block_bytes, c.queue_depth, 1};
    out << "replay: " << c.name << " (scale " << std::setprecision(5) << plan.scale << ", "
        << std::setprecision(0) << plan.io_bytes() / 1048576.0 << " MiB read)...\n"
        << std::flush;
    // One replay is one sample of a disk that drifts by 10-25% between consecutive probes: each
    // case runs several times, each attempt bracketed by read probes at its own block size and
    // depth and predicted at that point, and the attempt with the median error stands for the case
    // (pairing each replay with its own probes keeps the drift out of both the error and the
    // ratio).
    struct Attempt {
      ReplayMeasurement m;
      double point_gbps = 0;  // mean of the probes just before and after this attempt
      ReplayPrediction at_point;
      double error_pct() const {
        return replay::error_pct(at_point.times.total_s, m.times.total_s);
      }
    };
    std::vector<Attempt> attempts;
    std::vector<double> ratios;
    double before = read_point_gbps(replay_file, op, o.stop);
    for (int attempt = 1; attempt <= kInferenceAttempts; ++attempt) {
      settle(o.target_dir);
      Attempt a{run_replay(plan, replay_file, ro), 0, {}};
      const double after = read_point_gbps(replay_file, op, o.stop);
      a.point_gbps = 0.5 * (before + after);
      a.at_point = predict_replay(
          plan, at_point(drive, IoDirection::read, c.block_bytes, c.queue_depth, a.point_gbps),
          host);
      ratios.push_back(a.m.read_gbps() / a.point_gbps);
      out << "  attempt " << attempt << ": " << std::setprecision(3) << a.m.times.total_s
          << " s (predicted at point " << a.at_point.times.total_s << " s), read "
          << std::setprecision(2) << a.m.read_gbps() << " GB/s; probes " << before << " / " << after
          << " GB/s\n"
          << std::flush;
      attempts.push_back(std::move(a));
      before = after;
    }
    std::sort(attempts.begin(), attempts.end(),
              [](const Attempt& a, const Attempt& b) { return a.error_pct() < b.error_pct(); });
    const Attempt& typical = attempts[attempts.size() / 2];
    const ReplayMeasurement& m = typical.m;
    const double point_gbps = typical.point_gbps;
    const ReplayPrediction p = predict_replay(plan, drive, host);
    const ReplayPrediction& pp = typical.at_point;

    SuiteRow row;
    row.name = c.name;
    row.kind = to_string(WorkloadKind::kInference);
    row.detail = std::string(c.path == IoPath::kAio ? "aio" : "direct") + " pf" +
                 std::to_string(c.prefetch_layers) + " " + size_text(c.block_bytes) + "xQD" +
                 std::to_string(c.queue_depth);
    row.predicted_prefill_s = p.times.prefill_s;
    row.measured_prefill_s = m.times.prefill_s;
    row.predicted_decode_s = p.times.decode_s;
    row.measured_decode_s = m.times.decode_s;
    row.predicted_s = p.times.total_s;
    row.measured_s = m.times.total_s;
    row.predicted_point_s = pp.times.total_s;
    row.replay_read_gbps = m.read_gbps();
    row.calibrated_read_gbps = point_gbps;
    row.bandwidth_ratio = median(ratios);
    row.attempt_bandwidth_ratios = ratios;
    report.rows.push_back(row);
  }

  // Checkpoints: same state, both writers.
  double ckpt_s[2] = {0, 0}, ckpt_pred[2] = {0, 0};
  const PinnedBuffer state = make_checkpoint_source(o.checkpoint_bytes);
  for (int k = 0; k < 2; ++k) {
    CheckpointReplayOptions co;
    co.target_dir = o.target_dir;
    co.size_bytes = o.checkpoint_bytes;
    co.stop = o.stop;
    co.deferred_removal = &deferred;
    co.source = &state;
    co.writer =
        k == 0 ? CheckpointWorkload::Writer::kTorchSave : CheckpointWorkload::Writer::kFastPersist;
    out << "checkpoint: " << (k == 0 ? "torch.save" : "FastPersist") << "...\n" << std::flush;
    // Operating point of the writes, on fresh files as the checkpoint's own: the page cache path at
    // the same size (dirty throttling makes it size-dependent: 128 MiB flushed 3x faster than 512
    // MiB here; kernel writeback of a fresh file is not an O_DIRECT point), or the writers' rings
    // alone.
    struct Point {
      double page_cache_gbps = 0, write_gbps = 0;  // write(): 0 for O_DIRECT; the drive's writes
    };
    auto probe = [&]() -> Point {
      if (k == 1) return {0, measure_direct_write_gbps(co)};
      const WritebackRates r = measure_writeback(co, co.size_bytes);
      return {r.page_cache_gbps, r.flush_gbps};
    };
    auto text = [](const Point& p) {
      std::ostringstream s;
      s << std::fixed << std::setprecision(3);
      if (p.page_cache_gbps > 0) s << "write() " << p.page_cache_gbps << " GB/s + fsync ";
      s << p.write_gbps << " GB/s";
      return s.str();
    };
    // This disk's write operating point moves by 20-25% between consecutive probes of the same
    // kind (buffered writes into fresh allocations ran at 0.2 GB/s, into blocks or pages just
    // released at 1-3 GB/s): each case runs three times, bracketed by probes, and the medians of
    // the replays and of the probes are compared.
    std::vector<double> replay_s, page_cache_gbps, write_gbps;
    settle(o.target_dir);
    Point p = probe();
    for (int attempt = 1; attempt <= kCheckpointAttempts; ++attempt) {
      page_cache_gbps.push_back(p.page_cache_gbps);
      write_gbps.push_back(p.write_gbps);
      settle(o.target_dir);
      replay_s.push_back(run_checkpoint_replay(co).total_s);
      settle(o.target_dir);
      const Point next = probe();
      out << "  operating point before: " << text(p) << "; after: " << text(next) << "; replay "
          << std::setprecision(3) << double(co.size_bytes) / replay_s.back() / 1e9 << " GB/s\n"
          << std::flush;
      p = next;
    }
    page_cache_gbps.push_back(p.page_cache_gbps);
    write_gbps.push_back(p.write_gbps);
    CheckpointMeasurement m;
    m.total_s = median(replay_s);
    m.bytes = double(co.size_bytes);
    const double pred = predict_checkpoint_s(co, drive, host);
    const double wgbps = median(write_gbps);
    const double block = k == 0 ? 1048576.0 : double(co.block_bytes);
    const double depth = k == 0 ? 32.0 : double(co.queue_depth) * co.writers;
    HostRates host_at_point = host;
    if (k == 0) host_at_point.page_cache_write_gbps = median(page_cache_gbps);
    const double pred_point = predict_checkpoint_s(
        co, at_point(drive, IoDirection::write, block, depth, wgbps), host_at_point);
    SuiteRow row;
    row.name = k == 0 ? "checkpoint torch.save" : "checkpoint FastPersist";
    row.kind = to_string(WorkloadKind::kCheckpoint);
    row.detail = k == 0 ? "1 thread, buffered 4MiB, fsync"
                        : std::to_string(co.writers) + " writers, O_DIRECT " +
                              size_text(co.block_bytes) + "xQD" + std::to_string(co.queue_depth);
    row.predicted_s = pred;
    row.measured_s = m.total_s;
    row.predicted_point_s = pred_point;
    ckpt_s[k] = m.total_s;
    ckpt_pred[k] = pred_point;
    report.rows.push_back(row);
  }
  report.measured_speedup = ckpt_s[1] > 0 ? ckpt_s[0] / ckpt_s[1] : 0;
  report.predicted_speedup = ckpt_pred[1] > 0 ? ckpt_pred[0] / ckpt_pred[1] : 0;

  double sum = 0, sum_pt = 0;
  report.min_bandwidth_ratio = 1e9;
  for (const auto& r : report.rows) {
    sum += std::abs(r.error_pct());
    sum_pt += std::abs(r.point_error_pct());
    report.max_abs_error_pct = std::max(report.max_abs_error_pct, std::abs(r.error_pct()));
    report.max_abs_point_error_pct =
        std::max(report.max_abs_point_error_pct, std::abs(r.point_error_pct()));
    // The read-rate ratio is the criterion of the replays of a fixed batch's weight fetches
    // (replay.hpp), not of the checkpoint writes.
    const WorkloadTraits* traits = find_workload_traits(r.kind);
    if (traits && traits->has(kCapFixedBatch) && r.calibrated_read_gbps > 0)
      report.min_bandwidth_ratio = std::min(report.min_bandwidth_ratio, r.bandwidth_ratio);
  }
  // The cases share operating points (kCases): pool their attempts per point.
  std::map<std::string, std::vector<double>> by_point;
  for (std::size_t ci = 0; ci < std::size(kCases); ++ci) {
    const auto& r = report.rows[ci];
    auto& pool = by_point[size_text(kCases[ci].block_bytes) + "xQD" +
                          std::to_string(kCases[ci].queue_depth)];
    pool.insert(pool.end(), r.attempt_bandwidth_ratios.begin(), r.attempt_bandwidth_ratios.end());
  }
  report.pooled_bandwidth_ratio = 1e9;
  std::string pooled_text;
  for (const auto& [point, ratios] : by_point) {
    report.pooled_bandwidth_ratio = std::min(report.pooled_bandwidth_ratio, median(ratios));
    std::ostringstream t;
    t << std::fixed << std::setprecision(2) << median(ratios) << " at " << point << " ("
      << ratios.size() << " attempts)";
    pooled_text += (pooled_text.empty() ? "" : ", ") + t.str();
  }
  const double n = double(report.rows.size());
  report.mean_abs_error_pct = sum / n;
  report.mean_abs_point_error_pct = sum_pt / n;

  // The table.
  out << "\n"
      << std::left << std::setw(24) << "case" << std::setw(28) << "config" << std::right
      << std::setw(9) << "pre.pred" << std::setw(9) << "pre.meas" << std::setw(9) << "dec.pred"
      << std::setw(9) << "dec.meas" << std::setw(9) << "tot.pred" << std::setw(9) << "tot.meas"
      << std::setw(8) << "err%" << std::setw(9) << "pt.pred" << std::setw(8) << "pt.err%"
      << std::setw(8) << "rd GB/s" << std::setw(8) << "cal GB/s" << std::setw(7) << "ratio"
      << "\n";
  for (const auto& r : report.rows) {
    out << std::left << std::setw(24) << r.name << std::setw(28) << r.detail << std::right
        << std::fixed << std::setprecision(3) << std::setw(9) << r.predicted_prefill_s
        << std::setw(9) << r.measured_prefill_s << std::setw(9) << r.predicted_decode_s
        << std::setw(9) << r.measured_decode_s << std::setw(9) << r.predicted_s << std::setw(9)
        << r.measured_s << std::setprecision(1) << std::setw(8) << r.error_pct()
        << std::setprecision(3) << std::setw(9) << r.predicted_point_s << std::setprecision(1)
        << std::setw(8) << r.point_error_pct() << std::setprecision(2) << std::setw(8)
        << r.replay_read_gbps << std::setw(8) << r.calibrated_read_gbps << std::setw(7)
        << r.bandwidth_ratio << "\n";
  }
  out << std::setprecision(1) << "\nfitted profile:          mean |error| "
      << report.mean_abs_error_pct << "%, max " << report.max_abs_error_pct << "%\n"
      << "operating-point profile: mean |error| " << report.mean_abs_point_error_pct << "%, max "
      << report.max_abs_point_error_pct << "%\n"
      << std::setprecision(2) << "FastPersist speedup over torch.save: measured "
      << report.measured_speedup << "x, predicted " << report.predicted_speedup << "x ("
      << std::setprecision(1) << error_pct(report.predicted_speedup, report.measured_speedup)
      << "%)\n"
      << std::setprecision(2)
      << "replay read bandwidth / calibration at the same block and depth: median " << pooled_text
      << "; per case " << report.min_bandwidth_ratio << " at worst\n";
  const double speedup_err = std::abs(error_pct(report.predicted_speedup, report.measured_speedup));
  report.passed = report.mean_abs_point_error_pct <= 10 && report.max_abs_point_error_pct <= 20 &&
                  report.measured_speedup > 1 && speedup_err <= 15 &&
                  report.pooled_bandwidth_ratio >= 0.9;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  out << "suite " << (report.passed ? "PASSED" : "FAILED") << " in " << std::setprecision(0)
      << elapsed << " s\n";
  if (!o.db_path.empty()) store_rows(o.db_path, report, o.target_dir);
  return report;
}

}  // namespace tiersim::replay
