#include "config/input_notes.hpp"

#include <string>

#include "common/format.hpp"

namespace tiersim::config {

namespace {

// Where the loader says a drive key came from ("catalog: <source>", "override", "default").
std::string source_of(const Scenario& s, const std::string& key) {
  return s.provenance.source(key).value_or("default");
}

// One drive's price as people read it, with where it came from (config/scenario_loader.cpp
// resolve_prices: a catalog quote keeps its date and source, an override says "override").
std::string price_text(const PriceQuote& q) {
  if (!q.known()) return "no price (cost metrics omitted)";
  const std::string from = q.source == "override" ? q.source
                                                  : "catalog prices, " + q.date + ": " + q.source;
  return format::usd(q.usd) + " per drive (" + from + ")";
}

}  // namespace

std::vector<InputNote> profile_notes(const Scenario& s, const DeviceProfile& profile) {
  std::vector<InputNote> notes;
  const NvmeArray& nvme = s.hardware.nvme;
  const std::string what = "profile '" + profile.model.name + "' (" + nvme.profile_path + ")";
  // The warnings calibrate/plausibility.hpp wrote into the profile: the measurements may describe
  // a cache, or the device model misses held-out points. The profile still predicts the machine
  // it was measured on, so the run goes on; the reader must know.
  for (const std::string& w : profile.warnings)
    notes.push_back({InputNote::Kind::kWarning, "hardware.nvme.profile",
                     "calibration of " + what + " warned: " + w});

  const std::string active = "hardware.nvme.active_w", idle = "hardware.nvme.idle_w";
  const std::string values =
      "active " + format::number(nvme.drive.active_w) + " W (" + source_of(s, active) + "), idle " +
      format::number(nvme.drive.idle_w) + " W (" + source_of(s, idle) + "), " +
      price_text(s.economics.prices.drive);
  if (!nvme.drive.name.empty()) {
    // A catalog drive stands behind the profile: the scenario's hardware.nvme.model, or the
    // profile's catalog_drive when the scenario names none (the loader's drive_from_profile). The
    // resolved YAML names the drive either way, so tell them apart by the profile's own entry.
    const std::string named_by = profile.catalog_drive == nvme.drive.name
                                     ? "the profile's catalog_drive"
                                     : "hardware.nvme.model";
    notes.push_back({InputNote::Kind::kSource, "hardware.nvme",
                     what + " measures the drives' performance only; their price and power come "
                            "from catalog drive '" +
                         nvme.drive.name + "' (named by " + named_by + "): " + values});
    return notes;
  }
  // No drive named: only what the scenario set itself, else nothing. Energy then counts the drives
  // at 0 W, which no value in the output shows.
  const bool unpowered = source_of(s, active) == "default" || source_of(s, idle) == "default";
  const bool unpriced = !s.economics.prices.drive.known();
  std::string message = what +
                        " measures the drives' performance only and names no catalog drive, nor "
                        "does the scenario (hardware.nvme.model): " +
                        values;
  if (unpowered || unpriced)
    message += "; name the drive (hardware.nvme.model, or catalog_drive in the profile) or set " +
               std::string(unpowered ? "hardware.nvme.active_w and idle_w" : "") +
               (unpowered && unpriced ? " and " : "") +
               (unpriced ? "economics.prices.drive_usd" : "");
  notes.push_back({unpowered || unpriced ? InputNote::Kind::kWarning : InputNote::Kind::kSource,
                   "hardware.nvme", message});
  return notes;
}

}  // namespace tiersim::config
