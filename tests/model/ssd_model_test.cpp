#include <catch2/catch.hpp>

#include "model/errors.hpp"
#include "model/hardware.hpp"
#include "model/ssd_model.hpp"

namespace model_ssd_model_test {

using tiersim::SsdDirectionModel;

TEST_CASE("ssd model: bandwidth follows t = 1/peak + ovh/B + lat/(QB) + 1/(Q stream)", "[calibrate][ssd_model]") {
  SsdDirectionModel m{7.0, 2.0, 80.0, 3.0};
  const double b = 128 * 1024.0, q = 8;
  const double t = 1 / 7e9 + 2e-6 / b + 80e-6 / (q * b) + 1 / (q * 3e9);
  CHECK(m.bandwidth_gbps(b, q) == Approx(1 / t / 1e9).epsilon(1e-12));
  CHECK(m.latency_s(b, q) == Approx(q * b * t).epsilon(1e-12));

  SECTION("stream 0 means that term is 0") {
    SsdDirectionModel n{7.0, 2.0, 80.0, 0.0};
    const double t0 = 1 / 7e9 + 2e-6 / b + 80e-6 / (q * b);
    CHECK(n.bandwidth_gbps(b, q) == Approx(1 / t0 / 1e9).epsilon(1e-12));
  }
  SECTION("deep queues and big blocks approach peak") {
    CHECK(m.bandwidth_gbps(1 << 30, 1e6) == Approx(7.0).epsilon(1e-3));
  }
  SECTION("QD1 4 KiB latency is the sum of the terms (Little's law)") {
    CHECK(m.latency_s(4096, 1) == Approx(4096 / 7e9 + 2e-6 + 80e-6 + 4096 / 3e9).epsilon(1e-12));
  }
}

TEST_CASE("ssd model from datasheet reproduces IOPS, QD1 latency and peak", "[calibrate][ssd_model]") {
  tiersim::NvmeSpec spec;
  spec.name = "test drive";
  spec.read_gbps = 7.0;
  spec.write_gbps = 4.0;
  spec.rand_read_kiops = 1000;
  spec.rand_write_kiops = 200;
  spec.read_latency_us = 70;
  spec.write_latency_us = 15;
  const auto m = tiersim::ssd_model_from_datasheet(spec);
  CHECK(m.name == "test drive");
  CHECK(m.read.peak_gbps == 7.0);
  CHECK(m.write.peak_gbps == 4.0);
  CHECK(m.read.io_overhead_us == Approx((1 / 1e6 - 4096 / 7e9) * 1e6));
  // At a very deep queue 4 KiB random reads reach the datasheet IOPS.
  CHECK(m.read.bandwidth_gbps(4096, 1e7) * 1e9 / 4096 == Approx(1000e3).epsilon(1e-3));
  CHECK(m.write.bandwidth_gbps(4096, 1e7) * 1e9 / 4096 == Approx(200e3).epsilon(1e-3));
  // QD1 4 KiB latency matches the datasheet.
  CHECK(m.read.latency_s(4096, 1) * 1e6 == Approx(70).epsilon(1e-9));
  CHECK(m.write.latency_s(4096, 1) * 1e6 == Approx(15).epsilon(1e-9));
  CHECK(m.read.latency_us == Approx(70 - 2 * 4096 / 7e9 * 1e6 - m.read.io_overhead_us));
  CHECK(m.read.stream_gbps == 7.0);

  SECTION("IOPS above what the peak allows clamps the overhead at 0") {
    spec.rand_read_kiops = 5000;  // 5M x 4 KiB = 20 GB/s > 7 GB/s
    CHECK(tiersim::ssd_model_from_datasheet(spec).read.io_overhead_us == 0.0);
  }
  SECTION("a drive without bandwidth numbers is a model error") {
    spec.write_gbps = 0;
    CHECK_THROWS_AS(tiersim::ssd_model_from_datasheet(spec), tiersim::ModelError);
  }
}
}  // namespace model_ssd_model_test
