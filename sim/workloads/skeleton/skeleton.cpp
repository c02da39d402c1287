// The skeleton workload: a complete, registered and tested workload to copy when adding one
// (as fio's engines/skeleton_external.c is for I/O engines). It models one thing, simply: one
// decode step of one sequence with every weight resident in GPU memory, where each layer's GEMMs
// run at the GPU's roofline (model/perf.hpp) one after another.
//
// To add a workload `foo`:
//   1. copy this folder to sim/workloads/foo/ and rename skeleton_workload (here),
//      skeleton_traits (traits.cpp), skeleton_option_rows (options.cpp) and skeleton_checks
//      (checks.cpp) to foo_*, and WorkloadKind::kSkeleton to WorkloadKind::kFoo;
//   2. add `TIERSIM_WORKLOAD(kFoo, foo)` at the end of sim/workloads/registry.def;
//   3. set the capability flags that say what the workload does (traits.cpp), declare its own
//      scenario keys in foo/options.cpp (their Scenario fields go in model/scenario.hpp), its
//      load-time rules in foo/checks.cpp, and any new output metric once, as a handle in
//      foo/metrics.hpp (name, unit, meaning), listed in sim/metrics.cpp; set it with
//      result.set(metric::kFooBarS, v);
//   4. add a test under tests/sim/workloads/foo/ (see tests/sim/workloads/skeleton/).
// `workload.kind: foo` then loads, runs, stores and reports like any other workload
// (sim/workloads/README.md).
#include "model/capacity.hpp"
#include "model/llm.hpp"
#include "model/perf.hpp"
#include "model/units.hpp"
#include "sim/engine/engine.hpp"
#include "sim/workloads/names.hpp"
#include "sim/workloads/workload.hpp"

namespace tiersim::sim {

namespace {

// One process: the layers, in order, each a kernel on the GPU. A real workload spawns several
// processes (fetch, compute, ...) that meet on shared resources; see inference/.
Task decode_one_token(Resource& gpu, const Scenario& s, const ExecutionModel& exec) {
  const LlmSpec& m = s.model;
  const double layer_bytes = layer_active_params(m) * bytes_per_weight(s.policy.weight_bits);
  const double layer_flops = layer_gemm_flops(m, 1.0);
  for (int layer = 0; layer < m.layers; ++layer)
    co_await gpu.use(gpu_kernel_s(s.hardware.gpu, exec, layer_flops, layer_bytes),
                     Tag{activity::kCompute, 0, layer});
}

RunResult run_skeleton(const Scenario& s, const SimOptions& options) {
  RunResult result;
  result.workload = "skeleton";
  // Capacity first: a workload says what it needs in each tier, and whether it fits, before
  // simulating anything.
  // The GPU as the driver reports it, less what the runtime takes first (model/capacity.hpp).
  TierMemory gpu_memory = gpu_tier(s.hardware.gpu, ExecutionModel{});
  gpu_memory.add("weights (resident)", model_weight_bytes(s.model, s.policy));
  result.memory.push_back(gpu_memory);
  if (!gpu_memory.fits()) {
    result.fits = false;
    result.shortfall = "the weights do not fit in one GPU's memory";
    return result;
  }

  Engine engine;
  engine.enable_trace(options.trace);
  engine.keep_spans(options.breakdown);
  engine.stop_when(options.stop);
  // A resource with a role and a name (sim/workloads/names.hpp resource::kGpu: role gpu, name
  // "gpu"): energy observes its role, never its name. Rate 1 in seconds: work is given in seconds
  // of GPU time. A workload's own kinds of resource go in its names.hpp.
  Resource& gpu = engine.add_resource(resource::kGpu.at(), WorkUnit::kSeconds, 1.0);
  engine.spawn(decode_one_token(gpu, s, options.exec));
  engine.run();

  result.set(metric::kTotalS, engine.now());
  collect_usage(engine, engine.now(), result);
  return result;
}

}  // namespace

namespace workloads {
const WorkloadOps skeleton_workload{
    "skeleton", WorkloadKind::kSkeleton,
    "template to copy when adding a workload: one decode step of one sequence with every weight "
    "in GPU memory, at the roofline",
    &run_skeleton};
}  // namespace workloads

}  // namespace tiersim::sim
