#include <catch2/catch.hpp>

#include <algorithm>

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

namespace model_ssd_model_test {

// A drive whose reads are faster than its writes at KV block sizes (the datasheet shape of every
// catalog drive).
tiersim::SsdModel mixed_drive(double interference) {
  tiersim::NvmeSpec spec;
  spec.name = "mixed drive";
  spec.read_gbps = 7.0;
  spec.write_gbps = 4.0;
  spec.rand_read_kiops = 1000;
  spec.rand_write_kiops = 200;
  spec.read_latency_us = 70;
  spec.write_latency_us = 15;
  tiersim::SsdModel m = tiersim::ssd_model_from_datasheet(spec);
  m.mix_interference = interference;
  return m;
}

TEST_CASE("ssd model: mixed reads and writes share the drive's time", "[calibrate][ssd_model]") {
  const tiersim::SsdModel m = mixed_drive(0.0);
  for (const double block : {16.0 * 1024, 128.0 * 1024, 2.0 * 1024 * 1024}) {
    for (const double q : {1.0, 8.0, 64.0}) {
      const double r = m.read.bandwidth_gbps(block, q), w = m.write.bandwidth_gbps(block, q);
      CAPTURE(block, q, r, w);
      // The pure streams are the two directions alone.
      CHECK(m.mixed_bandwidth_gbps(block, q, 1.0) == Approx(r).epsilon(1e-12));
      CHECK(m.mixed_bandwidth_gbps(block, q, 0.0) == Approx(w).epsilon(1e-12));
      // Reads are the faster direction at depth (datasheet IOPS), writes at QD1 (a write is
      // acknowledged from the drive's buffer: 15 us against 70 us).
      const double toward_reads = r >= w ? 1.0 : -1.0;
      double last = w;
      for (int pct = 0; pct <= 100; pct += 10) {
        const double f = pct / 100.0;
        const double mix = m.mixed_bandwidth_gbps(block, q, f);
        CAPTURE(pct, mix);
        // Between the pure rates, monotone in the read fraction toward the faster direction...
        CHECK(mix >= std::min(r, w) * (1 - 1e-12));
        CHECK(mix <= std::max(r, w) * (1 + 1e-12));
        CHECK(toward_reads * (mix - last) >= -1e-12 * mix);
        last = mix;
        // ... and exactly the harmonic mix: each byte costs its own direction's time.
        CHECK(1.0 / mix == Approx(f / r + (1 - f) / w).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("ssd model: interference lowers an even mix below both pure rates, not a pure stream",
          "[calibrate][ssd_model]") {
  const double block = 64 * 1024.0, q = 32;
  const tiersim::SsdModel shared = mixed_drive(0.0), bathtub = mixed_drive(1.0);
  CHECK(bathtub.mixed_bandwidth_gbps(block, q, 1.0) == shared.mixed_bandwidth_gbps(block, q, 1.0));
  CHECK(bathtub.mixed_bandwidth_gbps(block, q, 0.0) == shared.mixed_bandwidth_gbps(block, q, 0.0));
  // x = 1 doubles the busy time of an even mix.
  CHECK(bathtub.mixed_bandwidth_gbps(block, q, 0.5) ==
        Approx(shared.mixed_bandwidth_gbps(block, q, 0.5) / 2).epsilon(1e-12));
  CHECK(bathtub.mixed_bandwidth_gbps(block, q, 0.5) <
        std::min(bathtub.read.bandwidth_gbps(block, q), bathtub.write.bandwidth_gbps(block, q)));
  // Negative interference (the directions overlap) cannot beat a full-duplex drive: each
  // direction still needs its own share of the time.
  const tiersim::SsdModel duplex = mixed_drive(-1.0);
  const double f = 0.5, r = duplex.read.bandwidth_gbps(block, q),
               w = duplex.write.bandwidth_gbps(block, q);
  CHECK(duplex.mixed_bandwidth_gbps(block, q, f) == Approx(1 / std::max(f / r, (1 - f) / w)));
}

TEST_CASE("ssd model: under a mix the reads wait, the writes do not, and Little's law holds",
          "[calibrate][ssd_model]") {
  const tiersim::SsdModel m = mixed_drive(0.0);
  const double block = 4096, q = 32;
  const auto pure_read = m.mixed_latency_s(block, q, 1.0);
  CHECK(pure_read.read_s == Approx(m.read.latency_s(block, q)).epsilon(1e-12));
  for (const double f : {0.3, 0.5, 0.7, 0.9}) {
    CAPTURE(f);
    const auto l = m.mixed_latency_s(block, q, f);
    const double iops = m.mixed_bandwidth_gbps(block, q, f) * 1e9 / block;
    CHECK(f * iops * l.read_s + (1 - f) * iops * l.write_s == Approx(q).epsilon(1e-9));
    CHECK(l.write_s <= l.read_s);
    // A write takes what it takes alone at its share of the depth.
    CHECK(l.write_s <= m.write.latency_s(block, std::max(1.0, (1 - f) * q)) * (1 + 1e-12));
  }
}

}  // namespace model_ssd_model_test
