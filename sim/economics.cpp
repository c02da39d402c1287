#include "sim/economics.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/format.hpp"
#include "model/capacity.hpp"
#include "model/cost.hpp"
#include "model/errors.hpp"
#include "model/perf.hpp"
#include "model/units.hpp"
#include "sim/workloads/inference/metrics.hpp"
#include "sim/workloads/traits.hpp"

namespace tiersim::sim {

namespace {

// One part of a run's component activity, from a usage's busy and load-weighted seconds as
// `busy` and `load` read them (the whole run, or one Stage). DRAM is counted busy while the CPU
// computes plus the DMA traffic through host memory at its bandwidth (see activity_from_usage);
// nothing is clamped here.
// Bytes a host link moved while busy for `busy_s` at its rate, over `tp` GPUs in lockstep; 0 for
// a resource that is not a host link.
double host_link_bytes(const Hardware& hw, ResourceRole role, double busy_s, int tp) {
  if (role == ResourceRole::kPcieH2d)
    return busy_s * units::gbps_to_bytes_per_s(h2d_gbps(hw.gpu, hw.host)) * tp;
  if (role == ResourceRole::kPcieD2h)
    return busy_s * units::gbps_to_bytes_per_s(d2h_gbps(hw.gpu, hw.host)) * tp;
  return 0;
}

// `pcie_host_share`: the share of the host links' bytes that passes through host DRAM (see
// activity_from_usage).
template <typename Busy, typename Load>
PartActivity part_from_usage(const Scenario& s, const RunResult& r, int tp,
                             double pcie_host_share, Busy busy, Load load) {
  const Hardware& hw = s.hardware;
  PartActivity a;
  a.nvme_load_s = a.cpu_load_s = 0;  // summed below (PartActivity's default, < 0, means "as busy")
  double pcie_bytes = 0;
  for (const auto& u : r.utilization) {
    // By role only: a workload's resource is charged for what it stands for, whatever its name.
    switch (u.role) {
      case ResourceRole::kGpu:
        a.gpu_busy_s += busy(u) * tp;
        a.gpu_load_s += load(u) * tp;
        break;
      case ResourceRole::kCpu:
        a.cpu_busy_s += busy(u);
        a.cpu_load_s += load(u);  // the share of the cores it kept busy (cpu_core_load)
        break;
      case ResourceRole::kNvme:
        a.nvme_busy_s += busy(u);
        a.nvme_load_s += load(u);  // each transfer's nvme_load (model/power.hpp)
        break;
      case ResourceRole::kPcieH2d:
      case ResourceRole::kPcieD2h:
        pcie_bytes += host_link_bytes(hw, u.role, busy(u), tp);
        break;
      // Not in the power model: links between GPUs, nodes and remote storage, and whatever a
      // workload marks as other (sim/workloads/*/names.hpp say which and why).
      case ResourceRole::kNetwork:
      case ResourceRole::kOther:
        break;
    }
  }
  pcie_bytes *= pcie_host_share;
  if (hw.nvme.count <= 0) a.nvme_busy_s = a.nvme_load_s = 0;
  double nvme_bytes = 0;
  if (a.nvme_busy_s > 0) {
    // The array's busy time at the rate the workload's device model gives (WorkSummary): the
    // drive model's service time is not split into bytes per request here.
    nvme_bytes = a.nvme_busy_s * units::gbps_to_bytes_per_s(r.work.nvme_gbps_model);
  }
  const bool gds = reads_nvme_to_gpu(s);
  const double dram_bytes = std::max(0.0, pcie_bytes + (gds ? -nvme_bytes : nvme_bytes));
  const double dram_bps = units::gbps_to_bytes_per_s(hw.host.dram_gbps);
  a.dram_busy_s = a.cpu_busy_s + (dram_bps > 0 ? dram_bytes / dram_bps : 0.0);
  return a;
}

// Scales `part` by `f` (a part's share of a total that was clamped).
void scale_part(PartActivity& part, double gpu_f, double cpu_f, double dram_f, double nvme_f) {
  part.gpu_busy_s *= gpu_f;
  part.gpu_load_s *= gpu_f;
  part.cpu_busy_s *= cpu_f;
  part.cpu_load_s *= cpu_f;
  part.dram_busy_s *= dram_f;
  part.nvme_busy_s *= nvme_f;
  part.nvme_load_s *= nvme_f;
}

double ratio(double clamped, double raw) { return raw > 0 ? clamped / raw : 1.0; }

}  // namespace

ActivityTimes activity_from_usage(const Scenario& s, const RunResult& r) {
  const Hardware& hw = s.hardware;
  ActivityTimes a;
  // Training and checkpoint runs report no total_s: no makespan, no energy.
  a.makespan_s = r.find(metric::kTotalS).value_or(0.0);
  // Inference and serving split GPUs over tensor-parallel ranks (one gpu resource stands for
  // `tensor` GPUs in lockstep: kCapLockstepGpus); the io benchmark has none.
  const bool tensor_parallel = has_capability(s, kCapLockstepGpus);
  // Data-parallel ranks of ZeRO-Inference likewise run in lockstep with the simulated one.
  const int tp = tensor_parallel ? std::max(1, s.policy.parallelism.gpus_in_lockstep()) : 1;
  // ZeRO-3's all-gathers over PCIe go GPU to GPU (peer to peer): they load the links, not host
  // DRAM. The run counts them as a whole, so every part keeps the run's host share of its PCIe
  // bytes, worked out once here.
  double pcie_host_share = 1.0;
  if (const double allgather_bytes = r.work.allgather_bytes;
      allgather_bytes > 0 && hw.gpu.nvlink_gbps <= 0) {
    double run_pcie_bytes = 0;
    for (const auto& u : r.utilization) run_pcie_bytes += host_link_bytes(hw, u.role, u.busy_s, tp);
    if (run_pcie_bytes > 0)
      pcie_host_share = std::max(0.0, 1.0 - allgather_bytes * tp / run_pcie_bytes);
  }
  const PartActivity all = part_from_usage(
      s, r, tp, pcie_host_share, [](const ResourceUsage& u) { return u.busy_s; },
      [](const ResourceUsage& u) { return u.full_power_s(); });
  const double t = a.makespan_s;
  // Rounding in the engine may put busy time a hair above the makespan; the power model checks
  // the bounds strictly, so clamp here where the numbers are produced.
  a.gpu_busy_s = std::min(all.gpu_busy_s, t * hw.gpu_count);
  a.gpu_load_s = std::min(all.gpu_load_s, a.gpu_busy_s);
  a.cpu_busy_s = std::min(all.cpu_busy_s, t);
  a.cpu_load_s = std::min(all.cpu_load_s * ratio(a.cpu_busy_s, all.cpu_busy_s), a.cpu_busy_s);
  a.nvme_busy_s = hw.nvme.count > 0 ? std::min(all.nvme_busy_s, t) : 0.0;
  a.nvme_load_s = std::min(all.nvme_load_s * ratio(a.nvme_busy_s, all.nvme_busy_s), a.nvme_busy_s);
  a.dram_busy_s = std::min(t, all.dram_busy_s);
  // The parts, scaled as their totals were clamped so that they never add up to more.
  auto stage_part = [&](Stage stage) {
    const auto i = static_cast<std::size_t>(stage);
    PartActivity p = part_from_usage(
        s, r, tp, pcie_host_share, [i](const ResourceUsage& u) { return u.busy_by_stage_s[i]; },
        [i](const ResourceUsage& u) { return u.load_by_stage_s[i]; });
    scale_part(p, ratio(a.gpu_busy_s, all.gpu_busy_s), ratio(a.cpu_busy_s, all.cpu_busy_s),
               ratio(a.dram_busy_s, all.dram_busy_s), ratio(a.nvme_busy_s, all.nvme_busy_s));
    p.gpu_load_s = std::min(p.gpu_load_s, p.gpu_busy_s);
    p.nvme_load_s = std::min(p.nvme_load_s, p.nvme_busy_s);
    p.cpu_load_s = std::min(p.cpu_load_s, p.cpu_busy_s);
    return p;
  };
  a.prefill = stage_part(Stage::kPrefill);
  a.decode = stage_part(Stage::kDecode);
  return a;
}

std::string cost_note(const Scenario& s) {
  std::string note;
  for (const auto& m : missing_prices(s.hardware, s.economics.prices))
    note += (note.empty() ? "" : "; ") + m;
  return note.empty() ? note : "cost metrics omitted: " + note;
}

namespace {

const TierMemory* find_tier(const RunResult& r, const char* name) {
  for (const auto& t : r.memory)
    if (t.tier == name) return &t;
  return nullptr;
}

}  // namespace

bool dram_sized_to_need(const Scenario& s) {
  if (!s.hardware.host.size_dram) return false;
  // Only a value that came from the catalog (not an override, nor a hand-built scenario's).
  const auto prov = s.provenance.source("hardware.host.dram_gb");
  return prov && prov->rfind("catalog:", 0) == 0;
}

DramSizing dram_sizing(const Scenario& s, const RunResult& r) {
  DramSizing d;
  const HostSpec& host = s.hardware.host;
  d.max_gb = host.dram_gb;
  d.dram_gb = host.dram_gb;
  if (!dram_sized_to_need(s)) return d;
  const TierMemory* cpu = find_tier(r, "cpu");
  d.need_bytes = cpu ? cpu->required_bytes : 0.0;
  const TierMemory* nvme = find_tier(r, "nvme");
  const auto page_cache_bytes = r.find(metric::kPageCacheBytes);
  if (nvme && nvme->required_bytes > 0 && page_cache_bytes &&
      *page_cache_bytes >= nvme->required_bytes) {
    d.need_bytes += nvme->required_bytes;
    d.page_cache = true;
  }
  d.population = dram_population(d.need_bytes, host);
  d.dram_gb = d.population.dram_gb;
  d.sized = true;
  return d;
}

std::string dram_note(const Scenario& s, const RunResult& r) {
  // Only where energy and cost were computed with it (add_energy_and_cost set the metric).
  if (!r.has(metric::kDramSizedGb)) return "";
  const DramSizing d = dram_sizing(s, r);
  if (!d.sized) return "";
  const DramPopulation& p = d.population;
  const HostSpec& host = s.hardware.host;
  const std::string need = "host memory need " + format::fixed(d.need_bytes / units::kGB, 1) +
                           " GB" +
                           (d.page_cache ? " (with the page cache over the disk tier)" : "") +
                           " + " + format::fixed((kDramHeadroom - 1) * 100, 0) + "% headroom";
  const std::string dimms = p.dimm_gib > 0
                                ? dimm_layout_text(host, p.dimm_gib)
                                : "whole " + format::fixed(kDramDimmGb, 0) +
                                      " GB DIMMs (the platform's memory channels are not known)";
  const std::string sized =
      "DRAM sized to " + format::fixed(d.dram_gb, 0) + " GB for energy and cost: ";
  const std::string choose = " (set hardware.host.dram_gb to choose)";
  if (p.capped)
    return sized + "the most " + host.name + " holds (" + need + "; as " + dimms +
           " it would be more)" + choose;
  if (p.floor) return sized + "the platform's floor, " + dimms + " (" + need + " is less)" + choose;
  return sized + need + ", as " + dimms + ", at most the " + format::fixed(d.max_gb, 0) + " GB " +
         host.name + " holds" + choose;
}

void add_energy_and_cost(const Scenario& s, RunResult& r) {
  // Energy and cost count the DRAM the configuration needs (dram_sizing); the run itself was
  // simulated with the catalog's, which sizing never makes a difference to (see DramSizing).
  // A copy only where the DRAM is sized: copying the whole Hardware (names, catalog entries) for
  // every sweep point that keeps the catalog's was a cost of each.
  std::optional<Hardware> sized_hw;
  if (const DramSizing d = dram_sizing(s, r); d.sized) {
    sized_hw = s.hardware;
    sized_hw->host.dram_gb = d.dram_gb;
    r.set(metric::kDramSizedGb, d.dram_gb);
    for (auto& t : r.memory)
      if (t.tier == "cpu") t.capacity_bytes = d.dram_gb * units::kGB;
    // The page cache is the DRAM nothing else holds (sim/workloads/inference/flexgen.cpp).
    if (const TierMemory* cpu = find_tier(r, "cpu"); cpu && r.has(metric::kPageCacheBytes))
      r.set(metric::kPageCacheBytes, std::max(0.0, cpu->capacity_bytes - cpu->required_bytes));
  }
  const Hardware& hw = sized_hw ? *sized_hw : s.hardware;
  check_power_inputs(hw);
  check_economics(s.economics);
  const bool prices_known = missing_prices(hw, s.economics.prices).empty();

  if (!r.fits || r.find(metric::kTotalS).value_or(0.0) <= 0) {
    // No timeline: the purchase price is still worth showing (compare lists what would not fit).
    if (prices_known) {
      const CapexBreakdown c = compute_capex(hw, s.economics.prices);
      r.set(metric::kCapexUsd, c.total_usd());
    }
    return;
  }
  const ActivityTimes a = activity_from_usage(s, r);
  const EnergyBreakdown e = integrate_energy(hw, a, s.economics.pue);
  const double t = a.makespan_s;
  r.set(metric::kEnergyJ, e.it_j());
  r.set(metric::kEnergyJGpu, e.gpu_j);
  r.set(metric::kEnergyJCpu, e.cpu_j);
  r.set(metric::kEnergyJDram, e.dram_j);
  r.set(metric::kEnergyJNvme, e.nvme_j);
  r.set(metric::kEnergyJPlatform, e.platform_j);
  r.set(metric::kEnergyJFans, e.fan_j);
  r.set(metric::kEnergyJPsuLoss, e.psu_loss_j);
  const EnergyByPhase ph = phase_energy(hw, a);
  r.set(metric::kEnergyJPrefill, ph.prefill_j);
  r.set(metric::kEnergyJDecode, ph.decode_j);
  r.set(metric::kEnergyJIoWait, ph.io_wait_j);
  r.set(metric::kEnergyJIdle, ph.idle_j);
  r.set(metric::kEnergyJOther, ph.other_j);
  r.set(metric::kFacilityEnergyJ, e.facility_j());
  r.set(metric::kAvgPowerW, e.it_j() / t);
  r.set(metric::kDcAvgPowerW, e.dc_j() / t);
  r.set(metric::kGpuAvgPowerW, e.gpu_j / t);
  r.set(metric::kFacilityAvgPowerW, e.facility_j() / t);
  // 0 for workloads that generate no tokens or serve no requests.
  const double tokens = r.work.generated_tokens;
  if (tokens > 0) {
    r.set(metric::kEnergyJPerToken, e.it_j() / tokens);
    r.set(metric::kGpuEnergyJPerToken, e.gpu_j / tokens);
    r.set(metric::kFacilityEnergyJPerToken, e.facility_j() / tokens);
    r.set(metric::kTokensPerKwh, tokens / (e.it_j() / units::kJoulesPerKwh));
  }
  const double requests = r.work.requests_completed;
  if (requests > 0) r.set(metric::kEnergyJPerRequest, e.it_j() / requests);
  // As the workloads work out throughput_tokens_per_s and requests_per_s: over the makespan.
  const double tokens_per_s = tokens > 0 ? tokens / t : 0.0;
  const double requests_per_s = requests / t;
  // Renting needs the instance's price alone (a rented GPU need not have a purchase price); the
  // break-even duty cycle needs owning's cost too.
  std::optional<CostResult> own;
  if (prices_known)
    own = compute_cost(hw, s.economics, e.it_j() / t, node_idle_w(hw), tokens_per_s);
  if (!s.economics.cloud.name.empty()) {
    const RentResult rent = compute_rent(s.economics, own ? &*own : nullptr, e.it_j() / t,
                                         node_idle_w(hw), tokens_per_s);
    r.set(metric::kRentUsdPerHour, rent.usd_per_hour);
    if (tokens > 0) r.set(metric::kRentUsdPerMillionTokens, rent.usd_per_million_tokens);
    if (requests > 0)
      r.set(metric::kRentUsdPerRequest, rent.usd_per_hour / (requests_per_s * 3600.0));
    if (rent.breakeven) r.set(metric::kBuyBreakevenDutyCycle, rent.breakeven_duty_cycle);
  }
  if (!own) return;  // cost_note() explains; `run` without prices still works
  const CostResult& c = *own;
  r.set(metric::kCapexUsd, c.capex.total_usd());
  r.set(metric::kCapexUsdGpu, c.capex.gpu_usd);
  r.set(metric::kCapexUsdPlatform, c.capex.platform_usd);
  r.set(metric::kCapexUsdDram, c.capex.dram_usd);
  r.set(metric::kCapexUsdDrives, c.capex.drives_usd);
  r.set(metric::kCapexUsdPerHour, c.capex_usd_per_hour);
  r.set(metric::kEnergyUsdPerHour, c.energy_usd_per_hour);
  r.set(metric::kUsdPerHour, c.usd_per_hour);
  if (requests > 0) r.set(metric::kUsdPerRequest, c.usd_per_hour / (requests_per_s * 3600.0));
  if (c.per_token) {
    r.set(metric::kUsdPerMillionTokens, c.usd_per_million_tokens);
    r.set(metric::kTokensPerUsd, c.tokens_per_usd);
    r.set(metric::kReturnPerDollar, c.return_per_dollar);
  }
}

const std::vector<std::string>& comparison_metrics() {
  static const std::vector<std::string> kNames = metric_names(
      {metric::kThroughputTokensPerS, metric::kTtftS, metric::kDecodeSPerToken,
       metric::kEnergyJPerToken, metric::kAvgPowerW, metric::kTokensPerKwh, metric::kCapexUsd,
       metric::kUsdPerHour, metric::kUsdPerMillionTokens, metric::kReturnPerDollar});
  return kNames;
}

const std::vector<std::string>& rent_metrics() {
  static const std::vector<std::string> kNames =
      metric_names({metric::kRentUsdPerHour, metric::kRentUsdPerMillionTokens,
                    metric::kRentUsdPerRequest, metric::kBuyBreakevenDutyCycle});
  return kNames;
}

std::vector<std::pair<std::string, double>> metric_ratios(const RunResult& result,
                                                          const RunResult& baseline) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& name : comparison_metrics()) {
    const auto v = result.find(name);
    const auto b = baseline.find(name);
    if (!v || !b || *b == 0) continue;
    out.emplace_back(name, *v / *b);
  }
  return out;
}

}  // namespace tiersim::sim
