#pragma once
// Power and energy of one node over a simulated run. Pure arithmetic: the simulator (see
// sim/economics.hpp) turns its timeline into ActivityTimes; this file turns those into joules.
//
// Model: every component draws its idle power for the whole run and, while it works, a share of
// the difference to its active power, so
//     E = idle_w * T + (active_w - idle_w) * load_s
// per component, where load_s is its busy time weighted by how hard the work drives it (1 = full
// active power). A GPU that waits for weights therefore costs idle power, not board power, and a
// GPU streaming weights in a memory-bound kernel draws less than one at full compute
// (gpu_power_limited). Active power is the catalog's maximum (GPU tdp_w, the board power limit
// a compute-bound kernel runs at; CPU cpu_tdp_w; drive active_w). DRAM draws its full active
// power while busy: DRAM busy time is already its traffic over its bandwidth. The host's work
// draws by the cores it keeps busy (cpu_core_load). A drive draws by its rate in each direction
// (nvme_load): active_read_w or active_write_w at its rated sequential rate, in proportion below
// it.
//
// A board set to a power limit below tdp_w (power_limit_w), or a group of kernels whose math and
// memory traffic together would draw more than tdp_w, runs at a lower SM clock: its math slows
// until it draws the limit (gpu_power_limited), so the time model and the power model agree.
//
// The inference and serving workloads (FlexGen's runtime included) give each GPU step its share,
// at the clock the limit allows; work that does not say (training steps, checkpoint copies)
// counts at full power, as before this model, which under a power limit is the limit (that work
// is not slowed).
//
// The host computes while its GPUs do: every process that drives a GPU waits for its kernels in
// a spinning host thread (CUDA's default scheduling, cudaDeviceScheduleAuto, spins instead of
// yielding while the process has fewer active contexts than the host has logical processors:
// CUDA Runtime API, cudaSetDeviceFlags). So each GPU-second of kernels keeps one host core busy,
// at a core's share of the socket's dynamic range, (cpu_tdp_w - cpu_idle_w) / cores_per_socket.
// While the host itself computes (the cpu role) each piece of work charges the cores it keeps busy
// (cpu_core_load): attention on the CPU and PyTorch's intra-op copies every core, a driver's
// pageable staging copy or a page-fault loop on the calling thread one. A GPU waiting for that
// result runs no kernel, so the two barely overlap.
//
// What the components draw is DC power. Around them the node spends (node_overhead):
//   fans:  fan_max_w x s^3 at speed s = clamp(heat / cooling_design_w, fan_min_speed, 1), the
//          heat being the components' DC power (fan affinity laws: airflow goes with speed, power
//          with its cube; a fan table that holds the temperature rise moves air in proportion to
//          the heat);
//   PSUs:  the conversion loss, AC input = DC load / efficiency at the load fraction of the
//          PSUs that share it (psu_efficiency: the 80 PLUS certification points).
// Both are evaluated at the run's average DC power: fans answer temperatures that move over
// minutes, and the efficiency curve is flat near the load of a busy node. The sum is the node's
// power at the wall, its AC input: what a power analyzer on its inlet measures (MLPerf Power),
// and the IT power that PUE multiplies (The Green Grid counts IT equipment at its power input).
// A host without fan or PSU fields keeps both in platform_w, as the generic classes do.
//
// Component power is attached by role (sim/engine/kinds.hpp ResourceRole: gpu, cpu, nvme, and the
// PCIe links' bytes as DRAM traffic), never by resource name, as SimGrid's energy plugin attaches
// a host's power profile to the host.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "model/perf.hpp"
#include "model/scenario.hpp"

