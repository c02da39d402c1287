// The calibration sweep, the fit of its points and the device profile.
#include "calibrate/campaign.hpp"
#include "common/progress.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>

#include "calibrate/fit.hpp"
#include "calibrate/plausibility.hpp"
#include "store/calibration_store.hpp"
#include "store/sqlite.hpp"

namespace tiersim::calibrate {

std::uint64_t parse_size_bytes(const std::string& text, bool allow_zero) {
  std::size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw Error("cannot read size '" + text + "' (examples: 4096, 4KiB, 1MiB, 2GiB)");
  }
  std::string unit = text.substr(pos);
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double mult = 1;
  if (unit.empty() || unit == "b") {
    mult = 1;
  } else if (unit == "k" || unit == "kb" || unit == "kib") {
    mult = 1024.0;
  } else if (unit == "m" || unit == "mb" || unit == "mib") {
    mult = 1024.0 * 1024;
  } else if (unit == "g" || unit == "gb" || unit == "gib") {
    mult = 1024.0 * 1024 * 1024;
  } else if (unit == "t" || unit == "tb" || unit == "tib") {
    mult = 1024.0 * 1024 * 1024 * 1024;
  } else {
    throw Error("unknown size unit in '" + text + "' (use KiB, MiB, GiB or TiB)");
  }
  const double bytes = value * mult;
  if (allow_zero && bytes == 0) return 0;
  if (!(bytes > 0) || bytes > 1e18 || bytes != std::floor(bytes)) {
    throw Error("size '" + text + "' must be a " + (allow_zero ? "" : "positive ") +
                "whole number of bytes");
  }
  return static_cast<std::uint64_t>(bytes);
}

std::string size_text(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + units[u];
}

SweepPlan quick_plan() {
  SweepPlan p;
  for (std::uint32_t b = 4096; b <= (16u << 20); b *= 4) p.block_bytes.push_back(b);
  p.queue_depths = {1, 4, 16, 64};
  p.threads = {1};
  p.limits.warmup_s = 0.1;
  p.limits.min_s = 0.3;
  p.limits.max_s = 0.7;
  p.limits.window_s = 0.05;
  p.limits.converge_tolerance = 0.03;
  p.limits.converge_windows = 5;
  return p;
}

SweepPlan full_plan() {
  SweepPlan p;
  for (std::uint32_t b = 4096; b <= (16u << 20); b *= 2) p.block_bytes.push_back(b);
  for (unsigned q = 1; q <= 256; q *= 2) p.queue_depths.push_back(q);
  p.threads = {1, 4};
  p.limits.warmup_s = 0.3;
  p.limits.min_s = 1.0;
  p.limits.max_s = 3.0;
  p.limits.window_s = 0.1;
  p.limits.converge_tolerance = 0.02;
  p.limits.converge_windows = 6;
  return p;
}

namespace {

std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("unknown");
}

std::string kernel_release() {
  utsname u{};
  return ::uname(&u) == 0 ? std::string(u.release) : std::string("unknown");
}

struct OpenTarget {
  std::unique_ptr<CalibrationFile> file;
  std::string name;  // what the user named
  TargetDescription where;
};

std::vector<OpenTarget> open_targets(const CalibrationOptions& o, Progress* progress) {
  std::vector<OpenTarget> out;
  if (!o.raw_device.empty()) {
    OpenTarget t;
    t.file = std::make_unique<CalibrationFile>(CalibrationFile::open_raw_device(o.raw_device, o.raw_confirmation, o.file));
    t.name = o.raw_device;
    t.where = describe_target(o.raw_device);
    out.push_back(std::move(t));
    return out;
  }
  if (o.targets.empty()) throw Error("no target: give --target DIR_OR_FILE (or --raw-device)");
  // The results database, when given, records every scratch file while it exists, so that files
  // of a run that died (SIGKILL) can be proven tiersim's and removed now.
  if (!o.db_path.empty()) {
    const int stale = FileRegistry(o.db_path).remove_stale_files();
    if (stale > 0 && progress)
      progress->message("removed " + std::to_string(stale) +
                        " calibration file(s) left by a run that no longer exists (registered in " +
                        o.db_path + ")");
  }
  int index = 0;
  for (const auto& target : o.targets) {
    std::error_code ec;
    FileOptions fo = o.file;
    fo.seed = o.file.seed + static_cast<std::uint64_t>(index);
    if (fo.registry_path.empty()) fo.registry_path = o.db_path;
    OpenTarget t;
    if (std::filesystem::is_directory(target, ec)) {
      t.file = std::make_unique<CalibrationFile>(CalibrationFile::create_in_dir(target, index, fo));
    } else {
      t.file = std::make_unique<CalibrationFile>(CalibrationFile::open_path(target, fo));
    }
    t.name = target;
    t.where = describe_target(t.file->path());
    out.push_back(std::move(t));
    ++index;
  }
  return out;
}

