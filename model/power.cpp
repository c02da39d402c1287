#include "model/power.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <utility>

#include "common/format.hpp"
#include "model/errors.hpp"
#include "model/units.hpp"

namespace tiersim {

namespace {

// A component as messages name it ("GPU 'H200'"), written out only when a check fails: the
// checks run for every simulated point, their messages almost never.
struct Component {
  const char* kind;
  const std::string& name;
  std::string text() const { return std::string(kind) + " '" + name + "'"; }
};

// Names the scenario key of a power figure so the message says what to change.
void require_power(double value_w, const char* key, const Component& component) {
  if (!std::isfinite(value_w) || value_w < 0)
    throw ModelError(std::string("power figure ") + key + " of " + component.text() + " is " +
                     format::exact(value_w) +
                     " W; power must be >= 0 (fix it in the catalog entry or override " + key +
                     " in the scenario)");
}

void require_active_above_idle(double active_w, double idle_w, const char* active_key,
                               const char* idle_key, const Component& component) {
  if (active_w < idle_w)
    throw ModelError(component.text() + ": " + active_key + " (" + format::exact(active_w) +
                     " W) is below " + idle_key + " (" + format::exact(idle_w) +
                     " W); active power must be at least idle power");
}

// Busy time may exceed the makespan only by rounding.
void require_busy(double busy_s, double limit_s, const char* what) {
  if (!std::isfinite(busy_s) || busy_s < 0 || busy_s > limit_s * (1 + 1e-9) + 1e-12)
    throw ModelError(std::string("power model: ") + what + " busy time " + format::exact(busy_s) +
                     " s is outside 0.." + format::exact(limit_s) + " s");
}

// One 80 PLUS level: its certification points (load fraction, minimum efficiency), ascending.
struct PsuLevel {
  const char* name;
  std::array<std::pair<double, double>, 4> points;
  int n;
};

// 80 PLUS, 230 V internal redundant category (the data-centre PSUs' certification), as the
// program's requirement table lists the minimum efficiencies (CLEAResult, "80 PLUS Certified
// Power Supplies and Manufacturers"; the same table in Tom's Hardware, "80 PLUS Efficiency
// Certification", 2017). Only titanium adds a 10 % point.
constexpr PsuLevel kPsuLevels[] = {
    {"bronze", {{{0.20, 0.81}, {0.50, 0.85}, {1.00, 0.81}, {0, 0}}}, 3},
    {"silver", {{{0.20, 0.85}, {0.50, 0.89}, {1.00, 0.85}, {0, 0}}}, 3},
    {"gold", {{{0.20, 0.88}, {0.50, 0.92}, {1.00, 0.88}, {0, 0}}}, 3},
    {"platinum", {{{0.20, 0.90}, {0.50, 0.94}, {1.00, 0.91}, {0, 0}}}, 3},
    {"titanium", {{{0.10, 0.90}, {0.20, 0.94}, {0.50, 0.96}, {1.00, 0.91}}}, 4},
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const PsuLevel& psu_level(const std::string& name) {
  const std::string key = lower(name);
  for (const PsuLevel& l : kPsuLevels)
    if (key == l.name) return l;
  std::string known;
  for (const PsuLevel& l : kPsuLevels) known += (known.empty() ? "" : ", ") + std::string(l.name);
  throw ModelError("hardware.host.psu_efficiency '" + name + "' is not an 80 PLUS level; use one "
                   "of " + known);
}

// Demand on the dynamic range at the time model's rates, unclamped (> 1: above tdp_w).
double gpu_demand(const GpuSpec& gpu, const KernelTime& k) {
  return (k.compute_s + gpu.memory_power_fraction * k.memory_s) / k.s;
}

void require_power_limit(const GpuSpec& gpu) {
  if (gpu.power_limit_w == 0) return;
  const Component c{"GPU", gpu.name};
  require_power(gpu.power_limit_w, "hardware.gpu.power_limit_w", c);
  if (gpu.power_limit_w > gpu.tdp_w)
    throw ModelError(c.text() + ": hardware.gpu.power_limit_w (" +
                     format::exact(gpu.power_limit_w) + " W) is above tdp_w (" +
                     format::exact(gpu.tdp_w) +
                     " W), the board's maximum; leave it out to run "
                     "at tdp_w");
  if (gpu.power_limit_w <= gpu.idle_w)
    throw ModelError(c.text() + ": hardware.gpu.power_limit_w (" +
                     format::exact(gpu.power_limit_w) + " W) is not above idle_w (" +
                     format::exact(gpu.idle_w) + " W); no clock runs a kernel within it");
}

// Share of the dynamic range the power limit leaves, 0..1 (1 without a range).
double cap_share(const GpuSpec& gpu) {
  const double range_w = gpu.tdp_w - gpu.idle_w;
  if (!(range_w > 0)) return 1.0;
  return std::clamp((gpu_power_cap_w(gpu) - gpu.idle_w) / range_w, 0.0, 1.0);
}

}  // namespace

const std::vector<std::string>& psu_efficiency_levels() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> v;
    for (const PsuLevel& l : kPsuLevels) v.emplace_back(l.name);
    return v;
  }();
  return kNames;
}

