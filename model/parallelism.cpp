#include "model/parallelism.hpp"
#include "sim/workloads/traits.hpp"

namespace tiersim {

std::optional<ParallelismIssue> parallelism_issue(const Scenario& s) {
  const LlmSpec& m = s.model;
  const Parallelism& par = s.policy.parallelism;
  const int tp = par.tensor;
  const int pp = par.pipeline;
  const int gpus = s.hardware.gpu_count;
  const int dp = par.data;
  // One fixed batch over every GPU (inference); data-parallel replicas of tensor x pipeline
  // (training). The messages keep naming the workloads that have these layouts.
  const bool fixed_batch = has_capability(s, kCapFixedBatch);
  if (fixed_batch && gpus != tp * pp * dp)
    return ParallelismIssue{"hardware.gpu.count",
                            "must equal tensor * pipeline * data = " +
                                std::to_string(tp * pp * dp) +
                                " for inference (policy.parallelism.data: ZeRO-Inference's "
                                "data-parallel ranks)"};
  if (fixed_batch && dp > 1) {
    if (tp != 1 || pp != 1)
      return ParallelismIssue{"policy.parallelism.data",
                              "ZeRO-Inference's data-parallel ranks partition the weights "
                              "themselves (ZeRO-3); combining them with tensor or pipeline "
                              "parallelism is not modelled"};
    if (s.policy.schedule != Schedule::kZeroInference)
      return ParallelismIssue{"policy.parallelism.data",
                              "data-parallel ranks are modelled for policy.schedule: "
                              "zero-inference only"};
    if (s.inference.batch % dp != 0)
      return ParallelismIssue{"policy.parallelism.data",
                              "must divide workload.batch (" + std::to_string(s.inference.batch) +
                                  "): every rank runs batch / data sequences of its own "
                                  "(DeepSpeedExamples zero_inference run_model.py: batch_size // "
                                  "world_size prompts per rank)"};
  }
  if (has_capability(s, kCapZeroTraining) && gpus % (tp * pp) != 0)
    return ParallelismIssue{"hardware.gpu.count",
                            "must be a multiple of tensor * pipeline = " + std::to_string(tp * pp)};
  if (m.heads % tp != 0 || (m.kv_heads > 0 && m.kv_heads % tp != 0))
    return ParallelismIssue{"policy.parallelism.tensor",
                            "tensor-parallel degree " + std::to_string(tp) +
                                " must divide the model's heads (" + std::to_string(m.heads) +
                                ") and KV heads (" + std::to_string(m.kv_heads) + ")"};
  if (pp > m.layers)
    return ParallelismIssue{"policy.parallelism.pipeline",
                            "more pipeline stages than layers (" + std::to_string(m.layers) + ")"};
  if (fixed_batch && par.micro_batches > s.inference.batch)
    return ParallelismIssue{"policy.parallelism.micro_batches",
                            "more micro-batches than sequences (workload.batch = " +
                                std::to_string(s.inference.batch) + ")"};
  if (fixed_batch && par.micro_batches > 1 && (s.policy.weights.cpu + s.policy.weights.nvme) > 0)
    return ParallelismIssue{"policy.parallelism.micro_batches",
                            "pipeline micro-batches with streamed weights are not modelled: every "
                            "micro-batch would re-fetch the stage's layers; use micro_batches: 1"};
  return std::nullopt;
}

}  // namespace tiersim
