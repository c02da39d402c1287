#include "sim/metrics.hpp"

#include <algorithm>
#include <stdexcept>

namespace tiersim::sim {

namespace {

// Every metric a run can report, in the order `tiersim schema --metrics` and
// scenarios/README.md list them. Names are stable: stored results and reports read them.
// Per-workload groups first, then energy and cost (sim/economics.cpp), which every workload with
// the energy-and-cost capability adds.
const std::vector<MetricDecl> kMetrics = {
    // Every workload.
    {"total_s", "s", "simulated wall time of the whole run (makespan)", "all"},

    // Inference (ZeRO-Inference / FlexGen style offloaded generation).
    {"prefill_s", "s",
     "time until the prompt of every sequence in the batch has been processed (the first forward "
     "pass over the whole batch, all pipeline micro-batches)",
     "inference"},
    {"ttft_s", "s",
     "time to first token: equal to prefill_s, since the first generated token comes out of "
     "prefill for the whole batch at once (static batching)",
     "inference"},
    {"decode_s", "s", "total_s - prefill_s: the decode steps that produce tokens 2..gen_tokens",
     "inference"},
    {"decode_s_per_token", "s",
     "decode_s / (gen_tokens - 1): one decode step, which produces one token for every sequence "
     "of the batch (0 when gen_tokens is 1)",
     "inference"},
    {"throughput_tokens_per_s", "tokens/s",
     "generated_tokens / total_s: for inference batch x gen_tokens over prefill plus decode, as "
     "the published ZeRO-Inference and FlexGen figures count it; for serving every request's "
     "output over the whole run",
     "inference, serving"},
    {"generated_tokens", "tokens",
     "tokens generated: batch x gen_tokens (inference), the sum of the requests' outputs (serving)",
     "inference, serving"},
    {"weight_wait_s", "s",
     "time the first pipeline stage's compute waited for weights to arrive (fetch not hidden "
     "behind compute), summed over the run",
     "inference"},
    {"cpu_attention_s", "s",
     "CPU time spent on attention when the KV cache lives in host DRAM, summed over the run",
     "inference"},
    {"allgather_bytes", "bytes",
     "policy.parallelism.data > 1: bytes each GPU received in ZeRO-3's parameter all-gathers over "
     "the run (on its PCIe link, peer to peer, or on its NVLink where it has one)",
     "inference"},
    {"weights_bytes", "bytes", "model weight bytes at the policy's weight precision",
     "inference, serving"},
    {"weights_gpu_fraction", "",
     "policy.schedule flexgen: share of the weight bytes FlexGen's whole-tensor placement puts on "
     "the GPU (can be far from the requested percentage)",
     "inference"},
    {"weights_cpu_fraction", "",
     "policy.schedule flexgen: share of the weight bytes placed in host DRAM", "inference"},
    {"weights_nvme_fraction", "",
     "policy.schedule flexgen: share of the weight bytes placed on disk", "inference"},
    {"page_cache_bytes", "bytes",
     "policy.schedule flexgen with a disk share: host DRAM left over for the OS page cache "
     "through which FlexGen's memory-mapped disk tensors are read",
     "inference"},
    {"nvme_read_gbps_model", "GB/s",
     "read bandwidth of the NVMe array the device model predicts at the policy's block size and "
     "queue depth (present when weights or KV cache are on NVMe)",
     "inference, serving"},

    // Serving (requests arriving over time; sim/workloads/serving/). Latencies are measured from
    // each request's arrival; percentiles are nearest-rank over the requests (TBT: over every gap
    // between consecutive output tokens of every request).
    {"requests_completed", "requests",
     "requests served (all of them: the run ends when the last "
     "one finishes)",
     "serving"},
    {"requests_per_s", "requests/s", "requests_completed / total_s", "serving"},
    {"goodput_requests_per_s", "requests/s",
     "requests meeting every latency target given (workload.slo_ttft on TTFT, workload.slo_tbt on "
     "the request's time per output token) / total_s (DistServe's goodput)",
     "serving"},
    {"slo_attainment_pct", "%", "share of requests meeting every latency target given", "serving"},
    {"offered_rate_requests_per_s", "requests/s",
     "arrival rate offered to the server: workload.arrival_rate, or a trace's requests over the "
     "span of its arrivals",
     "serving"},
    {"capacity_requests_per_s", "requests/s",
     "highest arrival rate sustained within the SLO and with a stable queue (`tiersim capacity` on "
     "a serving scenario; plans with capacity_search report the run at this rate)",
     "serving"},
    {"usd_per_request_at_capacity", "USD/request",
     "usd_per_hour / (capacity_requests_per_s x 3600): a served request's cost when the server "
     "runs at the highest rate it sustains (in steady state it completes requests at the arrival "
     "rate)",
     "cost"},
    {"queue_delay_drift_s", "s",
     "mean queueing delay of the last third of the requests (arrival order) minus that of the "
     "middle third: about 0 when the queue is stable, growing with the run when arrivals outpace "
     "service (tiersim capacity's stability test)",
     "serving"},
    {"queue_delay_mean_s", "s",
     "mean time from arrival to the first iteration that works on the "
     "request (scheduling delay)",
     "serving"},
    {"queue_delay_p50_s", "s", "median queueing delay", "serving"},
    {"queue_delay_p99_s", "s", "99th percentile of the queueing delay", "serving"},
    {"queue_delay_max_s", "s", "longest queueing delay", "serving"},
    {"ttft_mean_s", "s",
     "mean time to first token: arrival to the end of the iteration that "
     "completes the request's prefill",
     "serving"},
    {"ttft_p50_s", "s", "median time to first token", "serving"},
    {"ttft_p90_s", "s", "90th percentile of the time to first token", "serving"},
    {"ttft_p99_s", "s", "99th percentile of the time to first token", "serving"},
    {"ttft_max_s", "s", "longest time to first token", "serving"},
    {"tbt_mean_s", "s",
     "mean time between consecutive output tokens of a request, over every "
     "token after the first (stalls from preemption included)",
     "serving"},
    {"tbt_p50_s", "s", "median time between tokens (to 0.1%: log-binned)", "serving"},
    {"tbt_p90_s", "s", "90th percentile of the time between tokens (to 0.1%)", "serving"},
    {"tbt_p99_s", "s", "99th percentile of the time between tokens (to 0.1%)", "serving"},
    {"tbt_max_s", "s", "longest time between two tokens of a request", "serving"},
    {"tpot_mean_s", "s",
     "mean over requests of the time per output token, (last token - first "
     "token) / (output - 1) (DistServe's TPOT; requests with one output token excluded)",
     "serving"},
    {"tpot_p50_s", "s", "median over requests of the time per output token", "serving"},
    {"tpot_p90_s", "s", "90th percentile over requests of the time per output token", "serving"},
    {"tpot_p99_s", "s", "99th percentile over requests of the time per output token", "serving"},
    {"e2e_mean_s", "s", "mean end-to-end latency: arrival to the last token", "serving"},
    {"e2e_p50_s", "s", "median end-to-end latency", "serving"},
    {"e2e_p90_s", "s", "90th percentile of the end-to-end latency", "serving"},
    {"e2e_p99_s", "s", "99th percentile of the end-to-end latency", "serving"},
    {"e2e_max_s", "s", "longest end-to-end latency", "serving"},
    {"mean_requests_in_system", "requests",
     "time average of the requests queued or running (Little's L; equals requests_per_s x "
     "e2e_mean_s)",
     "serving"},
    {"kv_cache_blocks", "blocks",
     "paged KV cache blocks per replica (workload.block_tokens "
     "tokens each) in the GPU memory left after weights and activations",
     "serving"},
    {"kv_cache_mean_pct", "%", "time average of the KV cache blocks in use, all replicas",
     "serving"},
    {"kv_cache_max_pct", "%", "most KV cache blocks in use at once on a replica", "serving"},
    {"preemptions", "requests",
     "times a running request was preempted for KV cache blocks (and "
     "later recomputed, or swapped out with workload.preemption: swap)",
     "serving"},
    {"swapped_requests", "requests",
     "preemptions by swap: KV blocks copied to host DRAM and back (workload.preemption: swap)",
     "serving"},
    {"swap_out_bytes", "bytes", "KV cache bytes swapped out to host DRAM over PCIe, all GPUs",
     "serving"},
    {"swap_in_bytes", "bytes", "KV cache bytes swapped back in from host DRAM, all GPUs",
     "serving"},
    {"kv_prefix_lookup_blocks", "blocks",
     "prefix caching: cacheable prompt blocks (workload.prefix_block_tokens) looked up at "
     "admission, all replicas",
     "serving"},
    {"kv_hit_pct", "%", "prefix caching: looked-up blocks found in any tier", "serving"},
    {"kv_hit_gpu_pct", "%", "prefix caching: looked-up blocks found in GPU memory", "serving"},
    {"kv_hit_host_pct", "%", "prefix caching: looked-up blocks loaded from the host DRAM tier",
     "serving"},
    {"kv_hit_nvme_pct", "%", "prefix caching: looked-up blocks loaded from the NVMe tier",
     "serving"},
    {"kv_recompute_avoided_tokens", "tokens",
     "prefix caching: prompt tokens whose KV came from a cache instead of prefill", "serving"},
    {"kv_gpu_tier_blocks", "blocks", "prefix blocks the GPU KV pools hold, all replicas",
     "serving"},
    {"kv_host_tier_blocks", "blocks", "prefix blocks the host DRAM tier holds (workload.kv_host_cache)",
     "serving"},
    {"kv_nvme_tier_blocks", "blocks", "prefix blocks the NVMe tier holds (workload.kv_nvme_cache)",
     "serving"},
    {"kv_host_read_bytes", "bytes", "KV bytes loaded from the host DRAM tier to the GPUs",
     "serving"},
    {"kv_nvme_read_bytes", "bytes", "KV bytes read from the NVMe tier", "serving"},
    {"kv_host_write_bytes", "bytes", "KV bytes copied from the GPUs to the host DRAM tier",
     "serving"},
    {"kv_nvme_write_bytes", "bytes", "KV bytes written to the NVMe tier", "serving"},
    {"nvme_drive_writes_per_day", "1/day",
     "NVMe tier writes per day at the run's write rate over the array's capacity (compare with "
     "the drive's DWPD rating)",
     "serving"},
    {"iterations", "iterations", "forward passes run, all replicas", "serving"},
    {"replicas", "replicas", "copies of the model serving the stream: gpu count / tensor degree",
     "serving"},

    // Raw I/O benchmark (ds_io).
    {"read_gbps", "GB/s", "bytes / total_s for a read transfer (1e9 bytes per GB)", "io"},
    {"write_gbps", "GB/s",
     "bytes / total_s for a write transfer; for checkpoints, checkpoint_bytes / checkpoint_s",
     "io, checkpoint, training"},
    {"read_gibps", "GiB/s", "read_gbps in 2^30 bytes per second, as DeepSpeed's ds_io prints it",
     "io"},
    {"write_gibps", "GiB/s", "write_gbps in 2^30 bytes per second, as DeepSpeed's ds_io prints it",
     "io"},
    {"array_gbps_model", "GB/s",
     "bandwidth of the NVMe array the device model predicts for this transfer's direction", "io"},

    // Checkpoint.
    {"checkpoint_s", "s", "time to write one checkpoint (all writers, all nodes)",
     "checkpoint, training"},
    {"checkpoint_bytes", "bytes", "bytes written by one checkpoint", "checkpoint, training"},
    {"nvme_direct_write_gbps_model", "GB/s",
     "write bandwidth of the node's NVMe array the device model predicts for O_DIRECT writes",
     "checkpoint"},
    {"nvme_buffered_write_gbps_model", "GB/s",
     "write bandwidth of the node's NVMe array for buffered (page cache) writes", "checkpoint"},

    // Training.
    {"max_params_b", "1e9 params",
     "params_auto: the largest model of the shape family that fits, in billions of parameters",
     "training"},
    {"max_params_layers", "layers", "params_auto: layers of that largest model", "training"},
    {"max_params_hidden", "", "params_auto: hidden size of that largest model", "training"},
    {"gpu_memory_bytes", "bytes", "training: GPU memory needed per GPU", "training"},
    {"cpu_memory_bytes", "bytes", "training: host DRAM needed per node", "training"},
    {"nvme_memory_bytes", "bytes", "training: NVMe capacity needed per node", "training"},
    {"params_b", "1e9 params", "parameters of the trained model, in billions", "training"},
    {"iteration_s", "s", "time of one training iteration in steady state", "training"},
    {"samples_per_s", "samples/s", "global_batch / iteration_s", "training"},
    {"tokens_per_s", "tokens/s", "global_batch x sequence_tokens / iteration_s", "training"},
    {"achieved_tflops_per_gpu", "TFLOP/s",
     "model FLOPs (forward + backward, no recompute, as MFU counts them) per GPU per second",
     "training"},
    {"optimizer_step_s", "s", "time of the optimizer step within one iteration", "training"},
    {"param_gather_wait_s", "s",
     "time per iteration compute waited for ZeRO-3 parameter gathers (not hidden by prefetch)",
     "training"},
    {"data_parallel", "ranks", "data-parallel degree: GPUs x nodes / (tensor x pipeline)",
     "training"},
    {"checkpoint_stall_s", "s", "time a periodic checkpoint adds to the iteration it follows",
     "training"},
    {"checkpoint_overhead_pct", "%",
     "checkpoint_stall_s as a share of the time between checkpoints including the stall",
     "training"},

    // Energy (sim/economics.cpp, model/power.cpp): IT energy of the node over the run, no PUE.
    {"dram_sized_gb", "GB",
     "DRAM that energy and cost count when hardware.host.dram_gb is the catalog's: the host-memory "
     "need +25%, whole 32 GB DIMMs, at most the catalog's dram_gb (sim/economics.hpp DramSizing)",
     "energy"},
    {"energy_j", "J", "IT energy of the node over the run: the sum of the five parts below",
     "energy"},
    {"energy_j_gpu", "J",
     "GPU energy: idle power throughout, plus the dynamic range (board power limit - idle) times "
     "the share each kernel draws (all of it at full compute, memory_power_fraction of it while "
     "streaming memory, none in launch gaps)",
     "energy"},
    {"energy_j_cpu", "J", "CPU energy (busy while computing on the host, idle otherwise)",
     "energy"},
    {"energy_j_dram", "J", "DRAM energy (active while the memory bus is busy)", "energy"},
    {"energy_j_nvme", "J", "NVMe drives' energy (active while the array transfers)", "energy"},
    {"energy_j_platform", "J", "the rest of the server (fans, board, NICs) at constant power",
     "energy"},
    {"energy_j_prefill", "J",
     "energy_j by phase (model/power.hpp EnergyByPhase; the five phases sum to energy_j): every "
     "component's energy above idle for the prefill passes' work, plus the GPUs' idle power "
     "while they run prefill kernels",
     "energy"},
    {"energy_j_decode", "J", "the same for the decode passes", "energy"},
    {"energy_j_io_wait", "J",
     "the GPUs' idle power while they run no kernel (waiting for weights, copies, the CPU or, "
     "serving, for requests)",
     "energy"},
    {"energy_j_idle", "J",
     "the idle power of CPUs, DRAM, drives and platform over the run", "energy"},
    {"energy_j_other", "J",
     "energy above idle of work that is neither prefill nor decode (training, checkpoints, I/O)",
     "energy"},
    {"facility_energy_j", "J", "energy_j x economics.pue", "energy"},
    {"avg_power_w", "W", "energy_j / total_s", "energy"},
    {"facility_avg_power_w", "W", "facility_energy_j / total_s", "energy"},
    {"gpu_avg_power_w", "W",
     "energy_j_gpu / total_s: the node's GPUs together, as NVML-based measurements report them",
     "energy"},
    {"energy_j_per_token", "J/token",
     "IT energy per generated token (device level, no cooling, as vendor claims count it)",
     "energy"},
    {"gpu_energy_j_per_token", "J/token",
     "GPU energy (energy_j_gpu) per generated token: what NVML-based benchmarks measure",
     "energy"},
    {"facility_energy_j_per_token", "J/token", "facility energy per generated token", "energy"},
    {"tokens_per_kwh", "tokens/kWh", "generated tokens per kWh of IT energy", "energy"},
    {"energy_j_per_request", "J/request", "IT energy per served request (serving)", "energy"},

    // Cost (model/cost.cpp): present only when every component in use has a price.
    {"capex_usd", "USD", "purchase price of the configuration: the sum of the four parts below",
     "cost"},
    {"capex_usd_gpu", "USD", "GPUs", "cost"},
    {"capex_usd_platform", "USD", "server without GPUs, DRAM and drives", "cost"},
    {"capex_usd_dram", "USD", "DRAM", "cost"},
    {"capex_usd_drives", "USD", "NVMe drives", "cost"},
    {"capex_usd_per_hour", "USD/h",
     "capex amortised over economics.amortization_years of serving at economics.duty_cycle",
     "cost"},
    {"energy_usd_per_hour", "USD/h",
     "facility energy (IT x PUE) per serving hour at economics.usd_per_kwh", "cost"},
    {"usd_per_hour", "USD/h", "capex_usd_per_hour + energy_usd_per_hour", "cost"},
    {"usd_per_million_tokens", "USD/Mtoken", "usd_per_hour per million generated tokens", "cost"},
    {"usd_per_request", "USD/request",
     "usd_per_hour per served request at the run's request rate (serving)", "cost"},
    {"tokens_per_usd", "tokens/USD", "generated tokens per dollar of usd_per_hour", "cost"},
    {"return_per_dollar", "tokens/s per 1000 USD capex",
     "throughput_tokens_per_s per thousand dollars of capex", "cost"},

    // Rent versus buy (model/cost.hpp compute_rent): present only when economics.cloud_instance
    // names an instance of prices.yaml `cloud`, and the cost metrics above are present.
    {"rent_usd_per_hour", "USD/h",
     "on-demand price of the named cloud instance, paid only for serving hours", "cost"},
    {"rent_usd_per_million_tokens", "USD/Mtoken",
     "rent_usd_per_hour per million generated tokens (compare with usd_per_million_tokens)",
     "cost"},
    {"rent_usd_per_request", "USD/request",
     "rent_usd_per_hour per served request at the run's request rate (serving)", "cost"},
    {"buy_breakeven_duty_cycle", "",
     "duty cycle above which owning costs less per serving hour than renting (capex and idle "
     "power are paid around the clock, rent only while serving); above 1: renting is cheaper even "
     "at full use; absent when the electricity alone costs more than the rent",
     "cost"},
};

}  // namespace

const std::vector<MetricDecl>& metric_declarations() {
  return kMetrics;
}

const MetricDecl* find_metric(std::string_view name) {
  const auto it = std::find_if(kMetrics.begin(), kMetrics.end(),
                               [&](const MetricDecl& m) { return m.name == name; });
  return it == kMetrics.end() ? nullptr : &*it;
}

const MetricDecl& metric_decl(std::string_view name) {
  if (const MetricDecl* m = find_metric(name)) return *m;
  throw std::logic_error("metric '" + std::string(name) +
                         "' is not declared in sim/metrics.cpp (every metric needs a unit and a "
                         "description there)");
}

std::string metrics_markdown() {
  std::string out = "| metric | unit | workloads | meaning |\n|---|---|---|---|\n";
  for (const auto& m : kMetrics) {
    out += "| `" + std::string(m.name) + "` | " + (m.unit.empty() ? "-" : std::string(m.unit)) +
           " | " + std::string(m.workloads) + " | " + std::string(m.description) + " |\n";
  }
  return out;
}

}  // namespace tiersim::sim