namespace tiersim {

// The board's power limit [W]: power_limit_w where set, else tdp_w.
double gpu_power_cap_w(const GpuSpec& gpu);

// A group of GPU kernels as the board runs it under its power limit.
struct LimitedKernels {
  double s = 0;            // [s] the group's time at the clock the limit allows
  double load = 0;         // share of the dynamic range (tdp_w - idle_w) drawn over s, 0..1
  double clock_ratio = 1;  // SM clock over the clock the achieved rates were measured at, (0, 1]
};
// The time model's rates (achieved FP16/FP8 GEMM rates, memory bandwidth) are a board's at its
// tdp_w, where a kernel at full math rate draws the whole dynamic range (a dense GEMM runs at
// tdp_w; a rate measured in short runs at the boost clock is taken at the share the board keeps
// under its limit, where that share is measured: GpuSpec::fp16_power_limited_share), its memory
// traffic at full rate memory_power_fraction of it, and launch gaps neither.
// At those rates the group would draw demand = (compute_s + memory_power_fraction x memory_s) / s
// of the range (its load where that is within the limit; 0 for an empty group): above the
// cap share (gpu_power_cap_w - idle_w) / (tdp_w - idle_w) (a power_limit_w below tdp_w, or math
// and memory both near full rate), the power controller lowers the SM clock until the group's
// power equals the cap (NVML's power-cap clock throttling; the memory clock is not lowered).
// At clock ratio r:
//   - the math takes compute_s / r, and the group's time grows by as much as that exceeds the
//     longer of its math and memory time: s(r) = s + max(0, compute_s / r - max(compute_s,
//     memory_s)) (a compute-bound group stretches by its math, a memory-bound one only once its
//     math outgrows its memory traffic);
//   - the math's energy per operation goes as V^2 ~ r^(clock_power_exponent - 1) (its power
//     as r^clock_power_exponent), the memory's is unchanged:
//     load(r) = (compute_s x r^(exponent - 1) + memory_power_fraction x memory_s) / s(r).
// r solves load(r) = cap share (load rises with r). A group with no math whose memory traffic
// alone exceeds the cap keeps its time, its load held at the cap share. Throws ModelError for
// a power_limit_w above tdp_w or not above idle_w.
LimitedKernels gpu_power_limited(const GpuSpec& gpu, const KernelTime& k);

// The clock ratio search of gpu_power_limited: [lo, hi] after sixty halvings of [0, 1], lo the
// largest point they reach with load(lo) <= cap. `load` (a callable double -> double, called
// directly: this runs in every power-limited step) must never decrease with its argument (and
// exceed cap at 1); the result is the plain halvings' to the bit, in fewer evaluations.
// Sixty halvings of [0, 1] for the largest r with load(r) <= cap, where load never decreases with
// r, even as computed: every operation in it rounds monotonically. The halvings visit the dyadic
// intervals [j / 2^n, (j + 1) / 2^n] that hold the crossing, so any such interval whose ends
// straddle the cap (load(lo) <= cap < load(hi)) is one they pass through: every earlier midpoint
// lies outside it and compares as its nearer end does. Newton's method from r = 1 finds the
// crossing to about 1e-15 in a few evaluations; the halvings then start from the level-44
// interval around it once its ends are checked, and stop where the midpoint rounds onto an end
// (nothing changes after that). The result is the sixty halvings' to the bit (tests/model/
// power_test.cpp compares them). The power evaluations were most of a power-limited serving
// run's time: in the MLPerf DGX H100 MaxQ run about a quarter of them remain; over the test's
// wide random loads, where Newton's step often leaves (0, 1) and the plain halvings decide,
// about three quarters (45 of 60 on average).
template <class Load>
std::pair<double, double> power_cap_bisection(const Load& load, double cap) {
  constexpr int kHalvings = 60;
  constexpr int kLevel = 44;
  double lo = 0, hi = 1;
  int done = 0;
  // Newton on load(r) - cap with a central difference: load has a kink where the math stops
  // bounding the time, which the check below catches like any other miss.
  double r = 1;
  for (int i = 0; i < 8; ++i) {
    const double h = 1e-7 * r;
    const double slope = (load(r + h) - load(r - h)) / (2 * h);
    if (!(slope > 0) || !std::isfinite(slope)) break;
    const double next = r - (load(r) - cap) / slope;
    if (!(next > 0 && next < 1)) break;
    const bool close = std::fabs(next - r) < 1e-15;
    r = next;
    if (close) break;
  }
  const double scale = std::ldexp(1.0, kLevel);
  const double a = std::floor(r * scale) / scale, b = a + 1 / scale;
  if (a > 0 && b < 1 && !(load(a) > cap) && load(b) > cap) {
    lo = a;
    hi = b;
    done = kLevel;
  }
  for (int i = done; i < kHalvings; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid == lo || (mid == hi && hi < 1)) break;  // fixed from here on
    (load(mid) > cap ? hi : lo) = mid;
  }
  return {lo, hi};
}

