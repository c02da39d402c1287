// The cache check of calibrate/plausibility.hpp on synthetic measurements: points generated from
// a device model (model/ssd_model.hpp) on the quick sweep's grid, fitted as the sweep fits them.
#include <catch2/catch.hpp>
#include <random>

#include "calibrate/fit.hpp"
#include "calibrate/plausibility.hpp"
#include "calibrate/campaign.hpp"
#include "calibrate/target.hpp"
#include "model/hardware.hpp"

namespace calibrate_plausibility_test {

namespace store = tiersim::store;

using namespace tiersim::calibrate;
using tiersim::DeviceProfileFit;
using tiersim::SsdDirectionModel;

namespace {

// The quick sweep's points for one direction, measured with `noise_pct` relative scatter.
void add_points(std::vector<store::CalibrationPoint>& out, const std::string& rw,
                const SsdDirectionModel& truth, double noise_pct, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> noise(0.0, noise_pct / 100.0);
  const SweepPlan plan = quick_plan();
  for (unsigned q : plan.queue_depths) {
    for (std::uint32_t b : plan.block_bytes) {
      store::CalibrationPoint p;
      p.rw = rw;
      p.block_bytes = b;
      p.queue_depth = static_cast<int>(q);
      p.threads = 1;
      p.bandwidth_gbps = truth.bandwidth_gbps(b, q) * std::max(0.05, 1 + noise(gen));
      out.push_back(p);
    }
  }
}

// The fit block of the profile, as run_calibration computes it (every 5th point held out).
DeviceProfileFit fit_of(const std::vector<store::CalibrationPoint>& points) {
  DeviceProfileFit f;
  for (bool read : {true, false}) {
    std::vector<FitPoint> fp;
    for (const auto& p : points) {
      if (p.target_count == 1 && p.is_read() == read) {
        fp.push_back({static_cast<double>(p.block_bytes), static_cast<double>(p.queue_depth),
                      p.bandwidth_gbps});
      }
    }
    const FitReport r = fit_with_holdout(fp, 5);
    (read ? f.read_fit_error_pct : f.write_fit_error_pct) = r.fit_error_pct;
    (read ? f.read_heldout_error_pct : f.write_heldout_error_pct) = r.heldout_error_pct;
    f.points += r.fit_points;
    f.heldout_points += r.heldout_points;
  }
  return f;
}

bool mentions(const std::vector<std::string>& warnings, const std::string& words) {
  for (const auto& w : warnings) {
    if (w.find(words) != std::string::npos) return true;
  }
  return false;
}

// A Gen4 datacenter drive: reads faster than writes (scenarios/catalog/drives.yaml, generic-gen4).
const SsdDirectionModel kDriveRead{6.8, 1.5, 75.0, 2.5};
const SsdDirectionModel kDriveWrite{4.0, 4.0, 15.0, 1.8};

}  // namespace

TEST_CASE("cache check: a drive measured with a few percent scatter raises nothing",
          "[calibrate][plausibility]") {
  std::vector<store::CalibrationPoint> pts;
  add_points(pts, "randread", kDriveRead, 3.0, 1);
  add_points(pts, "randwrite", kDriveWrite, 3.0, 2);
  PlausibilityLimits limits;
  limits.interface_gbps = tiersim::pcie_link_gbps(4, 4);
  limits.interface_source = "PCIe Gen4 x4";
  const auto w = cache_warnings(pts, fit_of(pts), limits);
  INFO((w.empty() ? std::string() : w.front()));
  CHECK(w.empty());
}

TEST_CASE("cache check: writes twice as fast as reads warn", "[calibrate][plausibility]") {
  // A host write-back cache: writes land in host memory at twice the drive's read rate.
  std::vector<store::CalibrationPoint> pts;
  add_points(pts, "randread", kDriveRead, 3.0, 1);
  add_points(pts, "randwrite", {2 * kDriveRead.peak_gbps, 1.0, 5.0, 0.0}, 3.0, 2);
  const auto w = cache_warnings(pts, fit_of(pts), PlausibilityLimits{});
  CHECK(mentions(w, "faster than reads"));
  CHECK(mentions(w, "write-back cache"));
  // 1.4x stays below the default 1.5x bound: fast-writing drives are not flagged.
  std::vector<store::CalibrationPoint> close;
  add_points(close, "randread", kDriveRead, 0.0, 1);
  add_points(close, "randwrite", {1.4 * kDriveRead.peak_gbps, 1.5, 75.0, 2.5}, 0.0, 2);
  CHECK_FALSE(
      mentions(cache_warnings(close, fit_of(close), PlausibilityLimits{}), "faster than reads"));
}

TEST_CASE("cache check: a poor held-out fit warns, naming the direction",
          "[calibrate][plausibility]") {
  // 40% scatter on the writes (a cache that sometimes absorbs them, sometimes flushes): the model
  // cannot predict the held-out points.
  std::vector<store::CalibrationPoint> pts;
  add_points(pts, "randread", kDriveRead, 3.0, 1);
  add_points(pts, "randwrite", kDriveWrite, 40.0, 2);
  const DeviceProfileFit fit = fit_of(pts);
  REQUIRE(fit.write_heldout_error_pct > 25.0);
  REQUIRE(fit.read_heldout_error_pct < 25.0);
  const auto w = cache_warnings(pts, fit, PlausibilityLimits{});
  CHECK(mentions(w, "misses the write points"));
  CHECK_FALSE(mentions(w, "misses the read points"));
  CHECK(mentions(w, "(held out)"));
}

TEST_CASE(
    "cache check: bandwidth above the interface warns; points of several drives at once do not",
    "[calibrate][plausibility]") {
  std::vector<store::CalibrationPoint> pts;
  add_points(pts, "randread", kDriveRead, 0.0, 1);
  add_points(pts, "randwrite", kDriveWrite, 0.0, 2);
  PlausibilityLimits limits;
  limits.interface_gbps = tiersim::pcie_link_gbps(3, 4);  // 3.94 GB/s: less than these reads reach
  limits.interface_source = "PCIe Gen3 x4 (sysfs)";
  const auto w = cache_warnings(pts, fit_of(pts), limits);
  CHECK(mentions(w, "above the 3.940 GB/s"));
  CHECK(mentions(w, "PCIe Gen3 x4 (sysfs)"));

  // A RAID-0 point is the sum over drives; only single-drive points are held to one drive's link.
  std::vector<store::CalibrationPoint> raid;
  add_points(raid, "randread", {3.0, 1.5, 75.0, 2.5}, 0.0, 1);
  add_points(raid, "randwrite", {2.5, 4.0, 15.0, 1.8}, 0.0, 2);
  store::CalibrationPoint together = raid.back();
  together.target_count = 4;
  together.rw = "randwrite";
  together.bandwidth_gbps = 11.0;  // four drives' writes: also above 1.5x any single read
  raid.push_back(together);
  CHECK(cache_warnings(raid, fit_of(raid), limits).empty());
}

TEST_CASE("PCIe generation from sysfs link speed", "[calibrate][plausibility]") {
  CHECK(pcie_generation_from_link_speed("2.5 GT/s PCIe") == 1);
  CHECK(pcie_generation_from_link_speed("5.0 GT/s PCIe") == 2);
  CHECK(pcie_generation_from_link_speed("8.0 GT/s PCIe") == 3);
  CHECK(pcie_generation_from_link_speed("16.0 GT/s PCIe") == 4);
  CHECK(pcie_generation_from_link_speed("32.0 GT/s PCIe") == 5);
  CHECK(pcie_generation_from_link_speed("Unknown") == 0);
  CHECK(pcie_generation_from_link_speed("") == 0);
  CHECK(pcie_generation_from_link_speed("12 GT/s") == 0);
}
}  // namespace calibrate_plausibility_test
