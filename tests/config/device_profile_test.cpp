#include <catch2/catch.hpp>
#include <fstream>

#include "config/device_profile.hpp"
#include "model/errors.hpp"
#include "tests/temp_dir.hpp"

namespace config_device_profile_test {

using tiersim::ConfigError;

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

const char* kValid =
    "# tiersim device profile (written by tiersim calibrate)\n"
    "name: my drive\n"
    "read:  {peak_gbps: 6.5, io_overhead_us: 1.2, latency_us: 70, stream_gbps: 3}\n"
    "write: {peak_gbps: 3.5, io_overhead_us: 4, latency_us: 12, stream_gbps: 0}\n";

}  // namespace

TEST_CASE("device profile round trip", "[calibrate][profile]") {
  tiersim::test::TempDir dir;
  tiersim::DeviceProfile p;
  p.model.name = "pm9a3: \"lab\" #1";
  p.model.read = {6.789, 1.25, 71.5, 3.25};
  p.model.write = {3.9, 4.5, 12.0, 0.0};
  p.measured.date = "2025-01-02T03:04:05Z";
  p.measured.host = "host-1";
  p.measured.kernel = "6.8.0";
  p.measured.filesystem = "xfs";
  p.measured.device = "/dev/nvme0n1 (SAMSUNG)";
  p.measured.targets = {"/mnt/a", "/mnt/b"};
  p.measured.engine = "io_uring";
  p.measured.tool_version = "0.1.0";
  p.fit = {40, 10, 2.5, 3.5, 4.5, 5.5};
  p.warnings = {"writes measured 2.00x faster than reads: a write-back cache",
                "quote \" and # and: colon"};
  const std::string path = dir.file("device.yaml");
  tiersim::write_device_profile(path, p);

  const auto q = tiersim::read_device_profile(path);
  CHECK(q.model.name == p.model.name);
  CHECK(q.model.read.peak_gbps == Approx(6.789));
  CHECK(q.model.read.io_overhead_us == Approx(1.25));
  CHECK(q.model.read.latency_us == Approx(71.5));
  CHECK(q.model.read.stream_gbps == Approx(3.25));
  CHECK(q.model.write.peak_gbps == Approx(3.9));
  CHECK(q.model.write.stream_gbps == 0.0);
  CHECK(q.measured.targets == p.measured.targets);
  CHECK(q.measured.device == p.measured.device);
  CHECK(q.measured.engine == "io_uring");
  CHECK(q.fit.points == 40);
  CHECK(q.fit.heldout_points == 10);
  CHECK(q.fit.write_heldout_error_pct == Approx(5.5));
  CHECK(q.warnings == p.warnings);

  const auto m = tiersim::load_device_profile(path);
  CHECK(m.read.bandwidth_gbps(1 << 20, 32) == Approx(p.model.read.bandwidth_gbps(1 << 20, 32)).epsilon(1e-6));
}

TEST_CASE("device profile: hand-written minimal profile loads", "[calibrate][profile]") {
  tiersim::test::TempDir dir;
  write(dir.file("p.yaml"), kValid);
  const auto m = tiersim::load_device_profile(dir.file("p.yaml"));
  CHECK(m.name == "my drive");
  CHECK(m.read.latency_us == 70.0);
  CHECK(m.write.io_overhead_us == 4.0);
}

TEST_CASE("device profile: bad input names file, line and key", "[calibrate][profile]") {
  tiersim::test::TempDir dir;
  const std::string path = dir.file("bad.yaml");
  auto expect = [&](const std::string& text, int line, const std::string& key, const std::string& words) {
    write(path, text);
    try {
      tiersim::load_device_profile(path);
      FAIL("no error for:\n" << text);
    } catch (const ConfigError& e) {
      INFO(e.what());
      CHECK(e.file() == path);
      CHECK(e.line() == line);
      CHECK(e.key_path() == key);
      CHECK(std::string(e.what()).find(words) != std::string::npos);
    }
  };
  SECTION("unknown top-level key") { expect(std::string(kValid) + "colour: blue\n", 5, "colour", "unknown key"); }
  SECTION("unknown key inside read") {
    expect("name: x\nread: {peak_gbps: 1, latency: 3}\nwrite: {peak_gbps: 1}\n", 2, "read.latency", "unknown key");
  }
  SECTION("missing write") { expect("name: x\nread: {peak_gbps: 1}\n", 1, "write", "missing"); }
  SECTION("missing peak") { expect("name: x\nread: {latency_us: 1}\nwrite: {peak_gbps: 1}\n", 2, "read.peak_gbps", "missing"); }
  SECTION("zero peak") { expect("name: x\nread: {peak_gbps: 0}\nwrite: {peak_gbps: 1}\n", 2, "read.peak_gbps", "> 0"); }
  SECTION("negative latency") {
    expect("name: x\nread: {peak_gbps: 1}\nwrite:\n  peak_gbps: 1\n  latency_us: -3\n", 5, "write.latency_us", ">= 0");
  }
  SECTION("not a number") {
    expect("name: x\nread: {peak_gbps: fast}\nwrite: {peak_gbps: 1}\n", 2, "read.peak_gbps", "expected a number");
  }
  SECTION("unknown key in measured") {
    expect(std::string(kValid) + "measured: {host: a, hots: b}\n", 5, "measured.hots", "unknown key");
  }
  SECTION("fit points not whole") {
    expect(std::string(kValid) + "fit: {points: 2.5}\n", 5, "fit.points", "whole number");
  }
  SECTION("warnings not a list") {
    expect(std::string(kValid) + "warnings: looks like a cache\n", 5, "warnings",
           "expected a list");
  }
    SECTION("invalid YAML") {
    expect("name: x\nread: {peak_gbps: 1\n", 3, "", "YAML syntax error");
  }
}

