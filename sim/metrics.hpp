#pragma once
// Every output metric, declared once as a handle: name, unit and meaning. RunResult::set(handle,
// value) takes the name and unit from the handle, so a metric cannot appear with two units, and
// RunResult::get(handle) throws for a metric the run did not report instead of reading 0. The
// JSON (`run --json` "units"), the results store, `compare`, the reports and the metric table in
// scenarios/README.md (`tiersim schema --metrics`) all read these declarations.
//
// The metrics every workload or several workloads report, and energy and cost
// (sim/economics.cpp), are declared here; a workload's own metrics in its folder
// (sim/workloads/<kind>/metrics.hpp). sim/metrics.cpp lists them all, in table order.
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace tiersim::sim {

// A metric's declaration, and the handle that reads and writes it.
struct MetricDecl {
  std::string_view name;         // stable identifier, e.g. "ttft_s"
  std::string_view unit;         // "s", "GB/s", "USD", ... ("" = dimensionless)
  std::string_view description;  // what it measures, in one sentence
  std::string_view workloads;    // which workloads report it ("energy"/"cost": every workload
                                 // with the energy-and-cost capability)
  // The `tiersim validate` group whose out-of-sample error bands this metric in a report, whatever
  // group the run's other metrics belong to: "energy" for the GPUs' own energy and power (what the
  // NVML- and DCGM-based sources measure), "system energy" for the whole node's (what MLPerf's
  // wall-power analyzers measure); empty: the run's own group.
  std::string_view validation_group = {};
};

namespace metric {

// Every workload.
inline constexpr MetricDecl kTotalS{"total_s", "s",
                                    "simulated wall time of the whole run (makespan)", "all"};
inline constexpr MetricDecl kThroughputTokensPerS{
    "throughput_tokens_per_s", "tokens/s",
    "generated_tokens / total_s: for inference batch x gen_tokens over prefill plus decode, as "
    "the published ZeRO-Inference and FlexGen figures count it; for serving every request's "
    "output over the whole run",
    "inference, serving"};
inline constexpr MetricDecl kGeneratedTokens{
    "generated_tokens", "tokens",
    "tokens generated: batch x gen_tokens (inference), the sum of the requests' outputs (serving)",
    "inference, serving"};
inline constexpr MetricDecl kWeightsBytes{"weights_bytes", "bytes",
                                          "model weight bytes at the policy's weight precision",
                                          "inference, serving"};
inline constexpr MetricDecl kNvmeReadGbpsModel{
    "nvme_read_gbps_model", "GB/s",
    "read bandwidth of the NVMe array the device model predicts at the policy's block size and "
    "queue depth (present when weights or KV cache are on NVMe)",
    "inference, serving"};
inline constexpr MetricDecl kServersForTraffic{
    "servers_for_traffic", "servers",
    "servers of this configuration a fleet needs to serve the traffic of a plan's capacity_search "
    "(traffic_requests_per_s) within its SLO: ceil(traffic / capacity_requests_per_s), each "
    "server loaded no higher than its capacity",
    "cost"};
inline constexpr MetricDecl kGpusForTraffic{
    "gpus_for_traffic", "GPUs",
    "servers_for_traffic x the GPUs of one server (hardware.gpu.count)", "cost"};
inline constexpr MetricDecl kUsdPerRequestForTraffic{
    "usd_per_request_for_traffic", "USD/request",
    "servers_for_traffic x usd_per_hour / (traffic_requests_per_s x 3600): what a request costs "
    "on the whole fleet, its last server's idle share included (energy counted at each server's "
    "capacity rate, an upper bound)",
    "cost"};
inline constexpr MetricDecl kUsdPerRequestAtCapacity{
    "usd_per_request_at_capacity", "USD/request",
    "usd_per_hour / (capacity_requests_per_s x 3600): a served request's cost when the server "
    "runs at the highest rate it sustains (in steady state it completes requests at the arrival "
    "rate)",
    "cost"};
inline constexpr MetricDecl kWriteGbps{
    "write_gbps", "GB/s",
    "bytes / total_s for a write transfer; for checkpoints, checkpoint_bytes / checkpoint_s",
    "io, checkpoint, training"};

// The time breakdown (sim/breakdown.hpp): one metric per phase of the run, named from its stage
// and activity. Declared once, as a family: find_metric() answers this declaration for every
// name of the pattern (is_phase_metric_name).
inline constexpr MetricDecl kPhaseS{
    "phase_[prefill_/decode_]<activity>_s", "s",
    "wall time on the critical path spent in one activity's work (one of the activities of "
    "sim/workloads/names.cpp with '-' as '_', e.g. phase_prefill_kv_offload_s, "
    "phase_decode_weights_nvme_s, phase_checkpoint_write_s; `waiting`: no resource busy), within "
    "the prefill or decode passes or, without a stage, the run: walking back from the end, each "
    "moment is charged to the busy interval that ended last before it; the phases add up to "
    "the simulated time, total_s (training: the two iterations it simulates) (tiersim run and compare; run --json `phases` adds busy seconds and the bottleneck "
    "resource of each)",
    "all"};

// Checkpoint.
inline constexpr MetricDecl kCheckpointS{"checkpoint_s", "s",
                                         "time to write one checkpoint (all writers, all nodes)",
                                         "checkpoint, training"};
inline constexpr MetricDecl kCheckpointBytes{
    "checkpoint_bytes", "bytes", "bytes written by one checkpoint", "checkpoint, training"};

// Energy (sim/economics.cpp, model/power.cpp): IT energy of the node over the run at its AC
// input (components, fans and PSU loss), no PUE.
inline constexpr MetricDecl kDramSizedGb{
    "dram_sized_gb", "GB",
    "DRAM that energy and cost count when hardware.host.dram_gb is the catalog's: the host-memory "
    "need +25%, each memory channel the same DIMM, at least the platform's floor (sockets x "
    "memory_channels x dimms_per_channel x min_dimm_gib), at most the catalog's dram_gb "
    "(sim/economics.hpp DramSizing)",
    "energy", "system energy"};
inline constexpr MetricDecl kEnergyJ{
    "energy_j", "J",
    "IT energy of the node over the run at its AC input: the sum of the seven parts below",
    "energy", "system energy"};
inline constexpr MetricDecl kEnergyJGpu{
    "energy_j_gpu", "J",
    "GPU energy: idle power throughout, plus the dynamic range (board power limit - idle) times "
    "the share each kernel draws (all of it at full compute, memory_power_fraction of it while "
    "streaming memory, none in launch gaps)",
    "energy", "energy"};
inline constexpr MetricDecl kEnergyJCpu{
    "energy_j_cpu", "J", "CPU energy (busy while computing on the host, idle otherwise)", "energy", "system energy"};
inline constexpr MetricDecl kEnergyJDram{
    "energy_j_dram", "J", "DRAM energy (active while the memory bus is busy)", "energy", "system energy"};
inline constexpr MetricDecl kEnergyJNvme{
    "energy_j_nvme", "J", "NVMe drives' energy (active while the array transfers)", "energy", "system energy"};
inline constexpr MetricDecl kEnergyJPlatform{
    "energy_j_platform", "J",
    "the rest of the server (board, BMC, NICs, switches; fans and PSU loss where the host does "
    "not model them apart) at constant power",
    "energy", "system energy"};
inline constexpr MetricDecl kEnergyJFans{
    "energy_j_fans", "J",
    "fans by heat: full-speed fan power x speed^3, speed following the node's DC power "
    "(model/power.hpp node_overhead); 0 where the host keeps its fans in platform_w",
    "energy", "system energy"};
inline constexpr MetricDecl kEnergyJPsuLoss{
    "energy_j_psu_loss", "J",
    "the power supplies' conversion loss, AC input less DC output at the 80 PLUS efficiency of "
    "their load; 0 where the host keeps it in platform_w",
    "energy", "system energy"};
inline constexpr MetricDecl kEnergyJPrefill{
    "energy_j_prefill", "J",
    "energy_j by phase (model/power.hpp EnergyByPhase; the five phases sum to energy_j): every "
    "component's energy above idle for the prefill passes' work, plus the GPUs' idle power "
    "while they run prefill kernels",
    "energy"};
inline constexpr MetricDecl kEnergyJDecode{"energy_j_decode", "J", "the same for the decode passes",
                                           "energy", "system energy"};
inline constexpr MetricDecl kEnergyJIoWait{
    "energy_j_io_wait", "J",
    "the GPUs' idle power while they run no kernel (waiting for weights, copies, the CPU or, "
    "serving, for requests)",
    "energy", "system energy"};
inline constexpr MetricDecl kEnergyJIdle{
    "energy_j_idle", "J", "the idle power of CPUs, DRAM, drives and platform over the run",
    "energy", "system energy"};
inline constexpr MetricDecl kEnergyJOther{
    "energy_j_other", "J",
    "energy above idle of work that is neither prefill nor decode (training, checkpoints, I/O)",
    "energy", "system energy"};
inline constexpr MetricDecl kFacilityEnergyJ{"facility_energy_j", "J", "energy_j x economics.pue",
                                             "energy", "system energy"};
inline constexpr MetricDecl kAvgPowerW{
    "avg_power_w", "W",
    "energy_j / total_s: the node's power at its AC input (the wall), as a power analyzer on its "
    "inlet measures it and as PUE counts IT power",
    "energy", "system energy"};
inline constexpr MetricDecl kDcAvgPowerW{
    "dc_avg_power_w", "W",
    "(energy_j - energy_j_psu_loss) / total_s: the DC power the node's PSUs deliver", "energy",
    "system energy"};
inline constexpr MetricDecl kFacilityAvgPowerW{"facility_avg_power_w", "W",
                                               "facility_energy_j / total_s", "energy", "system energy"};
inline constexpr MetricDecl kGpuAvgPowerW{
    "gpu_avg_power_w", "W",
    "energy_j_gpu / total_s: the node's GPUs together, as NVML-based measurements report them",
    "energy", "energy"};
inline constexpr MetricDecl kEnergyJPerToken{
    "energy_j_per_token", "J/token",
    "IT energy per generated token (device level, no cooling, as vendor claims count it)",
    "energy", "system energy"};
inline constexpr MetricDecl kGpuEnergyJPerToken{
    "gpu_energy_j_per_token", "J/token",
    "GPU energy (energy_j_gpu) per generated token: what NVML-based benchmarks measure", "energy", "energy"};
inline constexpr MetricDecl kFacilityEnergyJPerToken{
    "facility_energy_j_per_token", "J/token", "facility energy per generated token", "energy", "system energy"};
inline constexpr MetricDecl kTokensPerKwh{"tokens_per_kwh", "tokens/kWh",
                                          "generated tokens per kWh of IT energy", "energy", "system energy"};
inline constexpr MetricDecl kEnergyJPerRequest{"energy_j_per_request", "J/request",
                                               "IT energy per served request (serving)", "energy", "system energy"};

// Cost (model/cost.cpp): present only when every component in use has a price.
inline constexpr MetricDecl kCapexUsd{
    "capex_usd", "USD", "purchase price of the configuration: the sum of the four parts below",
    "cost"};
inline constexpr MetricDecl kCapexUsdGpu{"capex_usd_gpu", "USD", "GPUs", "cost"};
inline constexpr MetricDecl kCapexUsdPlatform{"capex_usd_platform", "USD",
                                              "server without GPUs, DRAM and drives", "cost"};
inline constexpr MetricDecl kCapexUsdDram{"capex_usd_dram", "USD", "DRAM", "cost"};
inline constexpr MetricDecl kCapexUsdDrives{"capex_usd_drives", "USD", "NVMe drives", "cost"};
inline constexpr MetricDecl kCapexUsdPerHour{
    "capex_usd_per_hour", "USD/h",
    "capex amortised over economics.amortization_years of serving at economics.duty_cycle", "cost"};
inline constexpr MetricDecl kEnergyUsdPerHour{
    "energy_usd_per_hour", "USD/h",
    "facility energy (IT x PUE) per serving hour at economics.usd_per_kwh", "cost"};
inline constexpr MetricDecl kUsdPerHour{"usd_per_hour", "USD/h",
                                        "capex_usd_per_hour + energy_usd_per_hour", "cost"};
inline constexpr MetricDecl kUsdPerMillionTokens{
    "usd_per_million_tokens", "USD/Mtoken", "usd_per_hour per million generated tokens", "cost"};
inline constexpr MetricDecl kUsdPerRequest{
    "usd_per_request", "USD/request",
    "usd_per_hour per served request at the run's request rate (serving)", "cost"};
inline constexpr MetricDecl kTokensPerUsd{"tokens_per_usd", "tokens/USD",
                                          "generated tokens per dollar of usd_per_hour", "cost"};
inline constexpr MetricDecl kReturnPerDollar{
    "return_per_dollar", "tokens/s per 1000 USD capex",
    "throughput_tokens_per_s per thousand dollars of capex", "cost"};

// Rent versus buy (model/cost.hpp compute_rent): present only when economics.cloud_instance

// names an instance of prices.yaml `cloud`, and the cost metrics above are present.
inline constexpr MetricDecl kRentUsdPerHour{
    "rent_usd_per_hour", "USD/h",
    "on-demand price of the named cloud instance, paid only for serving hours", "cost"};
inline constexpr MetricDecl kRentUsdPerMillionTokens{
    "rent_usd_per_million_tokens", "USD/Mtoken",
    "rent_usd_per_hour per million generated tokens (compare with usd_per_million_tokens)", "cost"};
inline constexpr MetricDecl kRentUsdPerRequest{
    "rent_usd_per_request", "USD/request",
    "rent_usd_per_hour per served request at the run's request rate (serving)", "cost"};
inline constexpr MetricDecl kBuyBreakevenDutyCycle{
    "buy_breakeven_duty_cycle", "",
    "duty cycle above which owning costs less per serving hour than renting (capex and idle "
    "power are paid around the clock, rent only while serving); above 1: renting is cheaper even "
    "at full use; absent when the electricity alone costs more than the rent",
    "cost"};

}  // namespace metric

// Every declared metric, in the order `tiersim schema --metrics` and scenarios/README.md list
// them. Names are stable: stored results and reports read them.
const std::vector<MetricDecl>& metric_declarations();
// nullptr when `name` is not declared.
const MetricDecl* find_metric(std::string_view name);
// The declaration of `name`; throws std::logic_error (a programming error, not bad input) when
// it is not declared.
const MetricDecl& metric_decl(std::string_view name);
// The names of `metrics`, in order: for lists a table or chart keeps by name.
std::vector<std::string> metric_names(std::initializer_list<MetricDecl> metrics);
// The declarations as a Markdown table (scenarios/README.md's "Output metrics").
std::string metrics_markdown();

}  // namespace tiersim::sim