double psu_efficiency(const std::string& level, double load_fraction) {
  const PsuLevel& l = psu_level(level);
  if (!std::isfinite(load_fraction) || load_fraction < 0)
    throw ModelError("PSU load fraction " + format::exact(load_fraction) + " is not >= 0");
  const auto& p = l.points;
  if (load_fraction <= p[0].first) return p[0].second;
  for (int i = 1; i < l.n; ++i) {
    const auto [x1, y1] = p[static_cast<std::size_t>(i)];
    if (load_fraction <= x1) {
      const auto [x0, y0] = p[static_cast<std::size_t>(i - 1)];
      return y0 + (y1 - y0) * (load_fraction - x0) / (x1 - x0);
    }
  }
  return p[static_cast<std::size_t>(l.n - 1)].second;
}

NodeOverhead node_overhead(const HostSpec& host, double components_dc_w) {
  NodeOverhead o;
  if (host.fan_max_w > 0) {
    const double speed =
        std::clamp(components_dc_w / host.cooling_design_w, host.fan_min_speed, 1.0);
    o.fan_w = host.fan_max_w * speed * speed * speed;
  }
  const double dc_w = components_dc_w + o.fan_w;
  if (host.psu_count > 0) {
    const double capacity_w = (host.psu_count - host.psu_standby) * host.psu_rating_w;
    if (dc_w > capacity_w)
      throw ModelError("host '" + host.name + "' draws " + format::exact(dc_w) +
                       " W DC, more than its " + std::to_string(host.psu_count - host.psu_standby) +
                       " load-sharing PSUs deliver (" + format::exact(capacity_w) +
                       " W); lower the GPUs' tdp_w or give the host more PSUs");
    const double eff = psu_efficiency(host.psu_efficiency, dc_w / capacity_w);
    o.psu_loss_w = dc_w / eff - dc_w;
  }
  o.wall_w = dc_w + o.psu_loss_w;
  return o;
}

void check_power_inputs(const Hardware& hw) {
  const Component gpu{"GPU", hw.gpu.name};
  require_power(hw.gpu.tdp_w, "hardware.gpu.tdp_w", gpu);
  require_power(hw.gpu.idle_w, "hardware.gpu.idle_w", gpu);
  require_active_above_idle(hw.gpu.tdp_w, hw.gpu.idle_w, "hardware.gpu.tdp_w",
                            "hardware.gpu.idle_w", gpu);
  require_power_limit(hw.gpu);
  const Component host{"host", hw.host.name};
  require_power(hw.host.cpu_tdp_w, "hardware.host.cpu_tdp_w", host);
  require_power(hw.host.cpu_idle_w, "hardware.host.cpu_idle_w", host);
  require_active_above_idle(hw.host.cpu_tdp_w, hw.host.cpu_idle_w, "hardware.host.cpu_tdp_w",
                            "hardware.host.cpu_idle_w", host);
  require_power(hw.host.dram_w_per_gb_active, "hardware.host.dram_w_per_gb_active", host);
  require_power(hw.host.dram_w_per_gb_idle, "hardware.host.dram_w_per_gb_idle", host);
  require_active_above_idle(hw.host.dram_w_per_gb_active, hw.host.dram_w_per_gb_idle,
                            "hardware.host.dram_w_per_gb_active",
                            "hardware.host.dram_w_per_gb_idle", host);
  require_power(hw.host.platform_w, "hardware.host.platform_w", host);
  if (hw.host.dram_gb < 0) throw ModelError(host.text() + ": hardware.host.dram_gb must be >= 0");
  if (hw.gpu_count < 0 || hw.host.sockets < 0 || hw.nvme.count < 0)
    throw ModelError("power model: negative GPU, socket or drive count");
  require_power(hw.host.fan_max_w, "hardware.host.fan_max_w", host);
  if (hw.host.fan_max_w > 0 && !(hw.host.cooling_design_w > 0))
    throw ModelError(host.text() + ": hardware.host.fan_max_w is set, so hardware.host."
                     "cooling_design_w (the heat at which the fans reach full speed) must be > 0");
  if (!(hw.host.fan_min_speed >= 0 && hw.host.fan_min_speed <= 1))
    throw ModelError(host.text() + ": hardware.host.fan_min_speed must be within 0..1");
  if (hw.host.psu_count > 0) {
    if (hw.host.psu_standby < 0 || hw.host.psu_standby >= hw.host.psu_count)
      throw ModelError(host.text() + ": hardware.host.psu_standby must be >= 0 and below "
                       "psu_count (at least one PSU carries the load)");
    if (!(std::isfinite(hw.host.psu_rating_w) && hw.host.psu_rating_w > 0))
      throw ModelError(host.text() + ": hardware.host.psu_count is set, so psu_rating_w (DC "
                       "output of one PSU) must be > 0");
    psu_level(hw.host.psu_efficiency);  // throws for an unknown level
  }
  if (hw.nvme.count > 0) {
    const Component drive{"drive", hw.nvme.drive.name};
    require_power(hw.nvme.drive.active_w, "hardware.nvme.active_w", drive);
    require_power(hw.nvme.drive.idle_w, "hardware.nvme.idle_w", drive);
    require_active_above_idle(hw.nvme.drive.active_w, hw.nvme.drive.idle_w,
                              "hardware.nvme.active_w", "hardware.nvme.idle_w", drive);
    const std::pair<double, const char*> directions[] = {
        {hw.nvme.drive.active_read_w, "hardware.nvme.active_read_w"},
        {hw.nvme.drive.active_write_w, "hardware.nvme.active_write_w"}};
    for (const auto& [w, key] : directions) {
      if (w == 0) continue;  // not given: active_w
      require_power(w, key, drive);
      require_active_above_idle(w, hw.nvme.drive.idle_w, key, "hardware.nvme.idle_w", drive);
      if (w > hw.nvme.drive.active_w)
        throw ModelError(drive.text() + ": " + key + " (" + format::exact(w) +
                         " W) is above hardware.nvme.active_w (" +
                         format::exact(hw.nvme.drive.active_w) +
                         " W), the drive's maximum active power; raise active_w to at least it");
    }
  }
}

