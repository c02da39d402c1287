#pragma once
// Does a calibrated profile describe a drive, or a cache in front of one? A virtual disk whose host
// caches writes (write-back) acknowledges writes from host memory: writes then measure faster than
// reads, bandwidth can exceed what the drive's link could carry, and the device model of
// model/ssd_model.hpp (queueing at one drive) fits the points poorly. The profile still gets
// written, with the warnings in it, since such a profile predicts this machine but not a real
// drive.
#include <string>
#include <vector>

#include "store/calibration_points.hpp"
#include "config/device_profile.hpp"

namespace tiersim::calibrate {

struct PlausibilityLimits {
  // NVMe drives write at most about as fast as they read (scenarios/catalog/drives.yaml and its
  // sources: Micron 9400 7.0 / 7.0 GB/s, Kioxia CM6 6.9 / 4.2, Samsung PM1733 6.4-7.0 / 3.8);
  // writes half as fast again as reads come from something in front of the flash.
  double max_write_over_read = 1.5;
  // Held-out error of the fit (calibrate/fit.hpp) above which the points are not one drive's
  // queueing: the four-term model leaves a quarter of the bandwidth unexplained on points it did
  // not see. (Measurement scatter on a noisy virtual disk alone reaches 10-30%,
  // calibrate/README.md.)
  double max_heldout_error_pct = 25;
  // Per-drive interface bound in GB/s (PCIe generation x lanes from sysfs, or --interface-gbps);
  // 0: unknown, not checked.
  double interface_gbps = 0;
  std::string interface_source;  // how the bound was found, for the message
};

// The warnings for the single-drive points of a calibration (points measured with several targets
// at once are sums and are not checked) and the fit of its profile; empty when it looks like a
// drive.
std::vector<std::string> cache_warnings(const std::vector<store::CalibrationPoint>& points,
                                        const DeviceProfileFit& fit,
                                        const PlausibilityLimits& limits);

}  // namespace tiersim::calibrate