PointTarget point_target(const CalibrationFile& f) {
  return PointTarget{f.fd(), f.region_offset_bytes(), f.region_bytes()};
}

}  // namespace

std::vector<PlannedPoint> plan_points(const CalibrationOptions& o, std::size_t n_targets, std::uint64_t region_bytes) {
  const SweepPlan& p = o.plan;
  // The sync engine keeps one request per thread in flight: depth comes only from threads.
  std::vector<unsigned> depths = o.engine == EngineKind::sync ? std::vector<unsigned>{1} : p.queue_depths;
  auto fits = [&](std::uint32_t b, unsigned q, unsigned t) {
    const std::uint64_t inflight = static_cast<std::uint64_t>(b) * q * t;
    return inflight <= p.max_inflight_bytes && inflight <= region_bytes / 2;
  };
  std::vector<PlannedPoint> out;
  // `rwmix_read_pct` >= 0: a mixed point at random offsets (JobSpec::rwmix_read_pct).
  auto add = [&](std::vector<std::size_t> targets, IoDirection d, unsigned t, unsigned q, std::uint32_t b,
                 int rwmix_read_pct = -1) {
    if (!fits(b, q, t)) return;
    PlannedPoint pp;
    pp.targets = std::move(targets);
    pp.job.direction = d;
    pp.job.pattern = p.pattern;
    pp.job.block_bytes = b;
    pp.job.queue_depth = q;
    pp.job.threads = t;
    pp.job.buffer_pages = o.buffer_pages;
    if (rwmix_read_pct >= 0) {
      pp.job.rwmix_read_pct = rwmix_read_pct;
      pp.job.pattern = Pattern::random;
    }
    out.push_back(std::move(pp));
  };
  for (std::size_t i = 0; i < n_targets; ++i) {
    for (IoDirection d : p.directions) {
      for (unsigned t : p.threads) {
        for (unsigned q : depths) {
          for (std::uint32_t b : p.block_bytes) add({i}, d, t, q, b);
        }
      }
    }
    // Mixed reads and writes at KV block sizes, random offsets whatever the sweep's pattern: the
    // KV tier's loads and stores land wherever their blocks are.
    for (int pct : p.rwmix_read_pcts) {
      for (unsigned t : p.threads) {
        for (unsigned q : depths) {
          for (std::uint32_t b : p.mixed_block_bytes) add({i}, IoDirection::read, t, q, b, pct);
        }
      }
    }
  }
  if (n_targets > 1) {
    // All drives at once (RAID-0 striping): the smallest, a middle and the largest block at the
    // lowest and highest depth show whether the host (PCIe root, CPU) or the drives limit.
    std::vector<std::size_t> all(n_targets);
    for (std::size_t i = 0; i < n_targets; ++i) all[i] = i;
    const auto& bs = p.block_bytes;
    std::vector<std::uint32_t> blocks{bs.front(), bs[bs.size() / 2], bs.back()};
    std::vector<unsigned> qs{depths.front(), depths.back()};
    for (IoDirection d : p.directions) {
      for (unsigned q : qs) {
        for (std::uint32_t b : blocks) add(all, d, 1, q, b);
      }
    }
  }
  return out;
}

