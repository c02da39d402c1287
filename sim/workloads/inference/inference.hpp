#pragma once
// The inference workload (ZeRO-Inference and FlexGen-style offloaded generation). Registered as
// `inference` in sim/workloads/registry.def; simulate() is the usual entry point. The replay
// (replay/replay.cpp) calls it directly for the prediction it compares a real run against.
#include <string>
#include <vector>

#include "sim/simulate.hpp"
#include "sim/workloads/inference/names.hpp"

namespace tiersim::sim {

RunResult simulate_inference(const Scenario& scenario, const SimOptions& options);

// The keys its run reads only through its capacity report, and its result from a twin's
// (WorkloadOps::capacity_only_keys and with_capacity; capacity_twins.cpp).
std::vector<std::string> inference_capacity_only_keys(const Scenario& scenario);
RunResult inference_with_capacity(const Scenario& scenario, const SimOptions& options,
                                  const RunResult& twin);

// A trace and power tag for work of generation pass `pass` (0: the prompt's prefill, then one
// decode pass per generated token), drawing `load` of the resource's dynamic power range (Tag).
inline Tag pass_tag(Activity activity, int pass, int item, double load = 1.0) {
  return Tag{activity, pass, item, load, pass == 0 ? Stage::kPrefill : Stage::kDecode};
}

// Where a run's time went. Each schedule measures two of the three and derives the third, so all
// three are passed as computed (no re-derivation that could differ in the last bit).
struct GenerationTimes {
  double prefill_s = 0;
  double decode_s = 0;
  double total_s = 0;
};

// The generation timing metrics every inference schedule reports (ZeRO-Inference's and FlexGen's
// runtimes): prefill_s, ttft_s, decode_s, decode_s_per_token, total_s, throughput_tokens_per_s
// and generated_tokens for `w`'s batch. Throughput counts every generated token over the whole
// run, as FlexGen's run_flexgen and the ZeRO-Inference README do.
void set_generation_metrics(RunResult& result, const InferenceWorkload& w,
                            const GenerationTimes& t);

// The drive array's modelled read rate at the run's transfer size [GB/s], as a run with drives
// reports it (nvme_read_gbps_model, and the work summary economics reads).
void set_nvme_read_rate(RunResult& result, double read_gbps);

}  // namespace tiersim::sim
