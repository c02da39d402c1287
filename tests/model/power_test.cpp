// Power by activity: how much of its dynamic range a GPU kernel draws, energy by phase, the host
// cores that drive the GPUs, and the node around the components (fans by heat, PSU efficiency).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>

#include "model/errors.hpp"
#include "model/power.hpp"

namespace model_power_test {

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
  hw.host.cores_per_socket = 10;  // a core's share of the 150 W dynamic range: 15 W
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
  const auto load = [&](const KernelTime& k) { return gpu_power_limited(gpu, k).load; };
  // Bound by its math: the whole range (tdp_w); memory traffic on top is more than the board
  // allows, so such a group runs at a lower clock and draws the whole range.
  CHECK(load(KernelTime{1.0, 1.0, 0.3}) == Approx(1.0));
  // Bound by memory streaming at the achieved bandwidth: the memory fraction, plus its math.
  CHECK(load(KernelTime{1.0, 0.0, 1.0}) == Approx(0.6));
  CHECK(load(KernelTime{1.0, 0.1, 1.0}) == Approx(0.7));
  // Launch gaps draw nothing above idle: half the time in gaps halves the draw.
  CHECK(load(KernelTime{1.0, 0.0, 1.0}.plus_gap(1.0)) == Approx(0.3));
  // Never above tdp_w, never below idle.
  CHECK(load(KernelTime{1.0, 1.0, 1.0}) == Approx(1.0));
  CHECK(load(KernelTime{}) == 0.0);
}

TEST_CASE("a power limit lowers the clock until the kernels draw the limit", "[power]") {
  GpuSpec gpu;
  gpu.name = "gpu";
  gpu.tdp_w = 300;
  gpu.idle_w = 100;
  gpu.memory_power_fraction = 0.6;
  // At tdp_w a group within the range keeps its time and draws its demand.
  LimitedKernels run = gpu_power_limited(gpu, KernelTime{1.0, 0.5, 0.5});
  CHECK(run.s == Approx(1.0));
  CHECK(run.load == Approx(0.8));
  CHECK(run.clock_ratio == 1.0);
  // Math and memory both at full rate would draw 1.6 x the range, above tdp_w: the clock drops
  // to r with r^3 + 0.6 r = 1 (math power ~ r^3 over 1 / r seconds, memory energy unchanged),
  // r = 0.8033, and the math-bound group takes 1 / r.
  run = gpu_power_limited(gpu, KernelTime{1.0, 1.0, 1.0});
  CHECK(run.clock_ratio == Approx(0.8033).epsilon(1e-3));
  CHECK(run.s == Approx(1.0 / run.clock_ratio));
  CHECK(run.load == Approx(1.0));
  // Limited to 200 W, half the range: a compute-bound group draws r^3 of it, so r = 0.5^(1/3).
  gpu.power_limit_w = 200;
  CHECK(gpu_power_cap_w(gpu) == 200);
  run = gpu_power_limited(gpu, KernelTime{1.0, 1.0, 0.0});
  CHECK(run.clock_ratio == Approx(std::cbrt(0.5)));
  CHECK(run.s == Approx(1.0 / std::cbrt(0.5)));
  CHECK(run.load == Approx(0.5));
  // Launch gaps keep their time and lower the average: 1 s of math and 0.5 s of gaps need only
  // r^2 / (1 / r + 0.5) = 0.5 (r = 0.8982).
  run = gpu_power_limited(gpu, KernelTime{1.0, 1.0, 0.0}.plus_gap(0.5));
  CHECK(run.clock_ratio == Approx(0.8982).epsilon(1e-3));
  CHECK(run.s == Approx(0.5 + 1.0 / run.clock_ratio));
  // At the voltage floor (power in proportion to the clock) the clock halves: twice the time.
  gpu.clock_power_exponent = 1;
  CHECK(gpu_power_limited(gpu, KernelTime{1.0, 1.0, 0.0}).s == Approx(2.0));
  // A memory-bound group below the limit is not slowed.
  run = gpu_power_limited(gpu, KernelTime{1.0, 0.1, 1.0}.plus_gap(0.5));
  CHECK(run.s == Approx(1.5));
  CHECK(run.clock_ratio == 1.0);
  // Memory traffic alone above the limit: no math to slow, the load held at the limit.
  gpu.power_limit_w = 150;
  run = gpu_power_limited(gpu, KernelTime{1.0, 0.0, 1.0});
  CHECK(run.s == Approx(1.0));
  CHECK(run.load == Approx(0.25));
  // A limit above the board's maximum, or not above idle, is refused with the key to fix.
  gpu.power_limit_w = 350;
  CHECK_THROWS_WITH(gpu_power_limited(gpu, KernelTime{1.0, 1.0, 0.0}),
                    Catch::Contains("power_limit_w"));
  gpu.power_limit_w = 100;
  CHECK_THROWS_WITH(gpu_power_limited(gpu, KernelTime{1.0, 1.0, 0.0}),
                    Catch::Contains("idle_w"));
}

