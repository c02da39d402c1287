#pragma once
// The checkpoint workload's own metrics (sim/metrics.hpp: the handle type, and the metrics several
// workloads share). sim/metrics.cpp lists them in `tiersim schema --metrics`.
#include "sim/metrics.hpp"

namespace tiersim::sim::metric {
inline constexpr MetricDecl kNvmeDirectWriteGbpsModel{
    "nvme_direct_write_gbps_model", "GB/s",
    "write bandwidth of the node's NVMe array the device model predicts for O_DIRECT writes",
    "checkpoint"};
inline constexpr MetricDecl kNvmeBufferedWriteGbpsModel{
    "nvme_buffered_write_gbps_model", "GB/s",
    "write bandwidth of the node's NVMe array for buffered (page cache) writes", "checkpoint"};

}  // namespace tiersim::sim::metric
