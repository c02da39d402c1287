#pragma once
// Device profiles: the SSD device model fitted by `tiersim calibrate`, stored as YAML so a
// scenario can use it in place of catalog numbers (`hardware.nvme: {profile: device.yaml}`).
//
//   # tiersim device profile (written by tiersim calibrate)
//   name: <text>
//   measured: {date, host, kernel, filesystem, device, targets: [...], engine, tool_version}
//   read:  {peak_gbps, io_overhead_us, latency_us, stream_gbps}
//   write: {peak_gbps, io_overhead_us, latency_us, stream_gbps}
//   fit:   {points, heldout_points, read_fit_error_pct, read_heldout_error_pct,
//           write_fit_error_pct, write_heldout_error_pct}
//   mixed: {interference, points, fit_error_pct, read_latency_error_pct}
//                             # only when the calibration measured mixed reads and writes
//   warnings: [<text>, ...]   # only when calibrate/plausibility.hpp doubted the measurements
//   catalog_drive: <name>     # optional: the catalog drive (tiersim catalog drives) measured
//
// `name`, `read` and `write` are required (peak_gbps > 0; the other coefficients default to 0);
// `measured`, `fit` and `warnings` are provenance and optional: a hand-written profile is valid.
// `catalog_drive` says which product the measured drive is: a scenario using the profile without
// `hardware.nvme.model` takes that drive's capacity, power and price from the catalog (the
// profile replaces only its performance model), so `run` can price the configuration.
#include <string>
#include <vector>

#include "model/files.hpp"
#include "model/ssd_model.hpp"

namespace tiersim::config {
class YNode;  // config/yaml_reader.hpp
}

namespace tiersim {

struct DeviceProfileProvenance {
  std::string date;          // ISO 8601, UTC
  std::string host;
  std::string kernel;
  std::string filesystem;
  std::string device;
  std::vector<std::string> targets;
  std::string engine;        // io_uring or sync
  std::string tool_version;
};

struct DeviceProfileFit {
  int points = 0;            // points the coefficients were fitted on
  int heldout_points = 0;    // points kept out of the fit to measure its prediction error
  double read_fit_error_pct = 0;
  double read_heldout_error_pct = 0;
  double write_fit_error_pct = 0;
  double write_heldout_error_pct = 0;
  // Mixed reads and writes (`tiersim calibrate --rwmix-read`): the points the interference
  // (SsdModel::mix_interference) was fitted on, 0 = none measured; the mean error of the mixed
  // bandwidth and of the reads' mean latency (SsdModel::mixed_latency_s) over them, percent.
  int mixed_points = 0;
  double mixed_fit_error_pct = 0;
  double mixed_read_latency_error_pct = 0;
};

struct DeviceProfile {
  SsdModel model;            // model.name is the profile's `name`
  DeviceProfileProvenance measured;
  DeviceProfileFit fit;
  // Why the measurements may describe a cache rather than a drive (write faster than read, poor
  // fit, bandwidth above the link); kept with the profile so whoever uses it sees them.
  std::vector<std::string> warnings;
  std::string catalog_drive;   // "" = the profile names no catalog drive
  int catalog_drive_line = 0;  // its line in the file, for errors about the name
};

// Reads the whole profile. Throws ConfigError naming file, line and key on a missing file, bad
// YAML, a missing or unknown key, or a value out of range.
DeviceProfile read_device_profile(const std::string& path);
// The same from the already parsed text of the file at `path` (the fuzz target parses each input
// once for every reader).
DeviceProfile read_device_profile(const config::YNode& root, const std::string& path);

// Reads only the device model, which is what a scenario needs.
SsdModel load_device_profile(const std::string& path);

// Writes `profile` to `path` under the one rule for outputs (model/files.hpp: a temporary file
// and rename, so a reader never sees half a profile; a file tiersim did not write is replaced only
// with `output.force`). Throws IoError when the file may not be replaced or cannot be written.
void write_device_profile(const std::string& path, const DeviceProfile& profile,
                          const OutputOptions& output = {});
// What write_device_profile checks first, and that the folder of `path` exists: `calibrate --out`
// calls it before measuring. Throws IoError.
void check_device_profile_output(const std::string& path, const OutputOptions& output = {});

}  // namespace tiersim
