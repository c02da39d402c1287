// `tiersim calibrate`'s mixed read/write examples (calibrate/README.md, calibrate --help) on a
// scratch folder in place of /mnt/nvme0, small and short.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include "config/device_profile.hpp"
#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace tiersim::app_cmd_calibrate_test {

TEST_CASE("calibrate --rwmix-read: a mixed point and a sweep with mixed points, on a scratch folder",
          "[calibrate][app]") {
  const std::string bin = test::tiersim_bin();
  if (bin.empty()) {
    WARN("TIERSIM_BIN not set: skipping the tiersim calibrate runs");
    return;
  }
  test::TempDir dir;
  // The page cache and the sync engine: the folder may be tmpfs (no O_DIRECT), and the sync
  // engine's single depth keeps the sweep to a few seconds; the mixed logic is the same.
  const std::string common = " --target " + dir.str() + " --buffered --engine sync --min-free 0";
  SECTION("--point --rw randrw70 prints its reads and its writes") {
    REQUIRE(test::shell(bin + " calibrate" + common +
                        " --point --rw randrw70 --bs 256KiB --qd 16 --seconds 0.3 --warmup 0.05"
                        " --file-size 16MiB --json >" + dir.file("point.json") + " 2>" +
                        dir.file("err")) == 0);
    const std::string out = test::slurp(dir.file("point.json"));
    INFO(out << test::slurp(dir.file("err")));
    CHECK_THAT(out, Catch::StartsWith("["));
    CHECK_THAT(out, Catch::Contains("\"rw\": \"randrw70-read\""));
    CHECK_THAT(out, Catch::Contains("\"rw\": \"randrw70-write\""));
  }
  SECTION("--quick --rwmix-read 70 stores both directions and fits the interference") {
    const std::string db = dir.file("cal.db"), out = dir.file("device.yaml");
    REQUIRE(test::shell(bin + " calibrate" + common + " --quick --rwmix-read 70 --mixed-bs 64KiB"
                        " --file-size 4MiB --db " + db + " --out " + out + " >" +
                        dir.file("log") + " 2>&1") == 0);
    INFO(test::slurp(dir.file("log")));
    CHECK_THAT(test::slurp(dir.file("log")), Catch::Contains("mixed: interference"));
    const DeviceProfile p = read_device_profile(out);
    CHECK(p.fit.mixed_points == 1);
    CHECK(std::isfinite(p.model.mix_interference));
    CHECK(p.model.mix_interference >= -1);
    CHECK(test::shell("sqlite3 " + db +
                      " \"select count(*) from calibration_points where rw like 'randrw70-%' and"
                      " fit_role = 'fit'\" 2>/dev/null | grep -qx 2 || ! command -v sqlite3"
                      " >/dev/null") == 0);
  }
  // Nothing of tiersim's is left in the folder but what it was asked to write.
  for (const auto& e : std::filesystem::directory_iterator(dir.str()))
    CHECK(e.path().filename().string().rfind(".tiersim-calib-", 0) != 0);
}

TEST_CASE("calibrate --point refuses a span that is not a finite number of seconds",
          "[calibrate][app]") {
  const std::string bin = test::tiersim_bin();
  if (bin.empty()) return;
  test::TempDir dir;
  // --seconds nan used to measure until the process was killed; --seconds -1 printed a rate.
  // `timeout` turns such a hang into a failure instead of a stuck suite.
  for (const char* bad : {"--seconds nan", "--seconds inf", "--seconds -1", "--seconds 0",
                          "--warmup nan", "--warmup -0.5", "--interface-gbps inf"}) {
    INFO(bad);
    const std::string err = dir.file("err");
    CHECK(test::shell("timeout 20 " + bin + " calibrate --target " + dir.str() +
                      " --buffered --engine sync --min-free 0 --file-size 4MiB --point " + bad +
                      " >/dev/null 2>" + err) == 2);
    const std::string option = std::string(bad).substr(0, std::string(bad).find(' '));
    CHECK_THAT(test::slurp(err), Catch::Contains("error: " + option + " must be"));
  }
  for (const auto& e : std::filesystem::directory_iterator(dir.str()))
    CHECK(e.path().filename().string().rfind(".tiersim-calib-", 0) != 0);
}

TEST_CASE("calibrate --help teaches the mixed sweep", "[calibrate][app]") {
  const std::string bin = test::tiersim_bin();
  if (bin.empty()) return;
  test::TempDir dir;
  REQUIRE(test::shell(bin + " calibrate --help >" + dir.file("help")) == 0);
  const std::string help = test::slurp(dir.file("help"));
  CHECK_THAT(help, Catch::Contains("--rwmix-read"));
  CHECK_THAT(help, Catch::Contains("--mixed-bs"));
  CHECK_THAT(help, Catch::Contains("randrw70"));
}

}  // namespace tiersim::app_cmd_calibrate_test