// Which way an NVMe transfer moves data.
enum class IoDirection { kRead, kWrite };

// Active power of one drive streaming at its rated sequential rate in `dir` [W]: active_read_w or
// active_write_w where the catalog gives it, else active_w.
double drive_active_w(const NvmeSpec& drive, IoDirection dir);

// Share of the array's dynamic range (count x (active_w - idle_w)) a transfer of `bytes` that
// keeps the array busy for `busy_s` draws, 0..1: the direction's share of the range,
// (drive_active_w(dir) - idle_w) / (active_w - idle_w), times the rate it achieves over the
// array's rated rate in that direction (the device model's peak bandwidth, the profile's where
// calibrated, x count), at most 1. A drive's power rises with the data it moves (its NAND, its
// controller and its link work per byte), so the Tag::load of an NVMe booking is this share and
// the drive draws idle + (drive_active_w(dir) - idle_w) x rate / rated rate: a read at a shallow
// queue or small blocks, which the device model slows, costs the same energy per byte rather
// than more. 1 where the array has no rated rate or no range; 0 for an empty transfer.
double nvme_load(const NvmeArray& nvme, IoDirection dir, double bytes, double busy_s);

// Share of the host's cores (every core of every socket, model/perf.hpp cpu_threads) that work
// on `threads` threads keeps busy, 0..1: the Tag::load of a cpu-role booking. A core computing
// draws its share of the socket's dynamic range, (cpu_tdp_w - cpu_idle_w) / cores_per_socket, so
// a one-thread copy costs one core's power, not every socket's.
double cpu_core_load(const HostSpec& host, double threads);

// What the components did in one part of a run (the prefill passes, the decode passes).
struct PartActivity {
  double gpu_busy_s = 0;   // GPU-seconds of kernels
  double gpu_load_s = 0;   // of which at full dynamic power (busy weighted by its load above)
  double cpu_busy_s = 0;   // seconds all host sockets compute
  double dram_busy_s = 0;  // seconds of saturated-equivalent DRAM bus traffic
  double nvme_busy_s = 0;  // seconds the RAID-0 array transfers
  // of which at full dynamic power (busy weighted by nvme_load); < 0: every busy second at full
  double nvme_load_s = -1;
  // cpu_busy_s weighted by the share of the host's cores the work keeps busy (cpu_core_load);
  // < 0: every busy second with all cores
  double cpu_load_s = -1;
};

// How long each component worked during a run of makespan_s seconds.
struct ActivityTimes {
  double makespan_s = 0;
  double gpu_busy_s = 0;   // GPU-seconds: sum over all GPUs (two GPUs busy 1 s = 2 s)
  // GPU-seconds at full dynamic power (busy time weighted by the load gpu_power_limited gives each
  // kernel), <= gpu_busy_s; < 0: every busy second at full power.
  double gpu_load_s = -1;
  double cpu_busy_s = 0;   // seconds the host computes (the cpu-role resources)
  // Of those, seconds at every core of every socket: busy time weighted by the share of the
  // cores each piece of work keeps busy (cpu_core_load), <= cpu_busy_s; < 0: all cores throughout.
  double cpu_load_s = -1;
  double dram_busy_s = 0;  // seconds of saturated-equivalent DRAM bus traffic, <= makespan_s
  double nvme_busy_s = 0;  // seconds the RAID-0 array transfers (all drives work together)
  // Array-seconds at full dynamic power (busy time weighted by each transfer's nvme_load),
  // <= nvme_busy_s; < 0: every busy second at full power (active_w).
  double nvme_load_s = -1;
  // The parts of the totals above spent on prefill and on decode passes (inference, serving);
  // the rest is work of neither (training, checkpoints, I/O).
  PartActivity prefill;
  PartActivity decode;
};