double drive_active_w(const NvmeSpec& drive, IoDirection dir) {
  const double w = dir == IoDirection::kRead ? drive.active_read_w : drive.active_write_w;
  return w > 0 ? w : drive.active_w;
}

double nvme_load(const NvmeArray& nvme, IoDirection dir, double bytes, double busy_s) {
  if (!(bytes > 0) || !(busy_s > 0)) return 0.0;
  const NvmeSpec& d = nvme.drive;
  const double range_w = d.active_w - d.idle_w;
  const double share =
      range_w > 0 ? std::clamp((drive_active_w(d, dir) - d.idle_w) / range_w, 0.0, 1.0) : 1.0;
  const SsdDirectionModel& m = dir == IoDirection::kRead ? nvme.model.read : nvme.model.write;
  const double rated_bytes_per_s = units::gbps_to_bytes_per_s(m.peak_gbps * std::max(nvme.count, 1));
  if (!(rated_bytes_per_s > 0)) return share;
  return share * std::min(1.0, bytes / busy_s / rated_bytes_per_s);
}

double cpu_core_load(const HostSpec& host, double threads) {
  return std::clamp(threads / cpu_threads(host), 0.0, 1.0);
}

double gpu_power_cap_w(const GpuSpec& gpu) {
  return gpu.power_limit_w > 0 ? std::min(gpu.power_limit_w, gpu.tdp_w) : gpu.tdp_w;
}

LimitedKernels gpu_power_limited(const GpuSpec& gpu, const KernelTime& k) {
  require_power_limit(gpu);
  LimitedKernels out{k.s, 0, 1};
  if (!(k.s > 0)) return out;
  const double cap = cap_share(gpu);
  const double demand = std::max(0.0, gpu_demand(gpu, k));
  if (demand <= cap) {
    out.load = demand;
    return out;
  }
  if (!(k.compute_s > 0)) {
    // Memory traffic alone above the limit: the SM clock does not slow it (see power.hpp).
    out.load = cap;
    return out;
  }
  const double bound_s = std::max(k.compute_s, k.memory_s);
  const double exponent = gpu.clock_power_exponent;
  const auto time_at = [&](double r) { return k.s + std::max(0.0, k.compute_s / r - bound_s); };
  // r^(exponent - 1): the catalog's exponent is 3 on every board, where a product gives what
  // std::pow gives at a fraction of its cost (this runs a few dozen times for each power-limited
  // kernel of every serving iteration).
  const bool cube = exponent == 3;
  const auto load_at = [&](double r) {
    const double clock_power = cube ? r * r : std::pow(r, exponent - 1);
    return (k.compute_s * clock_power + gpu.memory_power_fraction * k.memory_s) / time_at(r);
  };
  // load_at rises with r from 0 (r -> 0) to demand (r = 1) > cap: bisect for load_at(r) = cap.
  const double lo = power_cap_bisection(load_at, cap).first;
  out.clock_ratio = lo;
  out.s = time_at(lo);
  out.load = std::min(cap, load_at(lo));
  return out;
}