TEST_CASE("the clock search gives the plain sixty halvings' result to the bit", "[power]") {
  // The search gpu_power_limited ran before it started near the crossing: sixty halvings of
  // [0, 1], lo the last point that drew no more than the cap.
  const auto halvings = [](const std::function<double(double)>& load, double cap) {
    double lo = 0, hi = 1;
    for (int i = 0; i < 60; ++i) {
      const double mid = 0.5 * (lo + hi);
      (load(mid) > cap ? hi : lo) = mid;
    }
    return lo;
  };
  // The loads gpu_power_limited searches: math at the clock's power law over a time the math may
  // stop bounding (a kink), memory at a fixed energy, launch gaps; drawn over wide ranges, with
  // caps near both ends of the range (crossings near 0 and near 1).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int searched = 0;
  for (int i = 0; i < 20000; ++i) {
    const double compute_s = std::exp(-8 + 10 * u(rng)), memory_s = std::exp(-8 + 10 * u(rng));
    const double gap_s = u(rng) < 0.3 ? 0.0 : std::exp(-10 + 10 * u(rng));
    const double bound_s = std::max(compute_s, memory_s), s = bound_s + gap_s;
    const double exponent = 1 + 3 * u(rng), memory_fraction = u(rng);
    const auto load = [&](double r) {
      const double t = s + std::max(0.0, compute_s / r - bound_s);
      return (compute_s * std::pow(r, exponent - 1) + memory_fraction * memory_s) / t;
    };
    const double demand = load(1);
    const double cap = demand * (i % 3 == 0 ? 1e-3 + u(rng) * 0.05 : u(rng));
    if (!(cap < demand)) continue;
    INFO("compute " << compute_s << " memory " << memory_s << " gap " << gap_s << " exponent "
                    << exponent << " cap " << cap);
    CHECK(power_cap_bisection(load, cap).first == halvings(load, cap));
    ++searched;
  }
  CHECK(searched > 19000);
  // A load that is a step: no Newton step lands near it, and the plain halvings decide.
  const auto step = [](double r) { return r < 0.3 ? 0.1 : 0.9; };
  CHECK(power_cap_bisection(step, 0.5).first == halvings(step, 0.5));
}

