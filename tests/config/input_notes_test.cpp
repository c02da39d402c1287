// The notes the loader attaches to a scenario whose drives use a calibrated device profile
// (config/input_notes.hpp): the profile's calibration warnings, and where the drives' price and
// power came from, stable when the stored resolved scenario is loaded again.
#include "config/input_notes.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "common/format.hpp"
#include "config/catalog.hpp"
#include "config/scenario_loader.hpp"
#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace config_input_notes_test {

using namespace tiersim;
using namespace tiersim::config;
using tiersim::test::replace;

namespace {

const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";

const char* kScenario =
    "name: profiled\n"
    "hardware:\n"
    "  gpu: {model: H200, count: 1}\n"
    "  nvme: {profile: device.yaml, count: 4}\n"
    "model: {name: llama-3-70b}\n"
    "workload: {kind: inference, batch: 8, prompt_tokens: 512, gen_tokens: 8}\n"
    "policy: {weights: nvme}\n";

// What calibrate/plausibility.cpp writes for a write-back cache and a poor fit.
const char* kCacheWarning =
    "writes measured 2.10x faster than reads (4.200 vs 2.000 GB/s at best; a drive writes at most "
    "about as fast as it reads): a write-back cache (host or hypervisor) is likely absorbing the "
    "writes";
const char* kFitWarning =
    "the device model misses the read points by 31.5% (held out), more than 25%: the measurements "
    "do not behave like one drive's queue (a cache, throttling or a noisy neighbour)";

DeviceProfile profile(std::vector<std::string> warnings = {}, std::string catalog_drive = "") {
  DeviceProfile p;
  p.model.name = "my-drive";
  p.model.read = {6.5, 1, 80, 0};
  p.model.write = {3.0, 2, 20, 0};
  p.warnings = std::move(warnings);
  p.catalog_drive = std::move(catalog_drive);
  return p;
}

Scenario load_in(const test::TempDir& dir, const std::string& scenario, const DeviceProfile& p,
                 std::vector<std::string> sets = {}) {
  write_device_profile(dir.file("device.yaml"), p);
  std::ofstream(dir.file("s.yaml")) << scenario;
  LoadOptions o;
  o.data_dir = kData;
  o.overrides = std::move(sets);
  return load_scenario(dir.file("s.yaml"), o);
}

std::string all_text(const std::vector<InputNote>& notes) {
  std::string out;
  for (const auto& n : notes) out += std::string(to_string(n.kind)) + " " + n.subject + ": " + n.message + "\n";
  return out;
}

}  // namespace

TEST_CASE("a profile's calibration warnings are warning notes, and the resolved scenario keeps them",
          "[config][notes]") {
  test::TempDir dir;
  const Scenario s =
      load_in(dir, kScenario, profile({kCacheWarning, kFitWarning}, "generic-gen5"));
  INFO(all_text(s.notes));
  REQUIRE(s.notes.size() == 3);
  CHECK(s.notes[0].kind == InputNote::Kind::kWarning);
  CHECK(s.notes[0].subject == "hardware.nvme.profile");
  CHECK_THAT(s.notes[0].message, Catch::Contains(kCacheWarning) && Catch::Contains("my-drive") &&
                                     Catch::Contains("device.yaml"));
  CHECK(s.notes[1].kind == InputNote::Kind::kWarning);
  CHECK_THAT(s.notes[1].message, Catch::Contains(kFitWarning));

  // The report loads the stored resolved YAML again: the same notes, from the same profile.
  LoadOptions o;
  o.data_dir = kData;
  const Scenario again = load_scenario_text(s.resolved_yaml, "stored", o);
  CHECK(all_text(again.notes) == all_text(s.notes));
}

