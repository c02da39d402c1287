#include <catch2/catch.hpp>
#include <random>

#include "calibrate/fit.hpp"
#include "model/errors.hpp"

namespace calibrate_fit_test {

using namespace tiersim::calibrate;
using tiersim::SsdDirectionModel;

namespace {

std::vector<FitPoint> synthetic(const SsdDirectionModel& truth, double noise_pct, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> noise(0.0, noise_pct / 100.0);
  std::vector<FitPoint> pts;
  for (double q : {1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0}) {
    for (double b = 4096; b <= 16 * 1024 * 1024; b *= 2) {
      pts.push_back({b, q, truth.bandwidth_gbps(b, q) * (1 + noise(gen))});
    }
  }
  return pts;
}

}  // namespace

TEST_CASE("fit recovers known device-model coefficients from exact data", "[calibrate][fit]") {
  const SsdDirectionModel truth{6.8, 1.5, 75.0, 2.5};
  const auto m = fit_direction(synthetic(truth, 0, 1));
  CHECK(m.peak_gbps == Approx(truth.peak_gbps).epsilon(1e-6));
  CHECK(m.io_overhead_us == Approx(truth.io_overhead_us).epsilon(1e-6));
  CHECK(m.latency_us == Approx(truth.latency_us).epsilon(1e-6));
  CHECK(m.stream_gbps == Approx(truth.stream_gbps).epsilon(1e-6));
}

TEST_CASE("fit with noise: coefficients close, held-out error small", "[calibrate][fit]") {
  const SsdDirectionModel truth{3.2, 4.0, 20.0, 1.8};
  const auto pts = synthetic(truth, 2.0, 7);
  const auto rep = fit_with_holdout(pts, 5);
  CHECK(rep.heldout_points == static_cast<int>(pts.size() / 5));
  CHECK(rep.fit_points + rep.heldout_points == static_cast<int>(pts.size()));
  CHECK(rep.model.peak_gbps == Approx(truth.peak_gbps).epsilon(0.05));
  CHECK(rep.model.io_overhead_us == Approx(truth.io_overhead_us).epsilon(0.05));
  CHECK(rep.model.latency_us == Approx(truth.latency_us).epsilon(0.05));
  CHECK(rep.heldout_error_pct < 3.0);
  CHECK(rep.fit_error_pct < 3.0);
}

TEST_CASE("fit keeps coefficients non-negative when the data has no such term", "[calibrate][fit]") {
  // No per-request stream term and no overhead: the unconstrained fit of noisy data would give
  // small negative values; the constrained one sets them to 0.
  const SsdDirectionModel truth{2.0, 0.0, 100.0, 0.0};
  const auto m = fit_direction(synthetic(truth, 1.0, 3));
  CHECK(m.io_overhead_us >= 0);
  CHECK(m.latency_us >= 0);
  CHECK(m.stream_gbps >= 0);
  CHECK(m.peak_gbps == Approx(2.0).epsilon(0.05));
  CHECK(m.latency_us == Approx(100.0).epsilon(0.05));
}

TEST_CASE("fit refuses too few points", "[calibrate][fit]") {
  std::vector<FitPoint> pts{{4096, 1, 0.1}, {8192, 1, 0.2}, {4096, 2, 0.2}};
  CHECK_THROWS_AS(fit_direction(pts), tiersim::ModelError);
}
}  // namespace calibrate_fit_test

namespace calibrate_fit_test {

namespace {

// Mixed points of a drive with known pure models and interference: each direction's share of the
// mixed bandwidth and the model's read latency, at KV block sizes, several depths and mixes.
std::vector<MixedFitPoint> synthetic_mixed(const tiersim::SsdModel& truth, double noise_pct,
                                           unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> noise(0.0, noise_pct / 100.0);
  std::vector<MixedFitPoint> pts;
  for (double f : {0.3, 0.5, 0.7, 0.9}) {
    for (double q : {1.0, 4.0, 16.0, 64.0}) {
      for (double b : {16384.0, 65536.0, 262144.0, 1048576.0, 2097152.0}) {
        const double mix = truth.mixed_bandwidth_gbps(b, q, f) * (1 + noise(gen));
        pts.push_back({b, q, mix * f, mix * (1 - f), truth.mixed_latency_s(b, q, f).read_s * 1e6});
      }
    }
  }
  return pts;
}

tiersim::SsdModel drive_with(double interference) {
  tiersim::SsdModel m;
  m.read = SsdDirectionModel{6.8, 1.5, 75.0, 6.8};
  m.write = SsdDirectionModel{4.1, 4.0, 15.0, 4.1};
  m.mix_interference = interference;
  return m;
}

}  // namespace

TEST_CASE("mixed fit recovers the read/write interference from synthetic points",
          "[calibrate][fit]") {
  for (const double x : {0.0, 0.35, 1.2, -0.2}) {
    CAPTURE(x);
    const tiersim::SsdModel truth = drive_with(x);
    // The pure models are given; the interference the fit starts from must not matter.
    const MixedFitReport exact = fit_mix_interference(drive_with(5.0), synthetic_mixed(truth, 0, 1));
    CHECK(exact.interference == Approx(x).margin(1e-9));
    CHECK(exact.points == 80);
    CHECK(exact.fit_error_pct == Approx(0).margin(1e-9));
    CHECK(exact.read_latency_error_pct == Approx(0).margin(1e-9));
    const MixedFitReport noisy = fit_mix_interference(drive_with(0.0), synthetic_mixed(truth, 3, 2));
    CHECK(noisy.interference == Approx(x).margin(0.05));
    CHECK(noisy.fit_error_pct < 5);
  }
}

TEST_CASE("mixed fit needs points with both directions", "[calibrate][fit]") {
  std::vector<MixedFitPoint> pure{{65536, 8, 3.0, 0.0, 100}, {65536, 8, 0.0, 2.0, 0}};
  CHECK_THROWS_AS(fit_mix_interference(drive_with(0), pure), tiersim::ModelError);
}

}  // namespace calibrate_fit_test
