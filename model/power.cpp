#include "model/power.hpp"

#include <algorithm>
#include <cmath>

#include "model/errors.hpp"

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
                     std::to_string(value_w) +
                     " W; power must be >= 0 (fix it in the catalog entry or override " + key +
                     " in the scenario)");
}

void require_active_above_idle(double active_w, double idle_w, const char* active_key,
                               const char* idle_key, const Component& component) {
  if (active_w < idle_w)
    throw ModelError(component.text() + ": " + active_key + " (" + std::to_string(active_w) +
                     " W) is below " + idle_key + " (" + std::to_string(idle_w) +
                     " W); active power must be at least idle power");
}

// Busy time may exceed the makespan only by rounding.
void require_busy(double busy_s, double limit_s, const char* what) {
  if (!std::isfinite(busy_s) || busy_s < 0 || busy_s > limit_s * (1 + 1e-9) + 1e-12)
    throw ModelError(std::string("power model: ") + what + " busy time " + std::to_string(busy_s) +
                     " s is outside 0.." + std::to_string(limit_s) + " s");
}

}  // namespace

void check_power_inputs(const Hardware& hw) {
  const Component gpu{"GPU", hw.gpu.name};
  require_power(hw.gpu.tdp_w, "hardware.gpu.tdp_w", gpu);
  require_power(hw.gpu.idle_w, "hardware.gpu.idle_w", gpu);
  require_active_above_idle(hw.gpu.tdp_w, hw.gpu.idle_w, "hardware.gpu.tdp_w",
                            "hardware.gpu.idle_w", gpu);
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
  if (hw.nvme.count > 0) {
    const Component drive{"drive", hw.nvme.drive.name};
    require_power(hw.nvme.drive.active_w, "hardware.nvme.active_w", drive);
    require_power(hw.nvme.drive.idle_w, "hardware.nvme.idle_w", drive);
    require_active_above_idle(hw.nvme.drive.active_w, hw.nvme.drive.idle_w,
                              "hardware.nvme.active_w", "hardware.nvme.idle_w", drive);
  }
}

double gpu_dynamic_fraction(const GpuSpec& gpu, const KernelTime& k) {
  if (!(k.s > 0)) return 0;
  const double f = (k.compute_s + gpu.memory_power_fraction * k.memory_s) / k.s;
  return std::clamp(f, 0.0, 1.0);
}

double node_idle_w(const Hardware& hw) {
  return hw.gpu_count * hw.gpu.idle_w + hw.host.sockets * hw.host.cpu_idle_w +
         hw.host.dram_gb * hw.host.dram_w_per_gb_idle +
         (hw.nvme.count > 0 ? hw.nvme.count * hw.nvme.drive.idle_w : 0.0) + hw.host.platform_w;
}

namespace {

void check_activity(const Hardware& hw, const ActivityTimes& a) {
  if (!std::isfinite(a.makespan_s) || a.makespan_s < 0)
    throw ModelError("power model: negative or non-finite makespan");
  const double t = a.makespan_s;
  require_busy(a.gpu_busy_s, t * hw.gpu_count, "GPU");
  if (a.gpu_load_s >= 0) require_busy(a.gpu_load_s, a.gpu_busy_s, "GPU full-power");
  require_busy(a.cpu_busy_s, t, "CPU");
  require_busy(a.dram_busy_s, t, "DRAM");
  require_busy(a.nvme_busy_s, hw.nvme.count > 0 ? t : 0.0, "NVMe");
}

// Each component's energy above its idle power for `part`'s work (no idle terms).
EnergyBreakdown dynamic_energy(const Hardware& hw, const PartActivity& part) {
  EnergyBreakdown e;
  e.gpu_j = (hw.gpu.tdp_w - hw.gpu.idle_w) * part.gpu_load_s;
  // The simulator's "cpu" resource is the whole host computing (attention over the KV cache
  // spreads over every core of every socket), so all sockets are active while it is busy.
  e.cpu_j = hw.host.sockets * (hw.host.cpu_tdp_w - hw.host.cpu_idle_w) * part.cpu_busy_s;
  e.dram_j = hw.host.dram_gb * (hw.host.dram_w_per_gb_active - hw.host.dram_w_per_gb_idle) *
             part.dram_busy_s;
  if (hw.nvme.count > 0)
    e.nvme_j = hw.nvme.count * (hw.nvme.drive.active_w - hw.nvme.drive.idle_w) * part.nvme_busy_s;
  return e;
}

PartActivity whole_run(const ActivityTimes& a) {
  return PartActivity{a.gpu_busy_s, a.gpu_load_s < 0 ? a.gpu_busy_s : a.gpu_load_s, a.cpu_busy_s,
                      a.dram_busy_s, a.nvme_busy_s};
}

}  // namespace

EnergyBreakdown integrate_energy(const Hardware& hw, const ActivityTimes& a, double pue) {
  check_power_inputs(hw);
  if (!std::isfinite(pue) || pue < 1)
    throw ModelError("economics.pue is " + std::to_string(pue) +
                     "; power usage effectiveness is facility power / IT power, so it is >= 1");
  check_activity(hw, a);
  const double t = a.makespan_s;
  EnergyBreakdown e = dynamic_energy(hw, whole_run(a));
  e.pue = pue;
  e.gpu_j += hw.gpu_count * hw.gpu.idle_w * t;
  e.cpu_j += hw.host.sockets * hw.host.cpu_idle_w * t;
  e.dram_j += hw.host.dram_gb * hw.host.dram_w_per_gb_idle * t;
  if (hw.nvme.count > 0) e.nvme_j += hw.nvme.count * hw.nvme.drive.idle_w * t;
  e.platform_j = hw.host.platform_w * t;
  return e;
}

EnergyByPhase phase_energy(const Hardware& hw, const ActivityTimes& a) {
  check_power_inputs(hw);
  check_activity(hw, a);
  const double t = a.makespan_s;
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
                          rest_of(all.nvme_busy_s, a.prefill.nvme_busy_s, a.decode.nvme_busy_s)};
  p.other_j = dynamic_energy(hw, rest).it_j() + hw.gpu.idle_w * rest.gpu_busy_s;
  p.io_wait_j = hw.gpu.idle_w * std::max(0.0, hw.gpu_count * t - all.gpu_busy_s);
  p.idle_j = node_idle_w(hw) * t - hw.gpu_count * hw.gpu.idle_w * t;
  return p;
}

}  // namespace tiersim