namespace {

// Every component at idle, DC (no fans, no PSU loss).
double idle_components_w(const Hardware& hw) {
  return hw.gpu_count * hw.gpu.idle_w + hw.host.sockets * hw.host.cpu_idle_w +
         hw.host.dram_gb * hw.host.dram_w_per_gb_idle +
         (hw.nvme.count > 0 ? hw.nvme.count * hw.nvme.drive.idle_w : 0.0) + hw.host.platform_w;
}

}  // namespace

double node_idle_w(const Hardware& hw) { return node_overhead(hw.host, idle_components_w(hw)).wall_w; }

namespace {

void check_activity(const Hardware& hw, const ActivityTimes& a) {
  if (!std::isfinite(a.makespan_s) || a.makespan_s < 0)
    throw ModelError("power model: negative or non-finite makespan");
  const double t = a.makespan_s;
  require_busy(a.gpu_busy_s, t * hw.gpu_count, "GPU");
  if (a.gpu_load_s >= 0) require_busy(a.gpu_load_s, a.gpu_busy_s, "GPU full-power");
  if (a.nvme_load_s >= 0) require_busy(a.nvme_load_s, a.nvme_busy_s, "NVMe full-power");
  if (a.cpu_load_s >= 0) require_busy(a.cpu_load_s, a.cpu_busy_s, "CPU all-core");
  require_busy(a.cpu_busy_s, t, "CPU");
  require_busy(a.dram_busy_s, t, "DRAM");
  require_busy(a.nvme_busy_s, hw.nvme.count > 0 ? t : 0.0, "NVMe");
}

// Each component's energy above its idle power for `part`'s work (no idle terms).
EnergyBreakdown dynamic_energy(const Hardware& hw, const PartActivity& part) {
  EnergyBreakdown e;
  // No GPU-second draws above the power limit: work that does not say its load (1, full power)
  // draws the cap's share; the workloads that do already keep theirs within it.
  e.gpu_j = (hw.gpu.tdp_w - hw.gpu.idle_w) *
            std::min(part.gpu_load_s, part.gpu_busy_s * cap_share(hw.gpu));
  // The simulator's "cpu" resource is the host computing: each booking's load is the share of
  // every socket's cores it keeps busy (cpu_core_load; attention over the KV cache spreads over
  // all of them, a staging copy on one thread takes one); and
  // each GPU-second of kernels keeps the host thread that drives the GPU spinning on one core
  // (CUDA's default scheduling; see power.hpp), a core's share of the socket's dynamic range.
  const double socket_dynamic_w = hw.host.cpu_tdp_w - hw.host.cpu_idle_w;
  const double core_dynamic_w =
      hw.host.cores_per_socket > 0 ? socket_dynamic_w / hw.host.cores_per_socket : 0.0;
  const double cpu_loaded_s =
      part.cpu_load_s < 0 ? part.cpu_busy_s : std::min(part.cpu_load_s, part.cpu_busy_s);
  e.cpu_j = hw.host.sockets * socket_dynamic_w * cpu_loaded_s + core_dynamic_w * part.gpu_busy_s;
  e.dram_j = hw.host.dram_gb * (hw.host.dram_w_per_gb_active - hw.host.dram_w_per_gb_idle) *
             part.dram_busy_s;
  // The array at full dynamic power for its load-weighted seconds (nvme_load: its rate in each
  // direction); work that does not say its load counts every busy second at active_w.
  if (hw.nvme.count > 0)
    e.nvme_j = hw.nvme.count * (hw.nvme.drive.active_w - hw.nvme.drive.idle_w) *
               (part.nvme_load_s < 0 ? part.nvme_busy_s
                                     : std::min(part.nvme_load_s, part.nvme_busy_s));
  return e;
}

PartActivity whole_run(const ActivityTimes& a) {
  return PartActivity{a.gpu_busy_s,  a.gpu_load_s < 0 ? a.gpu_busy_s : a.gpu_load_s,
                      a.cpu_busy_s,  a.dram_busy_s,
                      a.nvme_busy_s, a.nvme_load_s < 0 ? a.nvme_busy_s : a.nvme_load_s,
                      a.cpu_load_s < 0 ? a.cpu_busy_s : a.cpu_load_s};
}

// A part's CPU all-core seconds, every busy second where it does not say.
double cpu_loaded_s(const PartActivity& p) { return p.cpu_load_s < 0 ? p.cpu_busy_s : p.cpu_load_s; }

// A part's NVMe load-weighted seconds, every busy second where it does not say.
double nvme_loaded_s(const PartActivity& p) { return p.nvme_load_s < 0 ? p.nvme_busy_s : p.nvme_load_s; }

// integrate_energy without its input checks.
EnergyBreakdown node_energy(const Hardware& hw, const ActivityTimes& a) {
  const double t = a.makespan_s;
  EnergyBreakdown e = dynamic_energy(hw, whole_run(a));
  e.gpu_j += hw.gpu_count * hw.gpu.idle_w * t;
  e.cpu_j += hw.host.sockets * hw.host.cpu_idle_w * t;
  e.dram_j += hw.host.dram_gb * hw.host.dram_w_per_gb_idle * t;
  if (hw.nvme.count > 0) e.nvme_j += hw.nvme.count * hw.nvme.drive.idle_w * t;
  e.platform_j = hw.host.platform_w * t;
  if (t > 0) {
    // Fans and PSUs at the run's average DC power (see power.hpp).
    const NodeOverhead o = node_overhead(hw.host, e.dc_j() / t);
    e.fan_j = o.fan_w * t;
    e.psu_loss_j = o.psu_loss_w * t;
  }
  return e;
}

}  // namespace

