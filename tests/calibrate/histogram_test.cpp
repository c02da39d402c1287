#include <catch2/catch.hpp>
#include <random>

#include "calibrate/histogram.hpp"

namespace calibrate_histogram_test {

using tiersim::calibrate::LatencyHistogram;

TEST_CASE("histogram percentiles of a uniform distribution", "[calibrate][histogram]") {
  LatencyHistogram h;
  for (std::uint64_t v = 1; v <= 100000; ++v) h.record_ns(v * 10);  // 10 ns .. 1 ms
  CHECK(h.count() == 100000);
  CHECK(h.percentile_ns(50) == Approx(500000).epsilon(0.01));
  CHECK(h.percentile_ns(90) == Approx(900000).epsilon(0.01));
  CHECK(h.percentile_ns(99) == Approx(990000).epsilon(0.01));
  CHECK(h.percentile_ns(99.9) == Approx(999000).epsilon(0.01));
  CHECK(h.percentile_ns(100) == 1000000.0);
  CHECK(h.min_ns() == 10.0);
  CHECK(h.mean_ns() == Approx(500005).epsilon(1e-9));
}

TEST_CASE("histogram: small values are exact, merge adds, empty is zero", "[calibrate][histogram]") {
  LatencyHistogram a, b;
  CHECK(a.percentile_ns(50) == 0.0);
  for (int i = 0; i < 10; ++i) a.record_ns(7);
  for (int i = 0; i < 90; ++i) b.record_ns(3'000'000'000ull);  // 3 s
  a.merge(b);
  CHECK(a.count() == 100);
  CHECK(a.percentile_ns(10) == 7.0);
  CHECK(a.percentile_ns(50) == Approx(3e9).epsilon(0.01));
  CHECK(a.max_ns() == 3e9);
  a.clear();
  CHECK(a.count() == 0);
}

TEST_CASE("histogram matches exact percentiles of a heavy-tailed sample within bucket width",
          "[calibrate][histogram]") {
  std::mt19937_64 gen(42);
  std::lognormal_distribution<double> dist(11.0, 1.0);  // ~60 us median
  std::vector<std::uint64_t> v;
  LatencyHistogram h;
  for (int i = 0; i < 200000; ++i) {
    const auto x = static_cast<std::uint64_t>(dist(gen));
    v.push_back(x);
    h.record_ns(x);
  }
  std::sort(v.begin(), v.end());
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    const auto exact = static_cast<double>(v[static_cast<std::size_t>(std::ceil(p / 100 * static_cast<double>(v.size()))) - 1]);
    CHECK(h.percentile_ns(p) == Approx(exact).epsilon(0.01));
  }
}
}  // namespace calibrate_histogram_test
