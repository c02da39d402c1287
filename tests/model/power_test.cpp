// Power by activity: how much of its dynamic range a GPU kernel draws, and energy by phase.
#include <catch2/catch.hpp>

#include "model/errors.hpp"
#include "model/power.hpp"

using namespace tiersim;

namespace {

// Round numbers so every expected joule can be checked by hand.
Hardware hand_hardware() {
  Hardware hw;
  hw.gpu.name = "gpu";
  hw.gpu.tdp_w = 300;
  hw.gpu.idle_w = 100;
  hw.gpu.memory_power_fraction = 0.5;
  hw.gpu_count = 2;
  hw.host.name = "host";
  hw.host.sockets = 1;
  hw.host.cpu_tdp_w = 200;
  hw.host.cpu_idle_w = 50;
  hw.host.dram_gb = 100;
  hw.host.dram_w_per_gb_active = 0.2;
  hw.host.dram_w_per_gb_idle = 0.05;
  hw.host.platform_w = 100;
  hw.nvme.count = 1;
  hw.nvme.drive.name = "drive";
  hw.nvme.drive.active_w = 20;
  hw.nvme.drive.idle_w = 5;
  return hw;
}

}  // namespace

TEST_CASE("a kernel draws the dynamic power of what it keeps busy", "[power]") {
  GpuSpec gpu;
  gpu.memory_power_fraction = 0.6;
  // Bound by its math: the whole range (the board's power limit), whatever its memory traffic.
  CHECK(gpu_dynamic_fraction(gpu, KernelTime{1.0, 1.0, 0.3}) == Approx(1.0));
  // Bound by memory streaming at the achieved bandwidth: the memory fraction, plus its math.
  CHECK(gpu_dynamic_fraction(gpu, KernelTime{1.0, 0.0, 1.0}) == Approx(0.6));
  CHECK(gpu_dynamic_fraction(gpu, KernelTime{1.0, 0.1, 1.0}) == Approx(0.7));
  // Launch gaps draw nothing above idle: half the time in gaps halves the draw.
  CHECK(gpu_dynamic_fraction(gpu, KernelTime{1.0, 0.0, 1.0}.plus_gap(1.0)) == Approx(0.3));
  // Never above the power limit, never below idle.
  CHECK(gpu_dynamic_fraction(gpu, KernelTime{1.0, 1.0, 1.0}) == Approx(1.0));
  CHECK(gpu_dynamic_fraction(gpu, KernelTime{}) == 0.0);
}

TEST_CASE("GPU energy counts busy time at the share of power the kernels draw", "[power]") {
  const Hardware hw = hand_hardware();
  ActivityTimes a;
  a.makespan_s = 10;
  a.gpu_busy_s = 10;  // of 20 GPU-seconds
  a.gpu_load_s = 4;
  const EnergyBreakdown e = integrate_energy(hw, a, 1.0);
  // 2 GPUs x 100 W x 10 s + (300 - 100) W x 4 s.
  CHECK(e.gpu_j == Approx(2800));
  // Without a load every busy second is at full power, as before power by activity.
  a.gpu_load_s = -1;
  CHECK(integrate_energy(hw, a, 1.0).gpu_j == Approx(2000 + 200 * 10));
  // More full-power seconds than busy seconds is an error, not extra energy.
  a.gpu_load_s = 11;
  CHECK_THROWS_AS(integrate_energy(hw, a, 1.0), ModelError);
}

TEST_CASE("energy by phase adds up to the energy by component", "[power]") {
  const Hardware hw = hand_hardware();
  ActivityTimes a;
  a.makespan_s = 10;
  a.gpu_busy_s = 12;
  a.gpu_load_s = 7;
  a.cpu_busy_s = 4;
  a.dram_busy_s = 5;
  a.nvme_busy_s = 6;
  a.prefill = PartActivity{2, 2, 0, 1, 1};
  a.decode = PartActivity{8, 4, 4, 4, 5};
  const EnergyBreakdown e = integrate_energy(hw, a, 1.0);
  const EnergyByPhase p = phase_energy(hw, a);
  CHECK(p.prefill_j + p.decode_j + p.io_wait_j + p.idle_j + p.other_j == Approx(e.it_j()));
  // Prefill: 200 W x 2 full-power GPU-seconds + DRAM 100 GB x 0.15 W x 1 s + drive 15 W x 1 s,
  // plus the GPUs' idle power over their 2 busy seconds.
  CHECK(p.prefill_j == Approx(400 + 15 + 15 + 200));
  // The GPUs ran no kernel for 20 - 12 GPU-seconds: idle power while they wait.
  CHECK(p.io_wait_j == Approx(100 * 8));
  // Everything else at idle: CPU 50 W, DRAM 5 W, drive 5 W, platform 100 W over 10 s.
  CHECK(p.idle_j == Approx(1600));
  // Work of neither part: 2 GPU-seconds, 1 at full power.
  CHECK(p.other_j == Approx(200 * 1 + 100 * 2));
}