namespace {

// The stored rows of a point: one, or for a mixed point its reads and its writes, each with that
// direction's bandwidth, IOPS, bytes and latency over the same interval.
// A measurement's throughput and latency fields, from the whole point or one direction of it.
template <class Measured>
void set_measured(store::CalibrationPoint& p, const Measured& m) {
  p.bytes = static_cast<std::int64_t>(m.bytes);
  p.ios = static_cast<std::int64_t>(m.ios);
  p.bandwidth_gbps = m.bandwidth_gbps;
  p.iops = m.iops;
  p.lat_mean_us = m.lat_mean_us;
  p.lat_p50_us = m.lat_p50_us;
  p.lat_p90_us = m.lat_p90_us;
  p.lat_p99_us = m.lat_p99_us;
  p.lat_p999_us = m.lat_p999_us;
  p.lat_max_us = m.lat_max_us;
}

std::vector<store::CalibrationPoint> to_points(const PointResult& r, const JobSpec& job, EngineKind engine,
                                               const std::vector<const OpenTarget*>& targets) {
  store::CalibrationPoint p;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    p.target += (i ? "," : "") + targets[i]->name;
    if (i == 0) {
      p.filesystem = targets[i]->where.filesystem;
      p.device = targets[i]->where.device;
    } else if (p.device.find(targets[i]->where.device) == std::string::npos) {
      p.device += "," + targets[i]->where.device;
    }
  }
  p.target_count = static_cast<int>(targets.size());
  p.rw = rw_name(job);
  p.engine = engine_name(engine);
  p.block_bytes = job.block_bytes;
  p.queue_depth = static_cast<int>(r.effective_queue_depth);
  p.threads = static_cast<int>(job.threads);
  p.duration_s = r.duration_s;
  set_measured(p, r);
  p.converged = r.converged;
  p.buffer_pages = buffer_pages_name(job.buffer_pages);
  p.buffer_huge_fraction = r.buffer_huge_fraction;
  if (!job.mixed()) return {p};
  std::vector<store::CalibrationPoint> rows;
  for (const bool read : {true, false}) {
    const DirectionResult& d = read ? r.read : r.write;
    store::CalibrationPoint row = p;
    row.rw = p.rw + (read ? "-read" : "-write");
    set_measured(row, d);
    rows.push_back(std::move(row));
  }
  return rows;
}

store::CalibrationRun make_run(const CalibrationOptions& o) {
  store::CalibrationRun run;
  run.started_at = store::utc_timestamp();
  run.host = host_name();
  run.kernel = kernel_release();
  run.mode = o.mode;
  run.engine = engine_name(o.engine);
  run.direct = o.file.direct;
  run.file_size_bytes = static_cast<std::int64_t>(o.file.region_bytes);
  run.targets = o.raw_device.empty() ? o.targets : std::vector<std::string>{o.raw_device};
  run.options_json = o.options_json.empty() ? "{}" : o.options_json;
  run.tool_version = o.tool_version;
  return run;
}

std::string point_label(const PlannedPoint& pp, const std::vector<OpenTarget>& targets) {
  std::ostringstream os;
  os << rw_name(pp.job) << " bs=" << size_text(pp.job.block_bytes) << " qd=" << pp.job.queue_depth
     << " threads=" << pp.job.threads;
  if (pp.targets.size() > 1) {
    os << " targets=all(" << pp.targets.size() << ")";
  } else if (targets.size() > 1) {
    os << " target=" << targets[pp.targets.front()].name;
  }
  return os.str();
}

}  // namespace

Progress::Progress(std::ostream& os, bool tty) : line_(os, tty, 0.0) {}

void Progress::begin(std::size_t total_points, double estimate_per_point_s) {
  total_ = total_points;
  done_ = 0;
  estimate_per_point_s_ = estimate_per_point_s;
  start_s_ = monotonic_s();
  if (!line_.tty())
    line_.message("calibrate: " + std::to_string(total_) + " points, about " +
                  clock_text(estimate_per_point_s * static_cast<double>(total_)) + " (m:ss)");
}

void Progress::point_done(const std::string& label, const PointResult& r) {
  ++done_;
  // Measured time per point once there are three, the plan's estimate before.
  const std::string eta = eta_text(done_, total_, monotonic_s() - start_s_, estimate_per_point_s_, 3);
  std::ostringstream point;
  point << std::fixed << std::setprecision(3) << label << ": " << r.bandwidth_gbps << " GB/s, "
        << std::setprecision(0) << r.iops << " IOPS, p50 " << std::setprecision(1) << r.lat_p50_us
        << " us, p99 " << r.lat_p99_us << " us" << (r.converged ? " (converged)" : "");
  std::ostringstream text;
  if (line_.tty()) {
    constexpr int kWidth = 30;
    const auto filled = static_cast<int>(kWidth * static_cast<double>(done_) /
                                         static_cast<double>(std::max<std::size_t>(total_, 1)));
    std::string shown = point.str();
    if (shown.size() > 70) shown.resize(70);
    text << "[" << std::string(static_cast<std::size_t>(filled), '#')
         << std::string(static_cast<std::size_t>(kWidth - filled), ' ') << "] " << done_ << "/"
         << total_ << " ETA " << eta << "  " << shown;
  } else {
    text << "[" << done_ << "/" << total_ << " ETA " << eta << "] " << point.str();
  }
  line_.update(text.str(), /*force=*/true);
}

