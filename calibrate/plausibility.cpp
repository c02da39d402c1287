#include "calibrate/plausibility.hpp"

#include <algorithm>
#include <cstdio>
#include "common/format.hpp"

namespace tiersim::calibrate {

using format::fixed;

std::vector<std::string> cache_warnings(const std::vector<store::CalibrationPoint>& points,
                                        const DeviceProfileFit& fit,
                                        const PlausibilityLimits& limits) {
  std::vector<std::string> out;
  double max_read_gbps = 0, max_write_gbps = 0;
  const store::CalibrationPoint* fastest = nullptr;
  for (const auto& p : points) {
    // A mixed point's rows are one direction's share of the drive: no direction's best.
    if (p.target_count != 1 || p.is_mixed()) continue;
    double& best = p.is_read() ? max_read_gbps : max_write_gbps;
    best = std::max(best, p.bandwidth_gbps);
    if (!fastest || p.bandwidth_gbps > fastest->bandwidth_gbps) fastest = &p;
  }

  if (max_read_gbps > 0 && max_write_gbps > limits.max_write_over_read * max_read_gbps) {
    out.push_back(
        "writes measured " + fixed(max_write_gbps / max_read_gbps, 2) + "x faster than reads (" +
        fixed(max_write_gbps, 3) + " vs " + fixed(max_read_gbps, 3) +
        " GB/s at best; a drive writes " +
        "at most about as fast as it reads): a write-back cache (host or hypervisor) is likely " +
        "absorbing the writes");
  }

  // Held-out points are the honest error; without any, the error on the fitted points stands in.
  const bool held = fit.heldout_points > 0;
  const double read_err = held ? fit.read_heldout_error_pct : fit.read_fit_error_pct;
  const double write_err = held ? fit.write_heldout_error_pct : fit.write_fit_error_pct;
  for (const auto& [dir, err] : {std::pair{"read", read_err}, std::pair{"write", write_err}}) {
    if (err > limits.max_heldout_error_pct) {
      out.push_back(std::string("the device model misses the ") + dir + " points by " +
                    fixed(err, 1) + "% " + (held ? "(held out)" : "(fitted; none held out)") +
                    ", more than " + fixed(limits.max_heldout_error_pct, 0) +
                    "%: the measurements do not behave like one " +
                    "drive's queue (a cache, throttling or a noisy neighbour)");
    }
  }

  if (limits.interface_gbps > 0 && fastest && fastest->bandwidth_gbps > limits.interface_gbps) {
    out.push_back(fastest->rw + " at " + std::to_string(fastest->block_bytes) + " bytes x QD " +
                  std::to_string(fastest->queue_depth) + " measured " +
                  fixed(fastest->bandwidth_gbps, 3) + " GB/s, above the " +
                  fixed(limits.interface_gbps, 3) + " GB/s the drive's interface carries (" +
                  limits.interface_source + "): the data came from a cache, not over the link");
  }
  return out;
}

}  // namespace tiersim::calibrate