TEST_CASE("device profile: a profile without warnings has none, and is written without the key",
          "[calibrate][profile]") {
  tiersim::test::TempDir dir;
  write(dir.file("p.yaml"), std::string(kValid) + "warnings:\n  - \"bandwidth above the link\"\n");
  CHECK(tiersim::read_device_profile(dir.file("p.yaml")).warnings ==
        std::vector<std::string>{"bandwidth above the link"});
  write(dir.file("q.yaml"), kValid);
  tiersim::DeviceProfile p = tiersim::read_device_profile(dir.file("q.yaml"));
  CHECK(p.warnings.empty());
  tiersim::write_device_profile(dir.file("r.yaml"), p);
  std::ifstream in(dir.file("r.yaml"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("warnings") == std::string::npos);
}

TEST_CASE("device profile: the mixed read/write fit round-trips, and is checked",
          "[calibrate][profile]") {
  tiersim::test::TempDir dir;
  write(dir.file("p.yaml"), kValid);
  tiersim::DeviceProfile p = tiersim::read_device_profile(dir.file("p.yaml"));
  CHECK(p.model.mix_interference == 0);
  CHECK(p.fit.mixed_points == 0);
  p.model.mix_interference = 0.375;
  p.fit.mixed_points = 12;
  p.fit.mixed_fit_error_pct = 4.5;
  p.fit.mixed_read_latency_error_pct = 22;
  tiersim::write_device_profile(dir.file("m.yaml"), p);
  const tiersim::DeviceProfile q = tiersim::read_device_profile(dir.file("m.yaml"));
  CHECK(q.model.mix_interference == Approx(0.375));
  CHECK(q.fit.mixed_points == 12);
  CHECK(q.fit.mixed_fit_error_pct == Approx(4.5));
  CHECK(q.fit.mixed_read_latency_error_pct == Approx(22));
  write(dir.file("bad.yaml"), std::string(kValid) + "mixed: {interference: -2}\n");
  try {
    tiersim::read_device_profile(dir.file("bad.yaml"));
    FAIL("interference below -1 accepted");
  } catch (const ConfigError& e) {
    CHECK(e.line() == 5);
    CHECK(e.key_path() == "mixed.interference");
  }
  write(dir.file("bad2.yaml"), std::string(kValid) + "mixed: {points: 3}\n");
  CHECK_THROWS_AS(tiersim::read_device_profile(dir.file("bad2.yaml")), ConfigError);
}

TEST_CASE("device profile: missing file", "[calibrate][profile]") {
  CHECK_THROWS_AS(tiersim::load_device_profile("no/such/device.yaml"), ConfigError);
}

TEST_CASE("device profile: a file that is not one is refused without repeating its text",
          "[calibrate][profile]") {
  tiersim::test::TempDir dir;
  const std::string path = dir.file("shadow");
  write(path, "root:$6$SECRET:19000:0:99999:7:::\n");
  try {
    tiersim::load_device_profile(path);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.file() == path);
    CHECK(e.line() == 1);
    CHECK_THAT(e.what(), !Catch::Contains("SECRET") && !Catch::Contains("root"));
    CHECK_THAT(e.what(), Catch::Contains("not a device profile"));
  }
  write(path, "name: x\n? [a, b]\n: 1\n");  // a complex key: no yaml-cpp conversion error
  CHECK_THROWS_AS(tiersim::load_device_profile(path), ConfigError);
  CHECK_THROWS_WITH(tiersim::load_device_profile(dir.str()), Catch::Contains("is a directory"));
}
}  // namespace config_device_profile_test
