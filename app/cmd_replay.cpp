// `tiersim replay`: run a scenario's simulated offload schedule on a real drive (compute replaced
// by timed holds, I/O real) and print measured against predicted time; `--suite` runs the fixed
// hardware validation suite (replay/replay_suite.hpp).
#include <boost/program_options.hpp>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/command.hpp"
#include "calibrate/campaign.hpp"
#include "calibrate/interrupt.hpp"
#include "calibrate/io_engine.hpp"
#include "calibrate/runner.hpp"
#include "common/format.hpp"
#include "config/device_profile.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "model/files.hpp"
#include "replay/replay.hpp"
#include "replay/replay_suite.hpp"
#include "reports/run_output.hpp"
#include "store/replay_store.hpp"
#include "store/sqlite.hpp"

namespace tiersim::app {

namespace po = boost::program_options;
namespace cal = tiersim::calibrate;

namespace {

constexpr const char* kDefaultSuiteScenario = "scenarios/inference/opt30b-l40s-gen5.yaml";

void store_replay(const std::string& db_path, const std::string& scenario, const std::string& target, double scale,
                  const replay::PhaseTimes& pred, const replay::PhaseTimes& meas, double read_gbps) {
  store::ReplayRunRow row;
  row.created_at = store::utc_timestamp();
  row.target = target;
  row.name = scenario;
  row.kind = "inference";
  row.detail = "scale " + std::to_string(scale);
  row.predicted_prefill_s = pred.prefill_s;
  row.measured_prefill_s = meas.prefill_s;
  row.predicted_decode_s = pred.decode_s;
  row.measured_decode_s = meas.decode_s;
  row.predicted_total_s = pred.total_s;
  row.measured_total_s = meas.total_s;
  row.error_pct = replay::error_pct(pred.total_s, meas.total_s);
  row.replay_read_gbps = read_gbps;
  store::append_replay_runs(db_path, {row});
}

}  // namespace

int cmd_replay(const std::vector<std::string>& args) {
  po::options_description desc(
      "usage: tiersim replay SCENARIO --target DIR [--scale F] [--profile device.yaml]\n"
      "                      [--db tiersim-results.db]\n"
      "       tiersim replay --suite --target DIR [--profile device.yaml]\n"
      "                      [--db tiersim-results.db]\n\n"
      "Lays the scenario's NVMe-resident weights out in a tiersim-owned file in DIR\n"
      "(removed afterwards), runs the simulated schedule for real (io_uring O_DIRECT\n"
      "reads, pinned buffers, bounce copies, compute as timed holds) and compares with\n"
      "the simulator's prediction for the drive's calibrated profile.\n\noptions");
  std::string scenario_path, target, profile, db, trace, data_dir;
  double scale = 0;
  int passes = 0;
  bool suite = false;
  desc.add_options()("help,h", "show this help")("scenario", po::value(&scenario_path), "inference scenario file")(
      "target", po::value(&target), "directory on the drive to replay on")(
      "scale", po::value(&scale)->default_value(0),
      "multiply every tensor's bytes and compute time by F (0: shrink to about 256 MiB per pass)")(
      "passes", po::value(&passes)->default_value(0), "forward passes to replay (0: the scenario's gen_tokens)")(
      "profile", po::value(&profile), "calibrated device profile of this drive (default: the scenario's)")(
      "db", po::value(&db), "store predicted and measured times in this SQLite file (table replay_runs)")(
      "trace", po::value(&trace), "write the measured timeline as a Chrome trace (same names as run --trace)")(
      "force", "replace the --trace file even if tiersim did not write it")(
      "data-dir", po::value(&data_dir), "folder holding catalog/ (default: installed scenarios)")(
      "suite", po::bool_switch(&suite), "run the fixed hardware validation suite (under ten minutes)");
  const po::variables_map vm =
      parse_command_line(args, desc, po::options_description(), "scenario", 1);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return kExitOk;
  }
  if (target.empty()) throw Error("--target DIR is required");
  // A negative value used to fall back silently to the default, and one pass has no decode phase
  // to compare (it printed -100 %).
  if (passes < 0 || passes == 1)
    throw Error("--passes " + std::to_string(passes) +
                ": expected 0 (the scenario's gen_tokens) or at least 2 (a prefill and a decode pass)");
  if (!(scale >= 0 && scale <= 1))
    throw Error("--scale " + format::exact(scale) +
                ": expected a factor in (0, 1] (or 0: shrink to about 256 MiB per pass)");
  OutputOptions output;
  output.force = vm.count("force") > 0;
  if (!trace.empty()) check_output_file(trace, "trace file", output);
  const std::string why = cal::io_uring_unavailable_reason();
  if (!why.empty()) throw cal::EngineUnavailable(why, 0);

