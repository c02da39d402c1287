#pragma once
// The notes (InputNote, model/scenario.hpp) the loader attaches to a scenario whose drives use a
// calibrated device profile (`hardware.nvme.profile`): what the profile's calibration warned
// about, and where the drives' price and power came from. A profile measures performance only, so
// those come from a catalog drive (the scenario's hardware.nvme.model, or the profile's
// catalog_drive), from the scenario's own keys, or from nowhere (0 W, no price); without these
// notes `run`, `compare` and the report used them without a word.
#include <vector>

#include "config/device_profile.hpp"
#include "model/scenario.hpp"

namespace tiersim::config {

// The notes for `s`, whose drives use `profile` (read from s.hardware.nvme.profile_path): one
// warning per entry of the profile's `warnings:`, then one note on the drives' power and price.
// Reads only the resolved scenario (its values, provenance and price quotes) and the profile, so a
// stored run's resolved YAML, loaded again, gives the same notes.
std::vector<InputNote> profile_notes(const Scenario& s, const DeviceProfile& profile);

}  // namespace tiersim::config
