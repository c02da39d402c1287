#pragma once
// Power and energy of one node over a simulated run. Pure arithmetic: the simulator (see
// sim/economics.hpp) turns its timeline into ActivityTimes; this file turns those into joules.
//
// Model: every component draws its idle power for the whole run and the difference to its active
// power while it works, so
//     E = idle_w * T + (active_w - idle_w) * busy_s
// per component. A GPU that waits for weights therefore costs idle power, not board power.
// Active power is the catalog's maximum (GPU tdp_w, CPU cpu_tdp_w, drive active_w): an upper
// bound for memory-bound kernels, which draw somewhat less than the board limit.
#include <string>

#include "model/scenario.hpp"

namespace tiersim {

// How long each component worked during a run of makespan_s seconds.
struct ActivityTimes {
  double makespan_s = 0;
  double gpu_busy_s = 0;   // GPU-seconds: sum over all GPUs (two GPUs busy 1 s = 2 s)
  double cpu_busy_s = 0;   // seconds all host sockets compute (the simulator's "cpu" resource)
  double dram_busy_s = 0;  // seconds of saturated-equivalent DRAM bus traffic, <= makespan_s
  double nvme_busy_s = 0;  // seconds the RAID-0 array transfers (all drives work together)
};

// Joules per component over the run. IT energy is what the node itself draws; facility energy
// multiplies it by the data centre's PUE (cooling, power distribution).
struct EnergyBreakdown {
  double gpu_j = 0;
  double cpu_j = 0;
  double dram_j = 0;
  double nvme_j = 0;
  double platform_j = 0;
  double pue = 1;
  double it_j() const { return gpu_j + cpu_j + dram_j + nvme_j + platform_j; }
  double facility_j() const { return it_j() * pue; }
};

// Idle power of the whole node (every component at idle), watts, IT level.
double node_idle_w(const Hardware& hw);

// Throws ModelError when a power figure is negative, an active power is below its idle power
// (the message names the field and how to fix it), or the activity times are outside 0..T.
void check_power_inputs(const Hardware& hw);

// E = idle * T + (active - idle) * busy for GPUs, CPU sockets, DRAM, drives; platform_w * T.
EnergyBreakdown integrate_energy(const Hardware& hw, const ActivityTimes& activity, double pue);

}  // namespace tiersim
