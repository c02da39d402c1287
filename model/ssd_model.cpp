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
