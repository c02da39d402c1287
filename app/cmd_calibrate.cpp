// `tiersim calibrate`: measure real drives with io_uring, fit the device model, store the points
// and write a device profile a scenario can use (`hardware.nvme: {profile: device.yaml}`).
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "calibrate/campaign.hpp"
#include "calibrate/interrupt.hpp"
#include "calibrate/io_engine.hpp"
#include "common/format.hpp"
#include "model/errors.hpp"
#include "reports/study_json.hpp"

namespace tiersim::app {

namespace po = boost::program_options;
namespace cal = tiersim::calibrate;

namespace {

constexpr const char* kExamples =
    "examples:\n"
    "  tiersim calibrate --target /mnt/nvme0 --quick --db tiersim-results.db --out device.yaml\n"
    "  tiersim calibrate --target /mnt/nvme0 --target /mnt/nvme1 --full --db tiersim-results.db --out raid.yaml\n"
    "  tiersim calibrate --target /mnt/nvme0 --point --rw randread --bs 4KiB --qd 64 --seconds 10 --json\n"
    "  tiersim calibrate --target /mnt/nvme0 --quick --rwmix-read 70 --db tiersim-results.db --out device.yaml\n"
    "  tiersim calibrate --target /mnt/nvme0 --point --rw randrw70 --bs 256KiB --qd 16 --seconds 5\n"
    "  tiersim calibrate --raw-device /dev/nvme1n1 --i-understand-this-destroys /dev/nvme1n1 --quick --out d.yaml\n"
    "then in a scenario:  hardware: {nvme: {profile: device.yaml, count: 4}}\n";

}  // namespace

int cmd_calibrate(const std::vector<std::string>& args) {
  po::options_description desc(
      "usage: tiersim calibrate --target DIR_OR_FILE [--target ...] [--quick|--full]\n"
      "                         [--db tiersim-results.db] [--out device.yaml]\n\n"
      "Measures drives with O_DIRECT io_uring I/O in files it creates itself\n"
      "(.tiersim-calib-<pid>-<n>.dat, removed at exit and on Ctrl-C), fits the SSD device model\n"
      "and writes a device profile.\n\noptions");
  std::vector<std::string> targets;
  std::string raw_device, raw_confirm, engine, buffer_pages, db, out, name, rw, bs, file_size, pattern, min_free;
  std::string catalog_drive;
  std::vector<int> rwmix_read;
  std::string mixed_bs;
  unsigned qd = 32, threads = 1;
  double seconds = 10, warmup_s = 0.5, interface_gbps = 0;
  int heldout_every = 5;
  std::uint64_t seed = 1;
  desc.add_options()("help,h", "show this help")(
      "target", po::value(&targets)->composing(),
      "directory (a calibration file is created in it) or file path to measure; repeat for several drives, "
      "which are measured alone and together (RAID-0)")(
      "raw-device", po::value(&raw_device)->default_value(""),
      "measure a raw block device instead (DESTROYS ITS DATA); needs --i-understand-this-destroys")(
      "i-understand-this-destroys", po::value(&raw_confirm)->default_value(""),
      "repeat the --raw-device path here to confirm")(
      "quick", po::bool_switch(), "short sweep, about a minute (the default)")(
      "full", po::bool_switch(), "full sweep: 4KiB..16MiB x queue depth 1..256 x threads 1,4 (long)")(
      "point", po::bool_switch(), "measure one point (--rw --bs --qd --threads --seconds) instead of a sweep")(
      "rw", po::value(&rw)->default_value("read"),
      "--point direction: read, write, randread, randwrite, or randrw<read percent> (randrw70: each "
      "request a read with probability 70%, else a write, in one queue, as fio's randrw --rwmixread 70; "
      "prints each direction)")(
      "rwmix-read", po::value(&rwmix_read)->composing(),
      "sweeps: also measure mixed reads and writes with this read percentage (0..100; repeat for "
      "several): random offsets at the KV cache's block sizes (--mixed-bs) and the sweep's queue "
      "depths, each direction's bandwidth and latency stored (rw randrw70-read, randrw70-write), and "
      "the device model's read/write interference fitted on them (the profile's mixed: line)")(
      "mixed-bs", po::value(&mixed_bs)->default_value("16KiB,64KiB,256KiB,1MiB,2MiB"),
      "block sizes of the --rwmix-read sweep, comma-separated")(
      "bs", po::value(&bs)->default_value("1MiB"), "--point block size (4KiB, 1MiB, ...)")(
      "qd", po::value(&qd)->default_value(32), "--point queue depth per thread")(
      "threads", po::value(&threads)->default_value(1), "--point threads (one io_uring each) per target")(
      "seconds", po::value(&seconds)->default_value(10), "--point measured seconds (after the warm-up)")(
      "warmup", po::value(&warmup_s)->default_value(0.5), "--point warm-up seconds, not counted")(
      "json", po::bool_switch(), "--point: print the result as JSON on stdout")(
      "engine", po::value(&engine)->default_value("io_uring"),
      "io_uring, or sync (pread/pwrite, one request per thread: what blocking code gets)")(
      "buffer-pages", po::value(&buffer_pages)->default_value("auto"),
      "pages under the I/O buffers: auto (huge pages for buffers of 2 MiB and more), 4k or huge; compare "
      "with another tool (fio --iomem) only on the same kind")(
      "buffered", po::bool_switch(), "do not use O_DIRECT (for tmpfs and the like; measures the page cache)")(
      "file-size", po::value(&file_size)->default_value(""),
      "bytes of the measured region per target (default 2GiB quick, 8GiB full, 4GiB point)")(
      "pattern", po::value(&pattern)->default_value("rand"), "sweep access pattern: rand or seq")(
      "min-free", po::value(&min_free)->default_value("1GiB"),
      "free space that must remain after the files (0: no reserve)")(
      "keep", po::bool_switch(), "keep a file this run created (to rerun on it, or to run fio on it)")(
      "db", po::value(&db)->default_value(""), "SQLite results store for every raw point (tables calibration_*)")(
      "out", po::value(&out)->default_value(""),
      "write the fitted device profile (YAML) here (checked before measuring)")(
      "force", po::bool_switch(), "replace --out even if tiersim did not write it")(
      "name", po::value(&name)->default_value(""), "profile name (default: from the device)")(
      "catalog-drive", po::value(&catalog_drive)->default_value(""),
      "catalog drive the measured drive is (tiersim catalog drives); written as the profile's "
      "catalog_drive, so scenarios using the profile get its capacity, power and price")(
      "interface-gbps", po::value(&interface_gbps)->default_value(0),
      "per-drive interface bound in GB/s for the cache check (default: the PCIe link sysfs reports, if any)")(
      "heldout-every", po::value(&heldout_every)->default_value(5),
      "hold every k-th point out of the fit to measure its prediction error (0: none)")(
      "seed", po::value(&seed)->default_value(1), "random offsets and fill data");

  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).run(), vm);
  if (vm.count("help")) {
    std::cout << desc << "\n" << kExamples;
    return kExitOk;
  }
  po::notify(vm);

  cal::CalibrationOptions o;
  o.targets = targets;
  o.raw_device = raw_device;
  o.raw_confirmation = raw_confirm;
  if (!raw_confirm.empty() && raw_device.empty()) {
    throw Error("--i-understand-this-destroys given without --raw-device");
  }
  if (!raw_device.empty() && !targets.empty()) throw Error("give either --target or --raw-device, not both");
  o.engine = cal::parse_engine(engine);
  o.buffer_pages = cal::parse_buffer_pages(buffer_pages);
  const bool full = vm["full"].as<bool>(), point = vm["point"].as<bool>();
  if (full && vm["quick"].as<bool>()) throw Error("--quick and --full exclude each other");
  o.mode = point ? "point" : full ? "full" : "quick";
  o.plan = full ? cal::full_plan() : cal::quick_plan();
  for (const int pct : rwmix_read) {
    if (pct < 0 || pct > 100) throw Error("--rwmix-read must be a read percentage in 0..100, got " + std::to_string(pct));
    o.plan.rwmix_read_pcts.push_back(pct);
  }
  o.plan.mixed_block_bytes.clear();
  for (std::size_t start = 0; start <= mixed_bs.size();) {
    const std::size_t comma = std::min(mixed_bs.find(',', start), mixed_bs.size());
    const std::uint64_t b = cal::parse_size_bytes(mixed_bs.substr(start, comma - start));
    if (b > (1u << 30)) throw Error("--mixed-bs sizes must be at most 1GiB");
    o.plan.mixed_block_bytes.push_back(static_cast<std::uint32_t>(b));
    start = comma + 1;
  }
  if (pattern == "seq" || pattern == "sequential") {
    o.plan.pattern = cal::Pattern::sequential;
  } else if (pattern != "rand" && pattern != "random") {
    throw Error("--pattern must be rand or seq, got '" + pattern + "'");
  }
  o.file.region_bytes = !file_size.empty() ? cal::parse_size_bytes(file_size)
                        : point           ? (4ull << 30)
                        : full            ? (8ull << 30)
                                          : (2ull << 30);
  o.file.direct = !vm["buffered"].as<bool>();
  o.file.keep = vm["keep"].as<bool>();
  o.file.seed = seed;
  o.file.limits.reserve_free_bytes = cal::parse_size_bytes(min_free, /*allow_zero=*/true);
  o.db_path = db;
  o.out_path = out;
  o.out_options.force = vm["force"].as<bool>();
  o.name = name;
  o.catalog_drive = catalog_drive;
  if (heldout_every < 0) throw Error("--heldout-every must be >= 0");
  o.heldout_every = heldout_every;
  if (!(interface_gbps >= 0 && std::isfinite(interface_gbps)))
    throw Error("--interface-gbps must be a finite rate >= 0 (0: the link sysfs reports)");
  o.interface_gbps = interface_gbps;
  o.tool_version = TIERSIM_VERSION;
  nlohmann::json opts;
  for (const auto& [key, value] : vm) {
    const auto& v = value.value();
    if (v.type() == typeid(std::string)) opts[key] = value.as<std::string>();
    else if (v.type() == typeid(bool)) opts[key] = value.as<bool>();
    else if (v.type() == typeid(unsigned)) opts[key] = value.as<unsigned>();
    else if (v.type() == typeid(int)) opts[key] = value.as<int>();
    else if (v.type() == typeid(double)) opts[key] = value.as<double>();
    else if (v.type() == typeid(std::uint64_t)) opts[key] = value.as<std::uint64_t>();
    else if (v.type() == typeid(std::vector<std::string>)) opts[key] = value.as<std::vector<std::string>>();
    else if (v.type() == typeid(std::vector<int>)) opts[key] = value.as<std::vector<int>>();
  }
  o.options_json = opts.dump();

  if (o.engine == cal::EngineKind::io_uring) {
    const std::string why = cal::io_uring_unavailable_reason();
    if (!why.empty()) throw cal::EngineUnavailable(why, 0);
  }
  if (!o.file.direct) {
    std::cerr << "tiersim calibrate: warning: --buffered goes through the page cache; the numbers describe "
                 "memory, not the drive\n";
  }

  cal::InterruptGuard guard;
  try {
    if (point) {
      cal::JobSpec job = cal::parse_rw(rw);
      const std::uint64_t b = cal::parse_size_bytes(bs);
      if (b > (1u << 30)) throw Error("--bs must be at most 1GiB");
      job.block_bytes = static_cast<std::uint32_t>(b);
      if (qd == 0 || qd > 4096) throw Error("--qd must be in 1..4096");
      if (threads == 0 || threads > 256) throw Error("--threads must be in 1..256");
      job.queue_depth = qd;
      job.threads = threads;
      job.buffer_pages = o.buffer_pages;
      // A measured span that never ends (nan, inf) or never starts (<= 0) is not a measurement:
      // nan and inf kept the point running until killed, a negative span printed a rate.
      if (!(std::isfinite(seconds) && seconds > 0 && seconds <= 86400))
        throw Error("--seconds must be a number of seconds in (0, 86400], got " +
                    format::exact(seconds));
      if (!(std::isfinite(warmup_s) && warmup_s >= 0 && warmup_s <= 3600))
        throw Error("--warmup must be a number of seconds in [0, 3600], got " +
                    format::exact(warmup_s));
      cal::RunLimits limits;
      limits.warmup_s = warmup_s;
      limits.max_s = seconds;
      limits.stop_on_convergence = false;
      limits.window_s = 0.1;
      const std::vector<store::CalibrationPoint> rows = cal::run_single_point(o, job, limits, guard.flag());
      if (vm["json"].as<bool>()) {
        // One object as before; a mixed point is an array of its reads and its writes.
        if (rows.size() == 1) {
          std::cout << reports::calibration_point_json(rows.front()).dump(2) << "\n";
        } else {
          nlohmann::json all = nlohmann::json::array();
          for (const auto& p : rows) all.push_back(reports::calibration_point_json(p));
          std::cout << all.dump(2) << "\n";
        }
        return kExitOk;
      }
      for (const store::CalibrationPoint& p : rows) {
        std::cout << std::fixed << std::setprecision(3) << p.rw << " bs=" << cal::size_text(static_cast<std::uint64_t>(p.block_bytes))
                  << " qd=" << p.queue_depth << " threads=" << p.threads << " engine=" << p.engine << ": "
                  << p.bandwidth_gbps << " GB/s, " << std::setprecision(0) << p.iops << " IOPS, latency us: mean "
                  << std::setprecision(1) << p.lat_mean_us << " p50 " << p.lat_p50_us << " p90 " << p.lat_p90_us
                  << " p99 " << p.lat_p99_us << " p99.9 " << p.lat_p999_us << "\n";
      }
      return kExitOk;
    }
    cal::Progress progress(std::cerr, ::isatty(STDERR_FILENO) != 0);
    const cal::CalibrationOutcome r = cal::run_calibration(o, guard.flag(), progress);
    const auto& m = r.profile.model;
    const auto& f = r.profile.fit;
    std::cout << std::setprecision(4) << "device model (" << f.points << " points fitted, " << f.heldout_points
              << " held out):\n"
              << "  read:  peak " << m.read.peak_gbps << " GB/s, io_overhead " << m.read.io_overhead_us
              << " us, latency " << m.read.latency_us << " us, stream " << m.read.stream_gbps << " GB/s; error "
              << f.read_fit_error_pct << "% fitted, " << f.read_heldout_error_pct << "% held out\n"
              << "  write: peak " << m.write.peak_gbps << " GB/s, io_overhead " << m.write.io_overhead_us
              << " us, latency " << m.write.latency_us << " us, stream " << m.write.stream_gbps << " GB/s; error "
              << f.write_fit_error_pct << "% fitted, " << f.write_heldout_error_pct << "% held out\n";
    if (f.mixed_points > 0) {
      std::cout << "  mixed: interference " << m.mix_interference << " (" << f.mixed_points
                << " points); error " << f.mixed_fit_error_pct << "% bandwidth, "
                << f.mixed_read_latency_error_pct << "% read latency\n";
    }
    for (const auto& w : r.profile.warnings) {
      std::cerr << "tiersim calibrate: warning: " << w << "\n";
    }
    if (!r.profile.warnings.empty()) {
      std::cerr << "tiersim calibrate: these measurements may describe a cache rather than the drive"
                << (out.empty() ? "" : "; the warnings are recorded under `warnings:` in " + out) << "\n";
    }
    if (!out.empty()) std::cout << "profile written to " << out << "\n";
    if (!db.empty()) std::cout << "points stored in " << db << " (run " << r.run_id << ")\n";
    return kExitOk;
  } catch (const cal::Interrupted&) {
    std::cerr << "tiersim calibrate: interrupted; calibration files removed\n";
    return cal::InterruptGuard::exit_code();
  }
}

}  // namespace tiersim::app
