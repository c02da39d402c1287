#include "config/economics_sources.hpp"

#include <string>

#include "config/options.hpp"
#include "model/cost.hpp"

namespace tiersim::config {

namespace {

// Scenario keys that are not catalog fields carry no provenance entry: tell a default from a
// value the scenario gave by comparing with the option table's default.
std::string plain_source(const Scenario& s, const std::string& key, double value) {
  if (auto source = s.provenance.source(key)) return *source;
  const Option* o = find_option(key, s.kind);
  if (o && !o->default_text.empty()) {
    try {
      if (std::stod(o->default_text) == value) return "default";
    } catch (const std::exception&) {
    }
  }
  return "scenario";
}

nlohmann::json quote_json(const PriceQuote& q, const std::string& component) {
  if (!q.known()) return {{"component", component}, {"usd", nullptr}, {"source", "missing"}};
  return {{"component", component}, {"usd", q.usd}, {"date", q.date}, {"source", q.source}};
}

}  // namespace

nlohmann::json economics_sources(const Scenario& s) {
  const Hardware& hw = s.hardware;
  nlohmann::json j;
  nlohmann::json prices = nlohmann::json::object();
  const ComponentPrices& p = s.economics.prices;
  if (hw.gpu_count > 0) prices["gpu"] = quote_json(p.gpu, hw.gpu.name);
  prices["platform"] = quote_json(p.platform, hw.host.name);
  if (hw.host.dram_gb > 0) prices["dram_per_gb"] = quote_json(p.dram_per_gb, "DRAM per GB");
  if (hw.nvme.count > 0) prices["drive"] = quote_json(p.drive, hw.nvme.drive.name);
  if (!s.economics.cloud.name.empty())
    prices["cloud_instance_per_hour"] = quote_json(s.economics.cloud.hourly, s.economics.cloud.name);
  j["prices"] = prices;

  nlohmann::json power = nlohmann::json::object();
  auto add = [&](nlohmann::json& into, const std::string& key, double value, const char* unit) {
    into[key] = {{"value", value}, {"unit", unit}, {"source", plain_source(s, key, value)}};
  };
  add(power, "hardware.gpu.count", hw.gpu_count, "GPUs");
  add(power, "hardware.gpu.tdp_w", hw.gpu.tdp_w, "W");
  add(power, "hardware.gpu.idle_w", hw.gpu.idle_w, "W");
  add(power, "hardware.host.sockets", hw.host.sockets, "sockets");
  add(power, "hardware.host.cpu_tdp_w", hw.host.cpu_tdp_w, "W");
  add(power, "hardware.host.cpu_idle_w", hw.host.cpu_idle_w, "W");
  add(power, "hardware.host.dram_gb", hw.host.dram_gb, "GB");
  add(power, "hardware.host.dram_gbps", hw.host.dram_gbps, "GB/s");
  add(power, "hardware.host.dram_w_per_gb_active", hw.host.dram_w_per_gb_active, "W/GB");
  add(power, "hardware.host.dram_w_per_gb_idle", hw.host.dram_w_per_gb_idle, "W/GB");
  add(power, "hardware.host.platform_w", hw.host.platform_w, "W");
  // Only hosts that model their fans and PSUs apart (their inputs are otherwise unused).
  if (hw.host.fan_max_w > 0) {
    add(power, "hardware.host.fan_max_w", hw.host.fan_max_w, "W");
    add(power, "hardware.host.fan_min_speed", hw.host.fan_min_speed, "");
    add(power, "hardware.host.cooling_design_w", hw.host.cooling_design_w, "W");
  }
  if (hw.host.psu_count > 0) {
    add(power, "hardware.host.psu_count", hw.host.psu_count, "PSUs");
    add(power, "hardware.host.psu_standby", hw.host.psu_standby, "PSUs");
    add(power, "hardware.host.psu_rating_w", hw.host.psu_rating_w, "W");
  }
  if (hw.nvme.count > 0) {
    add(power, "hardware.nvme.count", hw.nvme.count, "drives");
    add(power, "hardware.nvme.active_w", hw.nvme.drive.active_w, "W");
    // Only where given (otherwise active_w stands for them).
    if (hw.nvme.drive.active_read_w > 0)
      add(power, "hardware.nvme.active_read_w", hw.nvme.drive.active_read_w, "W");
    if (hw.nvme.drive.active_write_w > 0)
      add(power, "hardware.nvme.active_write_w", hw.nvme.drive.active_write_w, "W");
    add(power, "hardware.nvme.idle_w", hw.nvme.drive.idle_w, "W");
  }
  j["power"] = power;

  nlohmann::json econ = nlohmann::json::object();
  add(econ, "economics.usd_per_kwh", s.economics.usd_per_kwh, "USD/kWh");
  add(econ, "economics.pue", s.economics.pue, "");
  add(econ, "economics.amortization_years", s.economics.amortization_years, "years");
  add(econ, "economics.duty_cycle", s.economics.duty_cycle, "");
  j["economics"] = econ;
  return j;
}

}  // namespace tiersim::config
