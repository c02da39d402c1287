#pragma once
// Energy and cost of a simulated run, added to RunResult::metrics so that `run --json`, the human
// table, `compare`, the results store and the reports all see them by name.
//
// Metrics (names are stable; the reports read them):
//   energy_j, energy_j_gpu, energy_j_cpu, energy_j_dram, energy_j_nvme, energy_j_platform,
//   energy_j_fans, energy_j_psu_loss  [J]
//       IT energy of the node over the run at its AC input (no PUE); energy_j is the sum of the
//       seven parts (model/power.hpp EnergyBreakdown).
//   facility_energy_j [J]           energy_j * economics.pue.
//   avg_power_w [W], facility_avg_power_w [W]   energy / total_s (avg_power_w: at the wall).
//   dc_avg_power_w [W]              the DC power the PSUs deliver (energy_j less the PSU loss).
//   energy_j_per_token [J/token]    IT energy per generated token (what "energy per token" means
//                                   in vendor claims: device-level, no cooling overhead).
//   facility_energy_j_per_token [J/token], tokens_per_kwh [tokens/kWh] (IT energy).
//   capex_usd, capex_usd_gpu, capex_usd_platform, capex_usd_dram, capex_usd_drives [USD]
//   capex_usd_per_hour, energy_usd_per_hour, usd_per_hour [USD/h]  per serving hour; energy is
//                                   billed at facility level (IT * PUE).
//   usd_per_million_tokens [USD/Mtoken], tokens_per_usd [tokens/USD],
//   return_per_dollar [tokens/s per 1000 USD capex].
//   rent_usd_per_hour [USD/h], rent_usd_per_million_tokens [USD/Mtoken], rent_usd_per_request
//   [USD/request], buy_breakeven_duty_cycle  when economics.cloud_instance names an instance (rent
//                                   versus buy, model/cost.hpp compute_rent).
// Energy metrics need a run that fits and has a makespan (metric total_s); per-token metrics need
// generated tokens. Cost metrics appear only when every component in use has a price; otherwise
// they are absent and cost_note() says which price is missing and how to supply it.
#include <string>
#include <utility>
#include <vector>

#include "model/capacity.hpp"
#include "model/power.hpp"
#include "model/scenario.hpp"
#include "sim/result.hpp"

namespace tiersim::sim {

// Maps the run's resource usage onto component activity, by each resource's role
// (sim/engine/kinds.hpp ResourceRole), never by its name:
//   GPU:  busy_s of every ResourceRole::kGpu resource x tensor-parallel degree (one resource per
//         pipeline stage stands for its tp GPUs); GPUs beyond tp x pp only idle.
//   CPU:  busy_s of ResourceRole::kCpu resources (attention on the host, copies), and their
//         load-weighted seconds (each booking's share of the cores, model/power.hpp
//         cpu_core_load) as cpu_load_s.
//   NVMe: busy_s of ResourceRole::kNvme resources (RAID-0: every drive transfers while the array
//         does), and their load-weighted seconds (each booking's Tag::load, model/power.hpp
//         nvme_load: its rate over the rated rate in its direction) as nvme_load_s.
//   DRAM: the memory bus is counted busy while the CPU computes (attention streams the KV cache
//         at DRAM bandwidth) plus the time the DMA traffic through host memory would occupy the
//         bus at hardware.host.dram_gbps: bytes over the kPcieH2d and kPcieD2h roles' resources
//         (busy_s x link rate x tp), plus NVMe bytes landing in the AIO bounce buffers, minus them
//         under GPUDirect Storage (drive to GPU without touching DRAM). Capped at the makespan.
ActivityTimes activity_from_usage(const Scenario& scenario, const RunResult& result);

// Adds the energy and cost metrics listed above. Throws ModelError for invalid power or economics
// inputs (negative power, active below idle, pue < 1, ...); a missing price is not an error here.
void add_energy_and_cost(const Scenario& scenario, RunResult& result);

// Why cost metrics are absent ("" when every price is known): one sentence per missing price.
std::string cost_note(const Scenario& scenario);

// DRAM sizing (model/capacity.hpp, dram_population): whether energy and cost count the DRAM the run
// needs rather than the catalog host's dram_gb, and how much. Applies while
// hardware.host.size_dram is on and hardware.host.dram_gb is the catalog's (its provenance is
// "catalog: ...", so not an override). The need is the run's host-memory tier, plus the disk tier's
// bytes when the run read them from the page cache (FlexGen: page_cache_bytes covers the disk
// tier), so sizing never turns a cached disk tier into an uncached one: the run's timing stands as
// simulated.
struct DramSizing {
  bool sized = false;
  double dram_gb = 0;       // what energy and cost count
  double need_bytes = 0;    // host-memory need the size was derived from
  double max_gb = 0;        // the catalog host's dram_gb
  bool page_cache = false;  // need includes the page cache over the disk tier
  DramPopulation population;  // the DIMMs dram_gb is made of
};
DramSizing dram_sizing(const Scenario& scenario, const RunResult& result);
// Whether dram_sizing applies to the scenario (before any run: the planner's capex bound).
bool dram_sized_to_need(const Scenario& scenario);
// "" when energy and cost did not size DRAM (no dram_sized_gb metric); else one line saying
// what it was sized to and why.
std::string dram_note(const Scenario& scenario, const RunResult& result);

// The key metrics `compare` shows, in table order.
const std::vector<std::string>& comparison_metrics();

// The rent-versus-buy metrics, in table order (present only with economics.cloud_instance).
const std::vector<std::string>& rent_metrics();

// value / baseline value for each comparison metric present in both with a non-zero baseline.
std::vector<std::pair<std::string, double>> metric_ratios(const RunResult& result,
                                                          const RunResult& baseline);

}  // namespace tiersim::sim
