#pragma once
// The io workload's own metrics (sim/metrics.hpp: the handle type, and the metrics several
// workloads share). sim/metrics.cpp lists them in `tiersim schema --metrics`.
#include "sim/metrics.hpp"

namespace tiersim::sim::metric {

// Raw I/O benchmark (ds_io).
inline constexpr MetricDecl kReadGbps{
    "read_gbps", "GB/s", "bytes / total_s for a read transfer (1e9 bytes per GB)", "io"};
inline constexpr MetricDecl kReadGibps{
    "read_gibps", "GiB/s", "read_gbps in 2^30 bytes per second, as DeepSpeed's ds_io prints it",
    "io"};
inline constexpr MetricDecl kWriteGibps{
    "write_gibps", "GiB/s", "write_gbps in 2^30 bytes per second, as DeepSpeed's ds_io prints it",
    "io"};
inline constexpr MetricDecl kArrayGbpsModel{
    "array_gbps_model", "GB/s",
    "bandwidth of the NVMe array the device model predicts for this transfer's direction", "io"};

}  // namespace tiersim::sim::metric
