#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "calibrate/interrupt.hpp"
#include "calibrate/campaign.hpp"
#include "calibrate/target.hpp"
#include "tests/temp_dir.hpp"

using namespace tiersim::calibrate;

namespace {

FileOptions small_file() {
  FileOptions fo;
  fo.region_bytes = 4 << 20;
  fo.limits.reserve_free_bytes = 0;
  fo.direct = true;
  return fo;
}

// O_DIRECT where the scratch file system has it; the safety rules do not depend on it.
CalibrationFile create(const tiersim::test::TempDir& dir, int index, FileOptions fo) {
  try {
    return CalibrationFile::create_in_dir(dir.str(), index, fo);
  } catch (const DirectIoUnsupported&) {
    fo.direct = false;
    return CalibrationFile::create_in_dir(dir.str(), index, fo);
  }
}

std::string own_name(int index) {
  return ".tiersim-calib-" + std::to_string(::getpid()) + "-" + std::to_string(index) + ".dat";
}

class QuietProgress : public Progress {
 public:
  QuietProgress() : Progress(sink_, false) {}

 private:
  std::ostringstream sink_;
};

}  // namespace

TEST_CASE("safety: created files carry the ownership header and are removed at exit", "[calibrate][safety]") {
  tiersim::test::TempDir dir;
  {
    auto f = create(dir, 0, small_file());
    CHECK(f.created());
    CHECK(is_own_file(f.path()));
    CHECK(f.region_offset_bytes() == kRegionOffsetBytes);
    CHECK(dir.calibration_files() == 1);
  }
  CHECK(dir.calibration_files() == 0);
}

TEST_CASE("safety: deferred removal keeps created files until its owner ends, and never reuses them",
          "[calibrate][safety]") {
  tiersim::test::TempDir dir;
  std::string first, second;
  {
    DeferredRemoval deferred;
    FileOptions fo = small_file();
    fo.deferred_removal = &deferred;
    {
      auto f = create(dir, 3, fo);
      first = f.path();
    }
    CHECK(std::filesystem::exists(first));  // closed, not removed
    CHECK(deferred.holds(first));
    {
      // Same index again: a fresh name, not the waiting file (a fresh-file probe must get fresh blocks).
      auto g = create(dir, 3, fo);
      second = g.path();
      CHECK(g.created());
    }
    CHECK(second != first);
    CHECK(dir.calibration_files() == 2);
  }
  CHECK(dir.calibration_files() == 0);
}

TEST_CASE("safety: refuses to reuse a file it did not create", "[calibrate][safety]") {
  tiersim::test::TempDir dir;
  SECTION("a foreign file with tiersim's own name in a target directory") {
    const std::string path = dir.file(own_name(0));
    std::ofstream(path) << "somebody's data\n";
    CHECK_THROWS_AS(create(dir, 0, small_file()), SafetyError);
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    CHECK(line == "somebody's data");  // untouched
  }
  SECTION("an existing foreign file given as target") {
    const std::string path = dir.file("data.bin");
    std::ofstream(path) << std::string(8192, 'z');
    CHECK_THROWS_AS(CalibrationFile::open_path(path, small_file()), SafetyError);
    CHECK(std::filesystem::file_size(path) == 8192);
  }
  SECTION("a file tiersim created earlier is reused, and kept since this run did not create it") {
    const std::string path = dir.file("mine.dat");
    FileOptions keep = small_file();
    keep.keep = true;
    keep.direct = false;
    { CalibrationFile::open_path(path, keep); }
    REQUIRE(is_own_file(path));
    FileOptions again = small_file();
    again.direct = false;
    { auto f = CalibrationFile::open_path(path, again); CHECK_FALSE(f.created()); }
    CHECK(std::filesystem::exists(path));
  }
}

TEST_CASE("safety: refuses when free space is insufficient", "[calibrate][safety]") {
  tiersim::test::TempDir dir;
  FileOptions fo = small_file();
  SECTION("injected free space below the file size") {
    fo.limits.free_bytes = [](const std::string&) -> std::uint64_t { return 1 << 20; };
    CHECK_THROWS_AS(create(dir, 0, fo), SafetyError);
  }
  SECTION("real free space, but the reserve that must remain is larger than the disk") {
    fo.limits.reserve_free_bytes = 1ull << 60;
    try {
      create(dir, 0, fo);
      FAIL("no refusal");
    } catch (const SafetyError& e) {
      CHECK(std::string(e.what()).find("refusing") != std::string::npos);
    }
  }
  CHECK(dir.calibration_files() == 0);
  CHECK_NOTHROW(check_free_space(dir.str(), 1 << 20, SafetyLimits{0, [](const std::string&) -> std::uint64_t { return 2 << 20; }}));
}

TEST_CASE("safety: a raw device must be named twice, and be a block device", "[calibrate][safety]") {
  CHECK_THROWS_AS(check_raw_device_consent("/dev/nvme9n1", ""), SafetyError);
  CHECK_THROWS_AS(check_raw_device_consent("/dev/nvme9n1", "/dev/nvme8n1"), SafetyError);
  // Named twice, but not a block device.
  tiersim::test::TempDir dir;
  const std::string path = dir.file("not-a-device");
  std::ofstream(path) << "x";
  CHECK_THROWS_AS(check_raw_device_consent(path, path), SafetyError);
  FileOptions fo = small_file();
  CHECK_THROWS_AS(CalibrationFile::open_raw_device("/dev/nvme9n1", "", fo), SafetyError);
}

TEST_CASE("safety: stale files of dead runs are removed, others are left", "[calibrate][safety]") {
  tiersim::test::TempDir dir;
  FileOptions fo = small_file();
  fo.keep = true;
  fo.direct = false;
  { CalibrationFile::open_path(dir.file(".tiersim-calib-999999999-0.dat"), fo); }  // no such pid
  std::ofstream(dir.file(".tiersim-calib-999999998-0.dat")) << "not ours";
  CHECK(remove_stale_files(dir.str()) == 1);
  CHECK(std::filesystem::exists(dir.file(".tiersim-calib-999999998-0.dat")));
}

TEST_CASE("safety: SIGINT stops the sweep and the calibration files are removed", "[calibrate][safety]") {
  tiersim::test::TempDir dir;
  CalibrationOptions o;
  o.targets = {dir.str()};
  o.engine = io_uring_unavailable_reason().empty() ? EngineKind::io_uring : EngineKind::sync;
  o.plan = quick_plan();
  o.file = small_file();
  bool direct_ok = true;
  try {
    create(dir, 7, small_file());
    FileOptions d = small_file();
    CalibrationFile::create_in_dir(dir.str(), 8, d);
  } catch (const DirectIoUnsupported&) {
    direct_ok = false;
  }
  o.file.direct = direct_ok;
  REQUIRE(dir.calibration_files() == 0);

  InterruptGuard guard;
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    ::kill(::getpid(), SIGINT);  // the handler only sets the flag
  });
  QuietProgress progress;
  CHECK_THROWS_AS(run_calibration(o, guard.flag(), progress), Interrupted);
  killer.join();
  CHECK(InterruptGuard::signal_received() == SIGINT);
  CHECK(dir.calibration_files() == 0);
}
