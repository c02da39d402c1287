#pragma once
// Cost of owning and running one node for a workload. Pure arithmetic on resolved prices
// (Scenario::economics.prices, from scenarios/catalog/prices.yaml or economics.prices.* overrides)
// and on the power model's output (model/power.hpp).
//
// Definitions (all per node):
//   capex_usd            = gpu_count * gpu + platform + dram_gb * dram_per_gb + drives * drive
//   capex_usd_per_hour   = capex_usd / (amortization_years * 8766 h * duty_cycle)
//                          The whole purchase is paid by the hours the node actually serves this
//                          workload: at duty_cycle 0.25 each serving hour carries 4x the capex.
//   energy_usd_per_hour  = (facility serving power + facility idle power * (1 - d) / d)
//                          * usd_per_kwh / 1000, d = duty_cycle. The node stays powered between
//                          jobs, so its idle draw in the non-serving hours is charged to the
//                          serving hours like the capex. Facility power = IT power * PUE.
//   usd_per_hour         = capex_usd_per_hour + energy_usd_per_hour (per serving hour)
//   usd_per_million_tokens, tokens_per_usd from the simulated throughput while serving.
//   return_per_dollar    = throughput tokens/s per 1000 USD of capex (hardware only).
//
// Rent versus buy (economics.cloud_instance): renting pays the instance's hourly price only for
// the hours it serves, and nothing between jobs. Owning costs, per serving hour at duty cycle d,
//   own(d) = A / d + B,  A = capex / (amortization_years * 8766 h) + idle facility power * price
//                        B = (serving - idle) facility power * price
// (the definitions above rearranged). own(d) = rent at d* = A / (rent - B): buying is cheaper at
// any duty cycle above d*. d* > 1 means renting is cheaper even at full use; rent <= B means
// the electricity alone costs more than the rent, and no duty cycle makes buying pay.
#include <string>
#include <vector>

#include "model/scenario.hpp"

namespace tiersim {

inline constexpr double kHoursPerYear = 8766;  // 365.25 days

struct CapexBreakdown {
  double gpu_usd = 0;       // all GPUs
  double platform_usd = 0;  // chassis, CPUs, board
  double dram_usd = 0;      // all DRAM
  double drives_usd = 0;    // all NVMe drives
  double total_usd() const { return gpu_usd + platform_usd + dram_usd + drives_usd; }
};

struct CostResult {
  CapexBreakdown capex;
  double capex_usd_per_hour = 0;
  double energy_usd_per_hour = 0;
  double usd_per_hour = 0;
  bool per_token = false;  // false when the workload produces no tokens (fields below are 0)
  double usd_per_million_tokens = 0;
  double tokens_per_usd = 0;
  double return_per_dollar = 0;  // tokens/s per 1000 USD of capex
};

struct RentResult {
  double usd_per_hour = 0;              // the instance's on-demand price
  double usd_per_million_tokens = 0;    // 0 when no tokens
  bool breakeven = false;               // false when rent <= B (buying never pays)
  double breakeven_duty_cycle = 0;      // d* above; may exceed 1
};

// Rent side of rent versus buy for a configuration whose own cost is `own` (compute_cost with the
// same powers and throughput). `own` null: owning's price is not known (a GPU with no purchase
// price), so the rent is known and the break-even duty cycle is not. Throws ModelError when
// econ.cloud names no instance or its price is negative.
RentResult compute_rent(const Economics& econ, const CostResult* own, double serving_it_w,
                        double idle_it_w, double tokens_per_s);

// One line per component in use without a known price, each naming the component and how to
// supply the price (economics.prices.<key> or prices.yaml). Empty when every needed price is known.
std::vector<std::string> missing_prices(const Hardware& hw, const ComponentPrices& prices);

// Throws ModelError for economics inputs outside their domain (amortization_years <= 0, duty_cycle
// outside (0, 1], pue < 1, negative energy or component price).
void check_economics(const Economics& econ);

// Throws ModelError naming the first component without a price, or when the capex is 0.
CapexBreakdown compute_capex(const Hardware& hw, const ComponentPrices& prices);

// serving_it_w: average IT power while serving; idle_it_w: the node's IT power when idle;
// tokens_per_s: throughput while serving (0 = no per-token figures).
CostResult compute_cost(const Hardware& hw, const Economics& econ, double serving_it_w,
                        double idle_it_w, double tokens_per_s);

}  // namespace tiersim
