// The SSD device model: evaluation and the datasheet-derived parameters. Pure arithmetic, no I/O.
#include "model/ssd_model.hpp"

#include <algorithm>
#include <limits>

#include "model/errors.hpp"
#include "model/hardware.hpp"
#include "model/units.hpp"

namespace tiersim {

namespace {

// The 4 KiB block that datasheets quote random IOPS and QD1 latency for.
constexpr double kDatasheetBlockBytes = 4096.0;

// Seconds per byte at (B, Q): exactly the formula in the header. A zero stream rate means a single
// request's bytes move infinitely fast, so that term vanishes.
double seconds_per_byte(const SsdDirectionModel& m, double block_bytes, double queue_depth) {
  double t = 1.0 / units::gbps_to_bytes_per_s(m.peak_gbps);
  t += m.io_overhead_us * units::kMicro / block_bytes;
  t += m.latency_us * units::kMicro / (queue_depth * block_bytes);
  if (m.stream_gbps > 0) t += 1.0 / (queue_depth * units::gbps_to_bytes_per_s(m.stream_gbps));
  return t;
}

SsdDirectionModel direction_from_datasheet(const std::string& drive, const char* direction,
                                           double seq_gbps, double rand_kiops,
                                           double qd1_latency_us) {
  if (!(seq_gbps > 0)) {
    throw ModelError("drive '" + drive + "': " + direction +
                     " bandwidth must be > 0 to build its device model");
  }
  SsdDirectionModel m;
  m.peak_gbps = seq_gbps;
  const double transfer_4k_s = kDatasheetBlockBytes / units::gbps_to_bytes_per_s(seq_gbps);
  // At high queue depth only 1/peak + io_overhead/B remain, so 4 KiB blocks reach the datasheet's
  // random IOPS exactly when io_overhead = 1/IOPS - 4096/peak. No IOPS figure: no overhead term.
  if (rand_kiops > 0) {
    m.io_overhead_us = std::max(0.0, 1.0 / (rand_kiops * 1e3) - transfer_4k_s) / units::kMicro;
  }
  // A single request cannot move faster than the drive's internal rate, so the per-request stream
  // rate defaults to the peak rate: QD1 large-block reads then reach half of peak and QD 8 reaches
  // ~90%, which is how published QD-scaling curves of NVMe drives look; 0 (infinite) would put QD1
  // 16 MiB reads at peak, which no drive does.
  m.stream_gbps = seq_gbps;
  // Choose the access latency so the model reproduces the datasheet's QD1 4 KiB latency exactly:
  // latency_s(4096, 1) = 4096/peak + io_overhead + latency + 4096/stream.
  if (qd1_latency_us > 0) {
    const double other_us =
        (2.0 * transfer_4k_s) / units::kMicro + m.io_overhead_us;
    m.latency_us = std::max(0.0, qd1_latency_us - other_us);
  }
  return m;
}

}  // namespace

double SsdDirectionModel::bandwidth_gbps(double block_bytes, double queue_depth) const {
  if (!(peak_gbps > 0) || !(block_bytes > 0) || !(queue_depth > 0)) return 0.0;
  return 1.0 / seconds_per_byte(*this, block_bytes, queue_depth) / units::kGB;
}

double SsdDirectionModel::latency_s(double block_bytes, double queue_depth) const {
  if (!(peak_gbps > 0) || !(block_bytes > 0) || !(queue_depth > 0)) {
    return std::numeric_limits<double>::infinity();
  }
  // Little's law: Q requests of B bytes in flight at bandwidth 1/t complete every Q*B*t seconds.
  return queue_depth * block_bytes * seconds_per_byte(*this, block_bytes, queue_depth);
}

double mixed_seconds_per_byte(double read_fraction, double read_s_per_byte,
                              double write_s_per_byte, double interference) {
  const double f = std::clamp(read_fraction, 0.0, 1.0);
  const double read_share = f * read_s_per_byte;
  const double write_share = (1.0 - f) * write_s_per_byte;
  const double shared = (read_share + write_share) * (1.0 + 4.0 * f * (1.0 - f) * interference);
  return std::max({shared, read_share, write_share});
}

double SsdModel::mixed_bandwidth_gbps(double block_bytes, double queue_depth,
                                      double read_fraction) const {
  const double r = read.bandwidth_gbps(block_bytes, queue_depth);
  const double w = write.bandwidth_gbps(block_bytes, queue_depth);
  const double f = std::clamp(read_fraction, 0.0, 1.0);
  if ((f > 0 && !(r > 0)) || (f < 1 && !(w > 0))) return 0.0;
  // In 1e9 B/s throughout: the seconds per byte here are per 1e9 bytes, and the ratio is the same.
  const double t = mixed_seconds_per_byte(f, f > 0 ? 1.0 / r : 0.0, f < 1 ? 1.0 / w : 0.0,
                                          mix_interference);
  return t > 0 ? 1.0 / t : 0.0;
}

SsdModel::MixedLatency SsdModel::mixed_latency_s(double block_bytes, double queue_depth,
                                                 double read_fraction) const {
  MixedLatency l;
  const double gbps = mixed_bandwidth_gbps(block_bytes, queue_depth, read_fraction);
  if (!(gbps > 0) || !(queue_depth > 0)) {
    l.read_s = l.write_s = std::numeric_limits<double>::infinity();
    return l;
  }
  const double f = std::clamp(read_fraction, 0.0, 1.0);
  // Little's law over the whole queue: requests complete at `iops`, each in `mean_s` on average.
  const double iops = units::gbps_to_bytes_per_s(gbps) / block_bytes;
  const double mean_s = queue_depth / iops;
  if (f >= 1.0) return {mean_s, 0.0};
  if (f <= 0.0) return {0.0, mean_s};
  l.write_s = std::min(mean_s, write.latency_s(block_bytes, std::max(1.0, (1.0 - f) * queue_depth)));
  // queue_depth = f iops read_s + (1 - f) iops write_s.
  l.read_s = (queue_depth - (1.0 - f) * iops * l.write_s) / (f * iops);
  return l;
}

SsdModel ssd_model_from_datasheet(const NvmeSpec& spec) {
  SsdModel m;
  m.name = spec.name;
  m.read = direction_from_datasheet(spec.name, "read", spec.read_gbps, spec.rand_read_kiops,
                                    spec.read_latency_us);
  m.write = direction_from_datasheet(spec.name, "write", spec.write_gbps, spec.rand_write_kiops,
                                     spec.write_latency_us);
  return m;
}

}  // namespace tiersim