// Joules per component over the run. IT energy is what the node draws at its AC input (the DC
// components, the fans and the PSUs' conversion loss); facility energy multiplies it by the data
// centre's PUE (cooling, power distribution).
struct EnergyBreakdown {
  double gpu_j = 0;
  double cpu_j = 0;
  double dram_j = 0;
  double nvme_j = 0;
  double platform_j = 0;
  double fan_j = 0;       // fans by heat (0 where platform_w holds them)
  double psu_loss_j = 0;  // AC input less DC output of the PSUs (0 where not modelled)
  double pue = 1;
  // DC load of the components and fans: what the PSUs deliver.
  double dc_j() const { return gpu_j + cpu_j + dram_j + nvme_j + platform_j + fan_j; }
  double it_j() const { return dc_j() + psu_loss_j; }
  double facility_j() const { return it_j() * pue; }
};

// PSU efficiency (DC output over AC input, 0..1) at `load_fraction` of the rated
// output of the PSUs sharing the load, for an 80 PLUS level ("bronze", "silver", "gold",
// "platinum", "titanium"; case-insensitive). The certification's 230 V internal redundant
// minimums (80 PLUS program, CLEAResult/Ecova "80 PLUS Certified Power Supplies and
// Manufacturers", the data-centre category): bronze 81/85/81 %, silver 85/89/85, gold 88/92/88,
// platinum 90/94/91 at 20/50/100 % load, titanium 90/94/96/91 at 10/20/50/100 %. Linear between
// the points; below the lowest point its figure (real supplies fall off further at very light
// load, so that end is optimistic); above 100 % the 100 % figure. Certified minimums, so a
// certified supply does at least this well. Throws ModelError for another level or a negative
// or non-finite fraction.
double psu_efficiency(const std::string& level, double load_fraction);
// The levels psu_efficiency knows, lowest first.
const std::vector<std::string>& psu_efficiency_levels();

// What the node spends around its components at a DC load of `components_dc_w` (every component
// but the fans): its fans and its PSUs' loss, watts. Both 0 where the host does not model them.
struct NodeOverhead {
  double fan_w = 0;
  double psu_loss_w = 0;
  double wall_w = 0;  // AC input: components_dc_w + fan_w + psu_loss_w
};
// Throws ModelError when the DC load exceeds what the PSUs that share it deliver
// ((psu_count - psu_standby) x psu_rating_w).
NodeOverhead node_overhead(const HostSpec& host, double components_dc_w);

// IT energy by what the run was doing; the five parts sum to EnergyBreakdown::it_j(). Each part
// carries the fans and PSU loss in proportion to its DC energy (both overheads scale with the
// load they serve).
//   prefill_j, decode_j: every component's energy above idle for the work of that part, plus the
//                        GPUs' idle power while they run its kernels;
//   io_wait_j:           the GPUs' idle power while they run no kernel: waiting for weights, a
//                        copy, the CPU or, serving, for requests;
//   idle_j:              the idle power of everything else (CPUs, DRAM, drives, platform) over
//                        the run;
//   other_j:             the rest: work of neither part (training steps, checkpoint writes, the
//                        io benchmark).
struct EnergyByPhase {
  double prefill_j = 0;
  double decode_j = 0;
  double io_wait_j = 0;
  double idle_j = 0;
  double other_j = 0;
};

// Idle power of the whole node (every component at idle, fans and PSU loss at that load), watts
// at the AC input.
double node_idle_w(const Hardware& hw);

// Throws ModelError when a power figure is negative, an active power is below its idle power
// (the message names the field and how to fix it), or the activity times are outside 0..T.
void check_power_inputs(const Hardware& hw);

// E = idle * T + (active - idle) * load for GPUs, CPU sockets (and the cores spinning for the
// GPUs), DRAM, drives; platform_w * T; fans and PSU loss at the run's average DC power.
EnergyBreakdown integrate_energy(const Hardware& hw, const ActivityTimes& activity, double pue);

// The same energy split by phase (EnergyByPhase). Throws as integrate_energy does.
EnergyByPhase phase_energy(const Hardware& hw, const ActivityTimes& activity);

}  // namespace tiersim
