#pragma once
// The SSD device model shared by the datasheet catalog, the calibration fit and the simulator.
//
// Time per byte moved with block size B (bytes) and Q requests outstanding against one drive:
//
//   t(B, Q) = 1/peak + io_overhead/B + latency/(Q*B) + 1/(Q*stream)
//
//  - 1/peak:         the drive's internal bandwidth limit (flash channels, link);
//  - io_overhead/B:  a serial per-request cost (controller, firmware), which caps IOPS;
//  - latency/(Q*B):  the fixed access latency of one request, hidden by queue depth (Little's law);
//  - 1/(Q*stream):   the transfer time of one request's bytes, likewise hidden by queue depth.
//
// Bandwidth is 1/t. The form is linear in its four coefficients, so calibration fits it by least
// squares on measured points, and a datasheet (sequential GB/s, random IOPS, QD1 latency) gives it
// directly.
#include <string>

namespace tiersim {

struct SsdDirectionModel {
  double peak_gbps = 0;         // asymptotic bandwidth, 1e9 B/s
  double io_overhead_us = 0;    // serial cost per request, microseconds
  double latency_us = 0;        // access latency of one request, microseconds
  double stream_gbps = 0;       // per-request transfer rate; 0 = infinite

  // Bandwidth in 1e9 B/s for block size `block_bytes` with `queue_depth` requests outstanding.
  double bandwidth_gbps(double block_bytes, double queue_depth) const;
  // Mean completion latency of one request in seconds at that operating point (Little's law).
  double latency_s(double block_bytes, double queue_depth) const;
};

struct SsdModel {
  std::string name;
  SsdDirectionModel read;
  SsdDirectionModel write;
};

struct NvmeSpec;
// Builds the device model from datasheet numbers (sequential GB/s, 4 KiB IOPS, QD1 latency).
SsdModel ssd_model_from_datasheet(const NvmeSpec& spec);

}  // namespace tiersim