TEST_CASE("GPU work that does not say its load draws the power limit, not tdp_w", "[power]") {
  Hardware hw = hand_hardware();
  hw.gpu.power_limit_w = 200;  // half of the 200 W range
  ActivityTimes a;
  a.makespan_s = 10;
  a.gpu_busy_s = 10;
  a.gpu_load_s = -1;
  // 2 GPUs x 100 W x 10 s + 10 GPU-seconds at the 200 W limit.
  CHECK(integrate_energy(hw, a, 1.0).gpu_j == Approx(2000 + 100 * 10));
  hw.gpu.power_limit_w = 400;
  CHECK_THROWS_WITH(check_power_inputs(hw), Catch::Contains("hardware.gpu.power_limit_w"));
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

TEST_CASE("a drive draws its direction's active power in proportion to its rate", "[power]") {
  Hardware hw = hand_hardware();  // active 20 W, idle 5 W: a 15 W range
  hw.nvme.count = 2;
  hw.nvme.model.read.peak_gbps = 10;  // per drive: the array's rated read is 20 GB/s
  hw.nvme.model.write.peak_gbps = 5;
  hw.nvme.drive.active_read_w = 14;  // (14 - 5) / 15 of the range at the rated read rate
  // 10 GB in 1 s: half the array's rated read rate, so half the read's share.
  CHECK(nvme_load(hw.nvme, IoDirection::kRead, 10e9, 1.0) == Approx(0.6 * 0.5));
  CHECK(nvme_load(hw.nvme, IoDirection::kRead, 20e9, 1.0) == Approx(0.6));
  // Never above the rated rate's power, and nothing moved draws nothing.
  CHECK(nvme_load(hw.nvme, IoDirection::kRead, 40e9, 1.0) == Approx(0.6));
  CHECK(nvme_load(hw.nvme, IoDirection::kRead, 0, 1.0) == 0.0);
  // No write figure: active_w, the whole range, at the rated write rate.
  CHECK(drive_active_w(hw.nvme.drive, IoDirection::kWrite) == 20);
  CHECK(nvme_load(hw.nvme, IoDirection::kWrite, 5e9, 1.0) == Approx(0.5));
  // No rated rate (a profile without one): the direction's share, as busy time charges it.
  hw.nvme.model.read.peak_gbps = 0;
  CHECK(nvme_load(hw.nvme, IoDirection::kRead, 10e9, 1.0) == Approx(0.6));

  // The energy: idle for the run, the range for the load-weighted seconds.
  ActivityTimes a;
  a.makespan_s = 10;
  a.nvme_busy_s = 8;
  a.nvme_load_s = 2;
  CHECK(integrate_energy(hw, a, 1.0).nvme_j == Approx(2 * (5 * 10 + 15 * 2)));
  a.nvme_load_s = -1;  // not said: every busy second at active_w
  CHECK(integrate_energy(hw, a, 1.0).nvme_j == Approx(2 * (5 * 10 + 15 * 8)));
  a.nvme_load_s = 9;
  CHECK_THROWS_AS(integrate_energy(hw, a, 1.0), ModelError);

  // A direction's figure is within idle..active_w.
  hw.nvme.drive.active_read_w = 25;
  CHECK_THROWS_WITH(check_power_inputs(hw), Catch::Contains("hardware.nvme.active_read_w") &&
                                                Catch::Contains("active_w"));
  hw.nvme.drive.active_read_w = 0;
  hw.nvme.drive.active_write_w = 4;
  CHECK_THROWS_WITH(check_power_inputs(hw), Catch::Contains("hardware.nvme.active_write_w"));
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
  // plus the GPUs' idle power over their 2 busy seconds and a host core (15 W) spinning for
  // each GPU-second of kernels.
  CHECK(p.prefill_j == Approx(400 + 15 + 15 + 200 + 15 * 2));
  // The GPUs ran no kernel for 20 - 12 GPU-seconds: idle power while they wait.
  CHECK(p.io_wait_j == Approx(100 * 8));
  // Everything else at idle: CPU 50 W, DRAM 5 W, drive 5 W, platform 100 W over 10 s.
  CHECK(p.idle_j == Approx(1600));
  // Work of neither part: 2 GPU-seconds, 1 at full power, and their host core.
  CHECK(p.other_j == Approx(200 * 1 + 100 * 2 + 15 * 2));
}

TEST_CASE("each GPU-second of kernels keeps one host core busy", "[power]") {
  Hardware hw = hand_hardware();
  ActivityTimes a;
  a.makespan_s = 10;
  a.gpu_busy_s = 12;
  // The socket idles at 50 W; each GPU-second adds one core's share of 200 - 50 W over 10 cores.
  CHECK(integrate_energy(hw, a, 1.0).cpu_j == Approx(50 * 10 + 15 * 12));
  // While the host computes, every core of every socket counts: the socket's whole range.
  a.cpu_busy_s = 2;
  CHECK(integrate_energy(hw, a, 1.0).cpu_j == Approx(50 * 10 + 150 * 2 + 15 * 12));
  // No kernels, no spinning core.
  a.gpu_busy_s = 0;
  a.gpu_load_s = -1;
  CHECK(integrate_energy(hw, a, 1.0).cpu_j == Approx(50 * 10 + 150 * 2));
}

TEST_CASE("PSU efficiency follows the 80 PLUS points, linear between them", "[power]") {
  // At the certification points (230 V internal redundant minimums).
  CHECK(psu_efficiency("titanium", 0.10) == Approx(0.90));
  CHECK(psu_efficiency("titanium", 0.20) == Approx(0.94));
  CHECK(psu_efficiency("titanium", 0.50) == Approx(0.96));
  CHECK(psu_efficiency("titanium", 1.00) == Approx(0.91));
  CHECK(psu_efficiency("platinum", 0.50) == Approx(0.94));
  CHECK(psu_efficiency("gold", 0.20) == Approx(0.88));
  CHECK(psu_efficiency("bronze", 1.00) == Approx(0.81));
  // Linear in between: halfway from 20 % to 50 % is halfway from 94 % to 96 %.
  CHECK(psu_efficiency("titanium", 0.35) == Approx(0.95));
  CHECK(psu_efficiency("titanium", 0.15) == Approx(0.92));
  CHECK(psu_efficiency("platinum", 0.75) == Approx(0.925));
  // Outside the points: the nearest point's figure (no extrapolation).
  CHECK(psu_efficiency("titanium", 0.0) == Approx(0.90));
  CHECK(psu_efficiency("platinum", 0.05) == Approx(0.90));
  CHECK(psu_efficiency("silver", 1.3) == Approx(0.85));
  // Level names are case-insensitive; anything else is an error naming the levels.
  CHECK(psu_efficiency("Titanium", 0.5) == Approx(0.96));
  CHECK_THROWS_WITH(psu_efficiency("diamond", 0.5), Catch::Contains("titanium"));
  CHECK_THROWS_AS(psu_efficiency("", 0.5), ModelError);
  CHECK_THROWS_AS(psu_efficiency("gold", -0.1), ModelError);
  CHECK(psu_efficiency_levels().size() == 5);
}

namespace {

// A host that models its fans and PSUs: 100 W of fans at full speed at 1,000 W of heat with a
// 20 % speed floor; two 1,000 W titanium supplies sharing the load.
HostSpec overhead_host() {
  HostSpec h;
  h.name = "host";
  h.fan_max_w = 100;
  h.fan_min_speed = 0.2;
  h.cooling_design_w = 1000;
  h.psu_count = 2;
  h.psu_rating_w = 1000;
  h.psu_efficiency = "titanium";
  return h;
}

}  // namespace

TEST_CASE("fans draw the cube of the speed the heat asks for; PSUs lose by their load",
          "[power]") {
  HostSpec h = overhead_host();
  // Half the design heat: half speed, an eighth of full fan power.
  NodeOverhead o = node_overhead(h, 500);
  CHECK(o.fan_w == Approx(12.5));
  // The PSUs carry 512.5 W of their 2,000 W: 25.6 % -> 94 + 2 x 5.6/30 % = 94.375 %.
  const double eff = 0.94 + 0.02 * (0.25625 - 0.20) / 0.30;
  CHECK(o.psu_loss_w == Approx(512.5 / eff - 512.5));
  CHECK(o.wall_w == Approx(512.5 / eff));
  // Light load: the speed floor; beyond the design heat: full speed, no more.
  CHECK(node_overhead(h, 50).fan_w == Approx(100 * 0.2 * 0.2 * 0.2));
  CHECK(node_overhead(h, 1500).fan_w == Approx(100));
  // A supply in standby leaves the load to the other: 1,000 W is 100 % of one supply (fans off
  // here, so the load is the components' alone).
  h.fan_max_w = 0;
  h.psu_standby = 1;
  CHECK(node_overhead(h, 1000).psu_loss_w == Approx(1000 / 0.91 - 1000));
  CHECK(node_overhead(h, 900).psu_loss_w == Approx(900 / 0.92 - 900));
  // More than the sharing supplies deliver is an error, not a number.
  CHECK_THROWS_WITH(node_overhead(h, 1200), Catch::Contains("PSUs deliver"));
  // A host without fan and PSU fields keeps both in platform_w: nothing added.
  const NodeOverhead none = node_overhead(HostSpec{}, 700);
  CHECK(none.fan_w == 0);
  CHECK(none.psu_loss_w == 0);
  CHECK(none.wall_w == 700);
}

TEST_CASE("the node's energy at the wall adds fans and PSU loss at its average load", "[power]") {
  Hardware hw = hand_hardware();
  const HostSpec o_host = overhead_host();
  hw.host.fan_max_w = o_host.fan_max_w;
  hw.host.fan_min_speed = o_host.fan_min_speed;
  hw.host.cooling_design_w = o_host.cooling_design_w;
  hw.host.psu_count = o_host.psu_count;
  hw.host.psu_rating_w = o_host.psu_rating_w;
  hw.host.psu_efficiency = o_host.psu_efficiency;
  ActivityTimes a;
  a.makespan_s = 10;
  a.gpu_busy_s = 10;
  a.gpu_load_s = 10;
  a.decode = PartActivity{10, 10, 0, 0, 0};
  const EnergyBreakdown e = integrate_energy(hw, a, 1.5);
  // Components: GPUs 2 x 100 W + 200 W, CPU 50 W + 15 W, DRAM 5 W, platform 100 W, drive 5 W.
  const double components_w = 400 + 65 + 5 + 100 + 5;
  CHECK(e.dc_j() - e.fan_j == Approx(components_w * 10));
  const NodeOverhead o = node_overhead(hw.host, components_w);
  CHECK(e.fan_j == Approx(o.fan_w * 10));
  CHECK(e.psu_loss_j == Approx(o.psu_loss_w * 10));
  CHECK(e.it_j() == Approx(o.wall_w * 10));
  CHECK(e.facility_j() == Approx(1.5 * o.wall_w * 10));
  // The phases still add up to the whole, each carrying its share of the overhead.
  const EnergyByPhase p = phase_energy(hw, a);
  CHECK(p.prefill_j + p.decode_j + p.io_wait_j + p.idle_j + p.other_j == Approx(e.it_j()));
  CHECK(p.decode_j == Approx((200 * 10 + 100 * 10 + 15 * 10) * e.it_j() / (components_w * 10)));
  // Idle power at the wall: components at idle, their fans and PSU loss.
  CHECK(node_idle_w(hw) == Approx(node_overhead(hw.host, 200 + 50 + 5 + 100 + 5).wall_w));
  CHECK(node_idle_w(hw) > 360);
}

TEST_CASE("fan and PSU inputs are checked with the key to fix", "[power]") {
  Hardware hw = hand_hardware();
  hw.host.fan_max_w = 100;
  CHECK_THROWS_WITH(check_power_inputs(hw), Catch::Contains("cooling_design_w"));
  hw.host.cooling_design_w = 1000;
  CHECK_NOTHROW(check_power_inputs(hw));
  hw.host.psu_count = 2;
  CHECK_THROWS_WITH(check_power_inputs(hw), Catch::Contains("psu_rating_w"));
  hw.host.psu_rating_w = 1000;
  CHECK_THROWS_WITH(check_power_inputs(hw), Catch::Contains("80 PLUS"));
  hw.host.psu_efficiency = "platinum";
  CHECK_NOTHROW(check_power_inputs(hw));
  hw.host.psu_standby = 2;
  CHECK_THROWS_WITH(check_power_inputs(hw), Catch::Contains("psu_standby"));
}
}  // namespace model_power_test
