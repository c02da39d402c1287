#include "model/cost.hpp"

#include <cmath>

#include "common/format.hpp"
#include "model/errors.hpp"
#include "model/units.hpp"

namespace tiersim {

namespace {

struct PricedPart {
  const PriceQuote* quote;
  const char* what;         // "GPU 'L40S'"-style prefix
  std::string name;
  const char* key;          // economics.prices.<key>
  const char* catalog_list; // where in prices.yaml
};

std::vector<PricedPart> parts_in_use(const Hardware& hw, const ComponentPrices& p) {
  std::vector<PricedPart> v;
  if (hw.gpu_count > 0) v.push_back({&p.gpu, "GPU", hw.gpu.name, "gpu_usd", "prices.gpus"});
  v.push_back({&p.platform, "platform (host)", hw.host.name, "platform_usd", "prices.platforms"});
  if (hw.host.dram_gb > 0)
    v.push_back({&p.dram_per_gb, "DRAM", "per GB", "dram_usd_per_gb", "prices.dram_usd_per_gb"});
  if (hw.nvme.count > 0 && hw.nvme.drive.name.empty())
    // A calibrated profile alone names no product (config/device_profile.hpp, catalog_drive).
    v.push_back({&p.drive, "NVMe drive", "profile " + hw.nvme.model.name + ", no catalog drive",
                 "drive_usd", "prices.drives"});
  else if (hw.nvme.count > 0)
    v.push_back({&p.drive, "NVMe drive", hw.nvme.drive.name, "drive_usd", "prices.drives"});
  return v;
}

std::string describe_missing(const PricedPart& part) {
  return std::string("no price for ") + part.what + " '" + part.name +
         "': set economics.prices." + part.key + " in the scenario (or --set economics.prices." +
         part.key + "=USD), or add an entry to " + part.catalog_list +
         " in scenarios/catalog/prices.yaml";
}

void require(bool ok, const char* message) {
  if (!ok) throw ModelError(message);
}

// The message is written only when the check fails (these run for every simulated point).
template <class Message>
void require(bool ok, const Message& message) {
  if (!ok) throw ModelError(message());
}

}  // namespace

std::vector<std::string> missing_prices(const Hardware& hw, const ComponentPrices& prices) {
  std::vector<std::string> out;
  for (const auto& part : parts_in_use(hw, prices))
    if (!part.quote->known()) out.push_back(describe_missing(part));
  return out;
}

void check_economics(const Economics& e) {
  require(std::isfinite(e.amortization_years) && e.amortization_years > 0, [&] {
    return "economics.amortization_years must be > 0 (got " + format::exact(e.amortization_years) +
           ")";
  });
  require(std::isfinite(e.duty_cycle) && e.duty_cycle > 0 && e.duty_cycle <= 1, [&] {
    return "economics.duty_cycle must be in (0, 1] (got " + format::exact(e.duty_cycle) + ")";
  });
  require(std::isfinite(e.pue) && e.pue >= 1,
          [&] { return "economics.pue must be >= 1 (got " + format::exact(e.pue) + ")"; });
  require(std::isfinite(e.usd_per_kwh) && e.usd_per_kwh >= 0, [&] {
    return "economics.usd_per_kwh must be >= 0 (got " + format::exact(e.usd_per_kwh) + ")";
  });
  // Prices need no check here: a negative usd is the "unknown" marker (PriceQuote::known), and
  // the loader rejects negative prices in prices.yaml and in economics.prices.* overrides.
}

CapexBreakdown compute_capex(const Hardware& hw, const ComponentPrices& prices) {
  for (const auto& part : parts_in_use(hw, prices)) {
    if (!part.quote->known()) throw ModelError(describe_missing(part));
    require(std::isfinite(part.quote->usd), [&] {
      return std::string("price of ") + part.what + " '" + part.name + "' is not a finite number";
    });
  }
  require(hw.gpu_count >= 0 && hw.nvme.count >= 0 && hw.host.dram_gb >= 0,
          "cost model: negative GPU count, drive count or DRAM size");
  CapexBreakdown c;
  if (hw.gpu_count > 0) c.gpu_usd = hw.gpu_count * prices.gpu.usd;
  c.platform_usd = prices.platform.usd;
  if (hw.host.dram_gb > 0) c.dram_usd = hw.host.dram_gb * prices.dram_per_gb.usd;
  if (hw.nvme.count > 0) c.drives_usd = hw.nvme.count * prices.drive.usd;
  require(c.total_usd() > 0,
          "capex is $0 (every component priced at 0): return per dollar is undefined; give at "
          "least one economics.prices.* a positive value");
  return c;
}

CostResult compute_cost(const Hardware& hw, const Economics& econ, double serving_it_w,
                        double idle_it_w, double tokens_per_s) {
  check_economics(econ);
  require(std::isfinite(serving_it_w) && serving_it_w >= 0 && std::isfinite(idle_it_w) &&
              idle_it_w >= 0,
          "cost model: negative or non-finite power");
  require(std::isfinite(tokens_per_s) && tokens_per_s >= 0, "cost model: negative throughput");
  CostResult r;
  r.capex = compute_capex(hw, econ.prices);
  const double d = econ.duty_cycle;
  r.capex_usd_per_hour = r.capex.total_usd() / (econ.amortization_years * kHoursPerYear * d);
  const double facility_w = (serving_it_w + idle_it_w * (1 - d) / d) * econ.pue;
  r.energy_usd_per_hour = facility_w / 1000.0 * econ.usd_per_kwh;
  r.usd_per_hour = r.capex_usd_per_hour + r.energy_usd_per_hour;
  if (tokens_per_s > 0) {
    r.per_token = true;
    const double tokens_per_hour = tokens_per_s * 3600.0;
    r.usd_per_million_tokens = r.usd_per_hour / tokens_per_hour * 1e6;
    r.tokens_per_usd = tokens_per_hour / r.usd_per_hour;  // usd_per_hour > 0: capex > 0
    r.return_per_dollar = tokens_per_s / (r.capex.total_usd() / 1000.0);
  }
  return r;
}

RentResult compute_rent(const Economics& econ, const CostResult* own, double serving_it_w,
                        double idle_it_w, double tokens_per_s) {
  require(!econ.cloud.name.empty(), "rent model: no cloud instance named");
  require(econ.cloud.hourly.known(), [&] {
    return "rent model: cloud instance '" + econ.cloud.name + "' has no hourly price";
  });
  RentResult r;
  r.usd_per_hour = econ.cloud.hourly.usd;
  if (tokens_per_s > 0) r.usd_per_million_tokens = r.usd_per_hour / (tokens_per_s * 3600.0) * 1e6;
  if (!own) return r;
  const double usd_per_wh = econ.usd_per_kwh / 1000.0;
  const double a = own->capex.total_usd() / (econ.amortization_years * kHoursPerYear) +
                   idle_it_w * econ.pue * usd_per_wh;
  const double b = (serving_it_w - idle_it_w) * econ.pue * usd_per_wh;
  if (r.usd_per_hour > b) {
    r.breakeven = true;
    r.breakeven_duty_cycle = a / (r.usd_per_hour - b);
  }
  return r;
}

}  // namespace tiersim