TEST_CASE("a profiled drive's notes say where its price and power came from", "[config][notes]") {
  test::TempDir dir;
  const Catalog catalog = Catalog::load(kData);

  SECTION("the profile's catalog_drive: the catalog drive's values, each with its source") {
    const Scenario s = load_in(dir, kScenario, profile({}, "generic-gen5"));
    REQUIRE(s.notes.size() == 1);
    const InputNote& n = s.notes[0];
    CHECK(n.kind == InputNote::Kind::kSource);
    CHECK(n.subject == "hardware.nvme");
    const NvmeSpec& gen5 = catalog.drive("generic-gen5");
    const PriceQuote price = catalog.drive_price("generic-gen5");
    INFO(n.message);
    CHECK_THAT(n.message,
               Catch::Contains("catalog drive 'generic-gen5' (named by the profile's catalog_drive)") &&
                   Catch::Contains("active " + format::number(gen5.active_w) + " W (catalog: " +
                                   gen5.sources.at("active_w") + ")") &&
                   Catch::Contains("idle " + format::number(gen5.idle_w) + " W (catalog: " +
                                   gen5.sources.at("idle_w") + ")") &&
                   Catch::Contains(format::usd(price.usd) + " per drive (catalog prices, " +
                                   price.date + ": " + price.source + ")"));
    // Stored and loaded again, the resolved YAML names the drive itself: still the profile's.
    LoadOptions o;
    o.data_dir = kData;
    CHECK(load_scenario_text(s.resolved_yaml, "stored", o).notes[0].message == n.message);
  }
  SECTION("the scenario's hardware.nvme.model, with a value the scenario overrides") {
    const Scenario s = load_in(
        dir, replace(kScenario, "nvme: {profile:", "nvme: {model: generic-gen4, profile:"),
        profile({}, "generic-gen5"), {"hardware.nvme.active_w=9.5"});
    REQUIRE(s.notes.size() == 1);
    INFO(s.notes[0].message);
    CHECK(s.notes[0].kind == InputNote::Kind::kSource);
    CHECK_THAT(s.notes[0].message,
               Catch::Contains("catalog drive 'generic-gen4' (named by hardware.nvme.model)") &&
                   Catch::Contains("active 9.5 W (override)"));
  }
  SECTION("no drive named: 0 W and no price is a warning that says what to set") {
    const Scenario s = load_in(dir, kScenario, profile());
    REQUIRE(s.notes.size() == 1);
    INFO(s.notes[0].message);
    CHECK(s.notes[0].kind == InputNote::Kind::kWarning);
    CHECK_THAT(s.notes[0].message,
               Catch::Contains("names no catalog drive") &&
                   Catch::Contains("active 0 W (default), idle 0 W (default)") &&
                   Catch::Contains("no price") &&
                   Catch::Contains("hardware.nvme.active_w and idle_w and "
                                   "economics.prices.drive_usd"));
  }
  SECTION("no drive named, but power and price given: a source note") {
    const Scenario s =
        load_in(dir, kScenario, profile(),
                {"hardware.nvme.active_w=20", "hardware.nvme.idle_w=4",
                 "economics.prices.drive_usd=900"});
    REQUIRE(s.notes.size() == 1);
    INFO(s.notes[0].message);
    CHECK(s.notes[0].kind == InputNote::Kind::kSource);
    CHECK_THAT(s.notes[0].message, Catch::Contains("active 20 W (override), idle 4 W (override), " +
                                                   format::usd(900) + " per drive (override)"));
  }
}

TEST_CASE("scenarios without a profile, or without drives, carry no notes", "[config][notes]") {
  test::TempDir dir;
  const Scenario catalog_only =
      load_in(dir, replace(kScenario, "nvme: {profile: device.yaml,", "nvme: {model: generic-gen5,"),
              profile({kCacheWarning}));
  CHECK(catalog_only.notes.empty());
  const Scenario no_drives = load_in(
      dir, replace(replace(kScenario, "count: 4}", "count: 0}"), "policy: {weights: nvme}\n", ""),
      profile({kCacheWarning}));
  CHECK(no_drives.notes.empty());
}
}  // namespace config_input_notes_test
