#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "calibrate/interrupt.hpp"
#include "calibrate/campaign.hpp"
#include "calibrate/target.hpp"
#include "config/device_profile.hpp"
#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace calibrate_target_test {

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

TEST_CASE("safety: only registered scratch files of dead runs are removed", "[calibrate][safety]") {
  tiersim::test::TempDir dir;
  const std::string registry = dir.file("results.sqlite");
  // A run that dies without cleaning up (as under SIGKILL): a child creates a registered file and
  // leaves at once, without destructors.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    FileOptions fo = small_file();
    fo.direct = false;
    fo.registry_path = registry;
    try {
      CalibrationFile f = CalibrationFile::create_in_dir(dir.str(), 0, fo);
      std::_Exit(f.created() ? 0 : 1);
    } catch (...) {
      std::_Exit(2);
    }
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(dir.calibration_files() == 1);
  std::string stale;
  for (const auto& e : std::filesystem::directory_iterator(dir.str()))
    if (e.path().filename().string().rfind(kFilePrefix, 0) == 0) stale = e.path().string();
  // Files with the same name pattern and header that no registry entry proves: a --keep file of
  // another run, a user's copy of the stale file, a user's symlink to it.
  FileOptions keep = small_file();
  keep.direct = false;
  keep.keep = true;
  keep.registry_path = registry;
  const std::string kept = dir.file(".tiersim-calib-999999999-0.dat");
  { CalibrationFile::open_path(kept, keep); }
  const std::string copy = dir.file(".tiersim-calib-999999998-0.dat");
  std::filesystem::copy_file(stale, copy);
  const std::string link = dir.file(".tiersim-calib-999999997-0.dat");
  std::filesystem::create_symlink(stale, link);

  CHECK(FileRegistry(registry).remove_stale_files() == 1);
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(std::filesystem::exists(kept));
  CHECK(std::filesystem::exists(copy));
  CHECK(std::filesystem::is_symlink(link));
  CHECK(FileRegistry(registry).remove_stale_files() == 0);  // the entry is gone too
}

TEST_CASE("safety: a stale scratch file is removed by a later run from another folder",
          "[calibrate][safety]") {
  tiersim::test::TempDir dir;
  const std::string registry = dir.file("results.sqlite");
  // The killed run worked in `dir` and named its target relatively ("."); the later run (this
  // process) works elsewhere. The row used to hold "./.tiersim-calib-...", which from here names
  // nothing: the row was dropped and the file leaked.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::chdir(dir.str().c_str()) != 0) std::_Exit(3);
    FileOptions fo = small_file();
    fo.direct = false;
    fo.registry_path = "results.sqlite";
    try {
      CalibrationFile f = CalibrationFile::create_in_dir(".", 0, fo);
      std::_Exit(f.created() ? 0 : 1);
    } catch (...) {
      std::_Exit(2);
    }
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(dir.calibration_files() == 1);
  REQUIRE(std::filesystem::current_path() != std::filesystem::path(dir.str()));
  CHECK(FileRegistry(registry).remove_stale_files() == 1);
  CHECK(dir.calibration_files() == 0);
}

TEST_CASE("safety: a created file replaced by a symlink or another file is not deleted",
          "[calibrate][safety]") {
  tiersim::test::TempDir dir;
  FileOptions fo = small_file();
  fo.direct = false;
  const std::string target = dir.file("precious.txt");
  std::ofstream(target) << "keep me\n";
  std::string path;
  {
    auto f = CalibrationFile::create_in_dir(dir.str(), 0, fo);
    path = f.path();
    std::filesystem::remove(path);
    std::filesystem::create_symlink(target, path);
  }
  CHECK(std::filesystem::is_symlink(path));
  CHECK(std::filesystem::exists(target));
}