EnergyBreakdown integrate_energy(const Hardware& hw, const ActivityTimes& a, double pue) {
  check_power_inputs(hw);
  if (!std::isfinite(pue) || pue < 1)
    throw ModelError("economics.pue is " + format::exact(pue) +
                     "; power usage effectiveness is facility power / IT power, so it is >= 1");
  check_activity(hw, a);
  EnergyBreakdown e = node_energy(hw, a);
  e.pue = pue;
  return e;
}

EnergyByPhase phase_energy(const Hardware& hw, const ActivityTimes& a) {
  check_power_inputs(hw);
  check_activity(hw, a);
  const double t = a.makespan_s;
  // The fans and PSU loss as a share of the components' DC energy, carried by each part in
  // proportion to its own.
  const EnergyBreakdown whole = node_energy(hw, a);
  const double components_j = whole.dc_j() - whole.fan_j;
  const double overhead = components_j > 0 ? whole.it_j() / components_j : 1.0;
  EnergyByPhase p;
  p.prefill_j = dynamic_energy(hw, a.prefill).it_j() + hw.gpu.idle_w * a.prefill.gpu_busy_s;
  p.decode_j = dynamic_energy(hw, a.decode).it_j() + hw.gpu.idle_w * a.decode.gpu_busy_s;
  // Whatever the two parts leave of the totals is work of neither (the workload tags its own).
  const PartActivity all = whole_run(a);
  // What the parts leave of a total; a remainder within rounding of the total is none.
  const auto rest_of = [](double total, double prefill, double decode) {
    const double r = total - prefill - decode;
    return r > 1e-9 * total ? r : 0.0;
  };
  const PartActivity rest{rest_of(all.gpu_busy_s, a.prefill.gpu_busy_s, a.decode.gpu_busy_s),
                          rest_of(all.gpu_load_s, a.prefill.gpu_load_s, a.decode.gpu_load_s),
                          rest_of(all.cpu_busy_s, a.prefill.cpu_busy_s, a.decode.cpu_busy_s),
                          rest_of(all.dram_busy_s, a.prefill.dram_busy_s, a.decode.dram_busy_s),
                          rest_of(all.nvme_busy_s, a.prefill.nvme_busy_s, a.decode.nvme_busy_s),
                          rest_of(all.nvme_load_s, nvme_loaded_s(a.prefill),
                                  nvme_loaded_s(a.decode)),
                          rest_of(all.cpu_load_s, cpu_loaded_s(a.prefill),
                                  cpu_loaded_s(a.decode))};
  p.other_j = dynamic_energy(hw, rest).it_j() + hw.gpu.idle_w * rest.gpu_busy_s;
  p.io_wait_j = hw.gpu.idle_w * std::max(0.0, hw.gpu_count * t - all.gpu_busy_s);
  p.idle_j = idle_components_w(hw) * t - hw.gpu_count * hw.gpu.idle_w * t;
  for (double* part : {&p.prefill_j, &p.decode_j, &p.io_wait_j, &p.idle_j, &p.other_j})
    *part *= overhead;
  return p;
}

}  // namespace tiersim
