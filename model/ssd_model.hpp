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

// Reads and writes served by one drive at once (fio's randrw with rwmixread; the KV tier's
// write-through stores while prefix loads read).
//
// Shared time: each direction's bytes occupy the drive for the time they take alone at that
// operating point, so a stream whose bytes are a fraction f reads costs, per byte,
//
//   t_mix(f) = (f t_read + (1 - f) t_write) (1 + 4 f (1 - f) x),   at least f t_read, (1 - f) t_write
//
//  - the harmonic mix (x = 0): reads and writes take turns on the same flash dies and controller;
//    its bandwidth lies between the pure rates and rises with f when reads are the faster
//    direction;
//  - x, the interference at an even mix: the extra busy time, relative to the shared time, when
//    reads and writes are interleaved request by request. Reads wait behind program and erase
//    operations on the die they need, and garbage collection runs under the writes, which is why
//    steady-state mixed-workload sweeps of datacenter SSDs dip below both pure rates near an even
//    mix (the "bathtub curve" of Tom's Hardware's enterprise SSD reviews, which sweep 100% to 0%
//    read). x is 0 for a datasheet drive (datasheets in the catalog give no mixed figure) and is
//    fitted by `tiersim calibrate --rwmix-read` (calibrate/fit.hpp fit_mix_interference);
//  - the bounds: the two directions cannot overlap better than completely (a full-duplex link and
//    separate read and write paths), so each still needs at least its own share of the time.
// The 4 f (1 - f) shape is the simplest that vanishes for a pure stream and peaks at an even mix;
// it is an assumption of this model, which the calibration's held-out error checks.
double mixed_seconds_per_byte(double read_fraction, double read_s_per_byte,
                              double write_s_per_byte, double interference);

struct SsdModel {
  std::string name;
  SsdDirectionModel read;
  SsdDirectionModel write;
  // Interference of reads and writes at an even mix (mixed_seconds_per_byte's x), dimensionless;
  // 0 = shared time only.
  double mix_interference = 0;

  // Bandwidth in 1e9 B/s, both directions together, of a stream of `block_bytes` requests with
  // `queue_depth` outstanding of which a fraction `read_fraction` (by bytes and, at one block size,
  // by requests, as fio's rwmixread) are reads. Each direction costs what it costs at the drive's
  // whole depth: the drive sees queue_depth requests, whichever their direction.
  double mixed_bandwidth_gbps(double block_bytes, double queue_depth, double read_fraction) const;

  // Mean completion latency of the reads and of the writes in that stream, seconds. A write is
  // acknowledged once it is in the drive's power-loss-protected DRAM buffer, so it takes what it
  // takes alone at its share of the depth (at most the mean of the whole stream); the reads wait
  // for the flash the writes keep busy, and take the rest of Little's law for the whole queue:
  // queue_depth = read rate x read latency + write rate x write latency. A published fio randrw run
  // at 50/50 and 8 KiB on an unnamed SSD shows that asymmetry: reads 496 us and writes 54 us mean
  // completion latency at 57.5k and 57.6k IOPS, which by Little's law is 57.5k x 496 us + 57.6k x
  // 54 us = 31.6 requests in flight, most of them reads (GitHub gist
  // brunsgaard/83cff3e8b2a7d46275c4cd49c43331ef, "Checking IOPS with fio"). One run of one drive:
  // `tiersim calibrate --rwmix-read` reports how far this split is from a measured drive
  // (read_latency_error_pct); a drive without a power-loss-protected buffer (a virtual disk) does
  // not acknowledge writes early, and the split misses it.
  struct MixedLatency {
    double read_s = 0;
    double write_s = 0;
  };
  MixedLatency mixed_latency_s(double block_bytes, double queue_depth,
                               double read_fraction) const;
};

struct NvmeSpec;
// Builds the device model from datasheet numbers (sequential GB/s, 4 KiB IOPS, QD1 latency).
SsdModel ssd_model_from_datasheet(const NvmeSpec& spec);

}  // namespace tiersim