TEST_CASE("safety: a device profile that cannot be written leaves no temporary file",
          "[calibrate][safety]") {
  tiersim::test::TempDir dir;
  tiersim::DeviceProfile profile;
  profile.model.name = "test drive";
  // A write limit stands in for a full disk (ENOSPC): the write fails part-way (EFBIG).
  struct rlimit old_limit {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 64;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  bool threw = false;
  try {
    tiersim::write_device_profile(dir.file("dev.yaml"), profile);
  } catch (const tiersim::IoError&) {
    threw = true;
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  CHECK(threw);
  CHECK(dir.regular_files() == 0);
  // And without the limit it is written, with nothing else beside it but the folder's list of
  // the files tiersim wrote there (model/files.hpp).
  tiersim::write_device_profile(dir.file("dev.yaml"), profile);
  CHECK(dir.regular_files() == 2);
  CHECK(std::filesystem::exists(dir.file(tiersim::kOutputManifest)));
  std::ifstream in(dir.file("dev.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("name: \"test drive\"") != std::string::npos);
}

namespace {

// The command line of `tiersim calibrate` measuring one short point on a small buffered file in
// `dir` (sync engine: works on any file system), plus `extra` options.
std::string calibrate_cmd(const std::string& bin, const std::string& dir,
                          const std::string& extra) {
  return bin + " calibrate --target " + dir +
         " --buffered --engine sync --point --bs 4KiB --qd 1 --warmup 0 --file-size 4MiB " + extra;
}

}  // namespace

TEST_CASE("calibrate: a --keep file, a user's copy and a symlink survive the next run",
          "[calibrate][safety]") {
  const std::string bin = tiersim::test::tiersim_bin();
  if (bin.empty()) {
    WARN("TIERSIM_BIN not set: skipping the tiersim calibrate runs");
    return;
  }
  tiersim::test::TempDir dir;
  REQUIRE(
      tiersim::test::shell(calibrate_cmd(bin, dir.str(), "--seconds 0.2 --min-free 1MiB --keep") +
                           " >/dev/null 2>&1") == 0);
  REQUIRE(dir.calibration_files() == 1);
  std::string kept;
  for (const auto& e : std::filesystem::directory_iterator(dir.str())) kept = e.path().string();
  const std::string copy = dir.file(".tiersim-calib-999999998-0.dat");
  std::filesystem::copy_file(kept, copy);
  const std::string link = dir.file(".tiersim-calib-999999997-0.dat");
  std::filesystem::create_symlink(kept, link);
  CHECK(tiersim::test::shell(calibrate_cmd(bin, dir.str(), "--seconds 0.2 --min-free 1MiB") +
                             " >/dev/null 2>&1") == 0);
  CHECK(std::filesystem::exists(kept));
  CHECK(std::filesystem::exists(copy));
  CHECK(std::filesystem::is_symlink(link));
  CHECK(dir.calibration_files() == 3);  // the second run's own file is gone
  // --min-free 0: no reserve (accepted, not "must be positive").
  CHECK(tiersim::test::shell(calibrate_cmd(bin, dir.str(), "--seconds 0.2 --min-free 0") +
                             " >/dev/null 2>&1") == 0);
  CHECK(dir.calibration_files() == 3);
}

TEST_CASE("calibrate: an --out that cannot be written is refused before measuring",
          "[calibrate][safety]") {
  const std::string bin = tiersim::test::tiersim_bin();
  if (bin.empty()) {
    WARN("TIERSIM_BIN not set: skipping the tiersim calibrate runs");
    return;
  }
  tiersim::test::TempDir dir;
  std::filesystem::create_directories(dir.file("out"));
  std::ofstream(dir.file("mine.yaml")) << "a file of the user's";
  // The whole quick sweep (28 points of 1 s) used to run before the write failed at the end.
  for (const std::string& out : {dir.file("out"), dir.file("mine.yaml"), dir.file("no/dir/p.yaml")}) {
    const auto start = std::chrono::steady_clock::now();
    const int rc = tiersim::test::shell(
        bin + " calibrate --target " + dir.str() +
        " --buffered --engine sync --quick --seconds 1 --warmup 0 --file-size 4MiB --min-free 0 "
        "--out " + out + " >" + dir.file("log") + " 2>&1");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO(out << ": " << tiersim::test::slurp(dir.file("log")));
    CHECK(rc != 0);
    CHECK(s < 10);
    CHECK_THAT(tiersim::test::slurp(dir.file("log")), Catch::Contains("will not write device profile"));
    CHECK(dir.calibration_files() == 0);
  }
  CHECK(tiersim::test::slurp(dir.file("mine.yaml")) == "a file of the user's");
}

TEST_CASE("calibrate: SIGTERM exits 143 and SIGINT 130, after removing the files",
          "[calibrate][safety]") {
  const std::string bin = tiersim::test::tiersim_bin();
  if (bin.empty()) {
    WARN("TIERSIM_BIN not set: skipping the tiersim calibrate runs");
    return;
  }
  for (const auto& [sig, expected] : {std::pair{"TERM", 143}, std::pair{"INT", 130}}) {
    tiersim::test::TempDir dir;
    const std::string err = dir.file("calibrate.err");
    const std::string target = dir.file("t");
    std::filesystem::create_directory(target);
    // Signal once the run has created its file (its handlers are installed by then).
    const std::string script = calibrate_cmd(bin, target, "--seconds 60 --min-free 1MiB") + " 2>" +
                               err + " >/dev/null & p=$!; while [ -z \"$(ls -A " + target +
                               ")\" ]; do sleep 0.05; done; sleep 0.3; kill -" + sig +
                               " $p; wait $p";
    INFO("SIG" << sig);
    CHECK(tiersim::test::shell("sh -c '" + script + "'") == expected);
    std::ifstream in(err);
    std::stringstream text;
    text << in.rdbuf();
    INFO(text.str());
    CHECK(text.str().find("interrupted; calibration files removed") != std::string::npos);
    int left = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(target)) ++left;
    CHECK(left == 0);
  }
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
}  // namespace calibrate_target_test