  cal::InterruptGuard guard;
  try {
    if (suite) {
      replay::SuiteOptions so;
      so.target_dir = target;
      so.scenario_path = scenario_path.empty() ? kDefaultSuiteScenario : scenario_path;
      so.data_dir = data_dir;
      so.profile_path = profile;
      so.db_path = db;
      so.stop = guard.flag();
      const replay::SuiteReport r = replay::run_replay_suite(so, std::cout);
      return r.passed ? kExitOk : kExitFailure;
    }
    if (scenario_path.empty()) throw Error("a SCENARIO file is required (or --suite)");
    config::LoadOptions lo;
    lo.data_dir = data_dir;
    const Scenario s = config::load_scenario(scenario_path, lo);
    SsdModel drive = s.hardware.nvme.model;
    if (!profile.empty()) drive = load_device_profile(profile);
    else if (s.hardware.nvme.profile_path.empty())
      std::cerr << "tiersim replay: warning: the scenario's drive model is not a calibrated profile of this "
                   "drive; pass --profile device.yaml (tiersim calibrate --target DIR --quick --out device.yaml)\n";
    replay::PlanOptions po_;
    po_.passes = passes;
    po_.scale = 1;
    if (scale <= 0) {
      const replay::ReplayPlan full = replay::build_replay_plan(s, po_);
      scale = std::min(1.0, 256.0 * 1048576.0 / (full.io_bytes() / full.passes));
    }
    po_.scale = scale;
    const replay::ReplayPlan plan = replay::build_replay_plan(s, po_);
    const replay::HostRates host = replay::measure_host_rates();
    std::cout << "replaying " << s.name << " at scale " << scale << ": " << plan.passes << " passes x "
              << plan.modules << " modules, " << std::fixed << std::setprecision(0) << plan.io_bytes() / 1048576.0
              << " MiB read, " << cal::size_text(plan.block_bytes) << " x QD" << plan.queue_depth << " x "
              << plan.threads << " threads, prefetch " << plan.prefetch_layers << "\n";
    replay::ReplayOptions ro;
    ro.target_dir = target;
    ro.stop = guard.flag();
    const replay::ReplayMeasurement m = replay::run_replay(plan, ro);
    const replay::ReplayPrediction p = replay::predict_replay(plan, drive, host);
    std::cout << std::setprecision(4) << std::left << std::setw(10) << "phase" << std::right << std::setw(12)
              << "predicted_s" << std::setw(12) << "measured_s" << std::setw(9) << "error%\n";
    auto line = [](const char* name, double pred, double meas) {
      std::cout << std::left << std::setw(10) << name << std::right << std::setw(12) << pred << std::setw(12) << meas
                << std::setprecision(1) << std::setw(8) << replay::error_pct(pred, meas) << std::setprecision(4)
                << "\n";
    };
    line("prefill", p.times.prefill_s, m.times.prefill_s);
    line("decode", p.times.decode_s, m.times.decode_s);
    line("total", p.times.total_s, m.times.total_s);
    std::cout << std::setprecision(2) << "replay read bandwidth " << m.read_gbps() << " GB/s (model "
              << p.read_gbps << " GB/s); host buffers " << (m.pinned ? "pinned" : "NOT pinned (RLIMIT_MEMLOCK)")
              << "\n";
    if (!trace.empty()) {
      sim::RunResult rr;
      rr.workload = "inference";
      rr.timeline = m.timeline;
      std::ostringstream out;
      reports::write_chrome_trace(out, s, rr);
      write_output_file(trace, out.str(), "trace file", output);
    }
    if (!db.empty()) store_replay(db, s.name, target, scale, p.times, m.times, m.read_gbps());
    return kExitOk;
  } catch (const cal::Interrupted&) {
    std::cerr << "tiersim replay: interrupted; replay files removed\n";
    return cal::InterruptGuard::exit_code();
  }
}

}  // namespace tiersim::app
