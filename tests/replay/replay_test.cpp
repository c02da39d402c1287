// Replay: the scheduler on a small scaled scenario (real io_uring O_DIRECT I/O in a temp dir) and
// the safety rules of its files.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "replay/ckpt_writer.hpp"
#include "calibrate/io_engine.hpp"
#include "replay/replay.hpp"
#include "calibrate/target.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "tests/temp_dir.hpp"

namespace replay_replay_test {

namespace replay = tiersim::replay;

namespace fs = std::filesystem;
namespace cal = tiersim::calibrate;

namespace {

// A fresh temporary directory; TIERSIM_REPLAY_TEST_DIR picks a disk-backed parent where the
// system's temp dir is tmpfs (no O_DIRECT: the real-I/O tests then WARN and skip).
using tiersim::test::TempDir;
constexpr const char* kParentEnv = "TIERSIM_REPLAY_TEST_DIR";

tiersim::Scenario small_scenario() {
  tiersim::config::LoadOptions lo;
  lo.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  return tiersim::config::load_scenario(
      std::string(TIERSIM_SOURCE_DIR) + "/scenarios/inference/opt30b-l40s-gen5.yaml", lo);
}

// Why the real-I/O tests cannot run here, or "" when they can.
std::string io_unavailable(const std::string& dir) {
  std::string why = cal::io_uring_unavailable_reason();
  if (!why.empty()) return why;
  const std::string probe = dir + "/.odirect-probe";
  const int fd = ::open(probe.c_str(), O_CREAT | O_RDWR | O_DIRECT, 0600);
  if (fd < 0) return "O_DIRECT is not supported in " + dir;
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

// True (after a WARN naming why) when the real-I/O tests cannot run in `dir`.
bool skip_real_io(const TempDir& dir) {
  const std::string why = io_unavailable(dir.str());
  if (!why.empty()) WARN("skipping the real-I/O test: " << why);
  return !why.empty();
}

replay::ReplayPlan small_plan(double bytes_per_pass) {
  replay::PlanOptions po;
  po.passes = 2;
  po.block_bytes = 256u << 10;
  po.queue_depth = 4;
  po.threads = 2;
  const replay::ReplayPlan full = replay::build_replay_plan(small_scenario(), po);
  po.scale = bytes_per_pass / (full.io_bytes() / full.passes);
  return replay::build_replay_plan(small_scenario(), po);
}

}  // namespace

TEST_CASE("replay plan keeps layer count and the ratio of I/O to compute when scaled", "[replay]") {
  replay::PlanOptions po;
  po.passes = 2;
  const replay::ReplayPlan full = replay::build_replay_plan(small_scenario(), po);
  po.scale = 0.001;
  const replay::ReplayPlan small = replay::build_replay_plan(small_scenario(), po);
  REQUIRE(small.modules == full.modules);
  REQUIRE(small.steps.size() == full.steps.size());
  CHECK(small.io_bytes() == Approx(full.io_bytes() * 0.001).epsilon(0.02));
  CHECK(small.compute_s() == Approx(full.compute_s() * 0.001).epsilon(1e-9));
  CHECK(small.compute_s() > 0);
  for (const auto& st : small.steps) CHECK(st.nvme_bytes % 4096 == 0);
}

TEST_CASE("replay plan: passes that overflow memory are named in the refusal", "[replay]") {
  replay::PlanOptions po;
  po.passes = 100000000;  // the host KV cache of 1e8 tokens does not fit; the scenario itself does
  try {
    (void)replay::build_replay_plan(small_scenario(), po);
    FAIL("expected a refusal");
  } catch (const tiersim::ModelError& e) {
    CHECK_THAT(e.what(),
               Catch::Contains("does not fit with --passes 100000000 (its gen_tokens 32)"));
  }
  po.passes = 2;
  CHECK_NOTHROW(replay::build_replay_plan(small_scenario(), po));
}

TEST_CASE("replay scheduler runs a small scaled scenario and matches its own timeline",
          "[replay]") {
  TempDir dir(kParentEnv);
  if (skip_real_io(dir)) return;
  for (const auto path : {tiersim::IoPath::kAio, tiersim::IoPath::kGds}) {
    replay::ReplayPlan plan = small_plan(8.0 * 1048576);
    plan.io_path = path;
    replay::ReplayOptions ro;
    ro.target_dir = dir.str();
    ro.reserve_free_bytes = 0;
    const replay::ReplayMeasurement m = replay::run_replay(plan, ro);
    CHECK(m.read_bytes == Approx(plan.io_bytes()));
    CHECK(m.times.total_s >= plan.compute_s() * 0.99);  // compute holds are never cut short
    CHECK(m.times.prefill_s > 0);
    CHECK(m.times.prefill_s < m.times.total_s);
    int computes = 0, reads = 0, bounces = 0;
    for (const auto& s : m.timeline) {
      computes += s.label == "compute";
      reads += s.label == "weights-nvme";
      bounces += s.label == "weights-bounce";
    }
    CHECK(computes == static_cast<int>(plan.steps.size()));
    CHECK(reads > 0);
    CHECK((bounces > 0) == (path == tiersim::IoPath::kAio));
    // The prediction of the same plan has the same structure.
    tiersim::SsdModel drive;
    drive.read.peak_gbps = 1.0;
    drive.write.peak_gbps = 1.0;
    const replay::ReplayPrediction p = replay::predict_replay(plan, drive, replay::HostRates{});
    CHECK(p.times.total_s >= plan.compute_s());
    CHECK(dir.regular_files() == 0);  // replay file removed afterwards
  }
}

TEST_CASE("one replay file serves repeated replays, one reader or several", "[replay]") {
  TempDir dir(kParentEnv);
  if (skip_real_io(dir)) return;
  replay::ReplayOptions ro;
  ro.target_dir = dir.str();
  ro.reserve_free_bytes = 0;
  replay::ReplayPlan plan = small_plan(4.0 * 1048576);
  {
    const cal::CalibrationFile file = replay::create_replay_file(plan, ro);
    for (const unsigned threads : {1u, 3u}) {
      plan.threads = threads;  // the fetch thread alone, or with two reader threads
      const replay::ReplayMeasurement m = replay::run_replay(plan, file, ro);
      CHECK(m.read_bytes == Approx(plan.io_bytes()));
      CHECK(m.file == file.path());
      CHECK(dir.regular_files() == 1);  // the same file, not a new one per replay
    }
    // A plan that needs more than the file holds is refused, not read past the region.
    const replay::ReplayPlan bigger = small_plan(16.0 * 1048576);
    REQUIRE(bigger.file_bytes > file.region_bytes());
    CHECK_THROWS_AS(replay::run_replay(bigger, file, ro), tiersim::ModelError);
  }
  CHECK(dir.regular_files() == 0);
}

TEST_CASE("checkpoint writers replay and clean up", "[replay]") {
  TempDir dir(kParentEnv);
  if (skip_real_io(dir)) return;
  for (const auto w : {tiersim::CheckpointWorkload::Writer::kTorchSave,
                       tiersim::CheckpointWorkload::Writer::kFastPersist}) {
    replay::CheckpointReplayOptions o;
    o.target_dir = dir.str();
    o.size_bytes = 8u << 20;
    o.io_buffer_bytes = 2u << 20;
    o.tensor_bytes = 2u << 20;
    o.writer = w;
    o.reserve_free_bytes = 0;
    const replay::CheckpointMeasurement m = replay::run_checkpoint_replay(o);
    CHECK(m.total_s > 0);
    CHECK(m.bytes == Approx(8u << 20));
    CHECK(dir.regular_files() == 0);
  }
}

TEST_CASE("replay files are tiersim-owned; foreign files are refused", "[replay]") {
  TempDir dir(kParentEnv);
  if (skip_real_io(dir)) return;
  // A foreign file with the name the replay would use is refused, not overwritten.
  const std::string foreign =
      dir.file(std::string(cal::kFilePrefix) + std::to_string(::getpid()) + "-900.dat");
  {
    std::ofstream f(foreign);
    f << "somebody's data\n";
  }
  replay::ReplayPlan plan = small_plan(2.0 * 1048576);
  replay::ReplayOptions ro;
  ro.target_dir = dir.str();
  ro.reserve_free_bytes = 0;
  CHECK_THROWS_AS(replay::run_replay(plan, ro), cal::SafetyError);
  {
    std::ifstream f(foreign);
    std::string line;
    std::getline(f, line);
    CHECK(line == "somebody's data");
  }
  CHECK_FALSE(cal::is_own_file(foreign));
  fs::remove(foreign);

  // While it runs the file carries the ownership header; kept on request, removed otherwise.
  ro.keep_files = true;
  const replay::ReplayMeasurement m = replay::run_replay(plan, ro);
  REQUIRE(fs::exists(m.file));
  CHECK(cal::is_own_file(m.file));
  fs::remove(m.file);
  ro.keep_files = false;
  const replay::ReplayMeasurement m2 = replay::run_replay(plan, ro);
  CHECK_FALSE(fs::exists(m2.file));

  // Not enough free space: refused before anything is written.
  ro.reserve_free_bytes = ~0ull / 2;
  CHECK_THROWS_AS(replay::run_replay(plan, ro), cal::SafetyError);
  CHECK(dir.regular_files() == 0);
}
}  // namespace replay_replay_test
