#include "model/parallelism.hpp"

namespace tiersim {

std::optional<ParallelismIssue> parallelism_issue(const Scenario& s) {
  const LlmSpec& m = s.model;
  const Parallelism& par = s.policy.parallelism;
  const int tp = par.tensor;
  const int pp = par.pipeline;
  const int gpus = s.hardware.gpu_count;
  const bool inference = s.kind == WorkloadKind::kInference;
  if (inference && gpus != tp * pp)
    return ParallelismIssue{"hardware.gpu.count",
                            "must equal tensor * pipeline = " + std::to_string(tp * pp) +
                                " for inference (data parallelism is simulated for training only)"};
  if (s.kind == WorkloadKind::kTraining && gpus % (tp * pp) != 0)
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
  if (inference && par.micro_batches > s.inference.batch)
    return ParallelismIssue{"policy.parallelism.micro_batches",
                            "more micro-batches than sequences (workload.batch = " +
                                std::to_string(s.inference.batch) + ")"};
  if (inference && par.micro_batches > 1 && (s.policy.weights.cpu + s.policy.weights.nvme) > 0)
    return ParallelismIssue{"policy.parallelism.micro_batches",
                            "pipeline micro-batches with streamed weights are not modelled: every "
                            "micro-batch would re-fetch the stage's layers; use micro_batches: 1"};
  return std::nullopt;
}

}  // namespace tiersim