void Progress::message(const std::string& line) { line_.message(line); }

void Progress::finish() {
  line_.finish("calibrate: " + std::to_string(done_) + " points in " +
               clock_text(monotonic_s() - start_s_));
}

CalibrationOutcome run_calibration(const CalibrationOptions& o, const std::atomic<bool>* stop, Progress& progress) {
  CalibrationOutcome outcome;
  // The profile's path is checked before the measurement (minutes), not only when it is written.
  if (!o.out_path.empty()) check_device_profile_output(o.out_path, o.out_options);
  std::optional<store::Database> db;
  if (!o.db_path.empty()) {
    db.emplace(o.db_path);
    create_calibration_tables(*db);
  }
  std::vector<OpenTarget> targets = open_targets(o, &progress);
  std::uint64_t region = UINT64_MAX;
  for (const auto& t : targets) region = std::min(region, t.file->region_bytes());
  const auto planned = plan_points(o, targets.size(), region);
  if (planned.empty()) throw Error("the sweep has no points (file too small for the block sizes?)");
  if (db) outcome.run_id = insert_run(*db, make_run(o));

  progress.begin(planned.size(), o.plan.limits.warmup_s + o.plan.limits.max_s * 0.8);
  std::uint64_t seed = o.file.seed;
  std::vector<std::int64_t> point_ids;
  // Mixed points for the interference fit, and the index of each one's read row in outcome.points
  // (its write row follows).
  std::vector<MixedFitPoint> mixed;
  std::vector<std::size_t> mixed_rows;
  for (const auto& pp : planned) {
    std::vector<PointTarget> pts;
    std::vector<const OpenTarget*> named;
    for (std::size_t i : pp.targets) {
      pts.push_back(point_target(*targets[i].file));
      named.push_back(&targets[i]);
    }
    const PointResult r = run_point(o.engine, pts, pp.job, o.plan.limits, stop, ++seed);
    if (pp.job.mixed() && pp.targets.size() == 1) {
      mixed.push_back({static_cast<double>(pp.job.block_bytes),
                       static_cast<double>(r.effective_queue_depth * pp.job.threads),
                       r.read.bandwidth_gbps, r.write.bandwidth_gbps, r.read.lat_mean_us});
      mixed_rows.push_back(outcome.points.size());
    }
    for (store::CalibrationPoint& cp : to_points(r, pp.job, o.engine, named)) {
      cp.run_id = outcome.run_id;
      cp.fit_role = "none";
      if (db) cp.id = insert_point(*db, cp);
      outcome.points.push_back(cp);
    }
    progress.point_done(point_label(pp, targets), r);
  }
  progress.finish();

  // Fit each direction on the single-target points (the model is per drive); the together points
  // stay out of the fit and show the scaling.
  DeviceProfile& profile = outcome.profile;
  auto fit_direction_points = [&](bool read, SsdDirectionModel& model, double& fit_err, double& held_err) {
    std::vector<FitPoint> fp;
    std::vector<store::CalibrationPoint*> owners;
    for (auto& p : outcome.points) {
      if (p.target_count != 1 || p.is_mixed() || p.is_read() != read) continue;
      fp.push_back({static_cast<double>(p.block_bytes), static_cast<double>(p.queue_depth * p.threads), p.bandwidth_gbps});
      owners.push_back(&p);
    }
    if (fp.empty()) return 0;
    const FitReport rep = fit_with_holdout(fp, o.heldout_every);
    model = rep.model;
    fit_err = rep.fit_error_pct;
    held_err = rep.heldout_error_pct;
    for (std::size_t i = 0; i < owners.size(); ++i) {
      const bool held = o.heldout_every > 1 && (i + 1) % static_cast<std::size_t>(o.heldout_every) == 0;
      owners[i]->fit_role = held ? "heldout" : "fit";
      owners[i]->model_bandwidth_gbps = model.bandwidth_gbps(fp[i].block_bytes, fp[i].queue_depth);
      if (db) update_point_fit(*db, owners[i]->id, owners[i]->fit_role, owners[i]->model_bandwidth_gbps);
    }
    profile.fit.points += rep.fit_points;
    profile.fit.heldout_points += rep.heldout_points;
    return rep.fit_points + rep.heldout_points;
  };
  fit_direction_points(true, profile.model.read, profile.fit.read_fit_error_pct, profile.fit.read_heldout_error_pct);
  fit_direction_points(false, profile.model.write, profile.fit.write_fit_error_pct,
                       profile.fit.write_heldout_error_pct);
  // The interference of reads and writes, on the pure models just fitted (calibrate/fit.hpp).
  // Every mixed point is fitted (one coefficient; its error is reported over all of them).
  if (!mixed.empty() && profile.model.read.peak_gbps > 0 && profile.model.write.peak_gbps > 0) {
    const MixedFitReport rep = fit_mix_interference(profile.model, mixed);
    profile.model.mix_interference = rep.interference;
    profile.fit.mixed_points = rep.points;
    profile.fit.mixed_fit_error_pct = rep.fit_error_pct;
    profile.fit.mixed_read_latency_error_pct = rep.read_latency_error_pct;
    for (std::size_t i = 0; i < mixed.size(); ++i) {
      const MixedFitPoint& m = mixed[i];
      const double total = m.read_gbps + m.write_gbps;
      if (!(total > 0)) continue;
      const double f = m.read_gbps / total;
      const double model_gbps = profile.model.mixed_bandwidth_gbps(m.block_bytes, m.queue_depth, f);
      for (std::size_t k = 0; k < 2; ++k) {
        store::CalibrationPoint& row = outcome.points[mixed_rows[i] + k];
        row.fit_role = "fit";
        row.model_bandwidth_gbps = model_gbps * (k == 0 ? f : 1.0 - f);
        if (db) update_point_fit(*db, row.id, row.fit_role, row.model_bandwidth_gbps);
      }
    }
  }

  const TargetDescription& first = targets.front().where;
  profile.model.name = o.name.empty() ? "calibrated " + first.device : o.name;
  profile.measured.date = store::utc_timestamp();
  profile.measured.host = host_name();
  profile.measured.kernel = kernel_release();
  profile.measured.filesystem = first.filesystem;
  for (const auto& t : targets) {
    profile.measured.targets.push_back(t.name);
    if (profile.measured.device.find(t.where.device) == std::string::npos) {
      profile.measured.device += (profile.measured.device.empty() ? "" : ",") + t.where.device;
    }
  }
  profile.measured.engine = engine_name(o.engine);
  profile.measured.tool_version = o.tool_version;

  PlausibilityLimits limits;
  if (o.interface_gbps > 0) {
    limits.interface_gbps = o.interface_gbps;
    limits.interface_source = "--interface-gbps";
  } else {
    // The widest link among the targets, and only when every target reports one: a bound that
    // might be too low would warn about a healthy drive.
    for (const auto& t : targets) {
      const InterfaceLink link = drive_interface(t.file->path());
      if (link.gbps <= 0) {
        limits.interface_gbps = 0;
        break;
      }
      if (link.gbps > limits.interface_gbps) {
        limits.interface_gbps = link.gbps;
        limits.interface_source = link.description;
      }
    }
  }
  profile.warnings = cache_warnings(outcome.points, profile.fit, limits);
  profile.catalog_drive = o.catalog_drive;
  if (!o.out_path.empty()) write_device_profile(o.out_path, profile, o.out_options);
  if (db) set_run_profile(*db, outcome.run_id, o.out_path, store::utc_timestamp());
  return outcome;
}

std::vector<store::CalibrationPoint> run_single_point(const CalibrationOptions& o, const JobSpec& job,
                                                     const RunLimits& limits, const std::atomic<bool>* stop) {
  std::optional<store::Database> db;
  if (!o.db_path.empty()) {
    db.emplace(o.db_path);
    create_calibration_tables(*db);
  }
  std::vector<OpenTarget> targets = open_targets(o, nullptr);
  std::vector<PointTarget> pts;
  std::vector<const OpenTarget*> named;
  for (const auto& t : targets) {
    pts.push_back(point_target(*t.file));
    named.push_back(&t);
  }
  const PointResult r = run_point(o.engine, pts, job, limits, stop, o.file.seed);
  std::vector<store::CalibrationPoint> rows = to_points(r, job, o.engine, named);
  if (db) {
    const std::int64_t run_id = insert_run(*db, make_run(o));
    for (store::CalibrationPoint& cp : rows) {
      cp.run_id = run_id;
      cp.id = insert_point(*db, cp);
    }
    set_run_profile(*db, run_id, "", store::utc_timestamp());
  }
  return rows;
}

}  // namespace tiersim::calibrate
