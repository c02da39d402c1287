// Load-time checks of the training workload (config/scenario_check.hpp).
#include <algorithm>
#include <string>
#include <utility>

#include "sim/workloads/checkpoint/checks.hpp"
#include "sim/workloads/training/rules.hpp"

namespace tiersim::config {

namespace {

void check_keys(const ScenarioCheck& c) {
  const Scenario& s = c.scenario();
  const TrainingWorkload& t = s.training;
  const std::pair<const char*, Tier> tiers[] = {{"workload.params", t.params},
                                                {"workload.gradients", t.gradients},
                                                {"workload.optimizer", t.optimizer}};
  for (const auto& [key, tier] : tiers)
    if (tier == Tier::kNvme && s.hardware.nvme.count <= 0)
      c.fail(key, "nvme needs NVMe drives (hardware.nvme)");
  if (const auto issue = training_rules::offload_issue(s)) c.fail(issue->key, issue->message);
  // Training scenarios checkpoint with the checkpoint workload's writer, to its target.
  check_checkpoint_writer(c);
  if (t.checkpoint_interval_iters > 0)
    check_checkpoint_target(c, "workload.checkpoint_interval_iters");
}

void check_layout(const ScenarioCheck& c) {
  const Scenario& s = c.scenario();
  const int tp = s.policy.parallelism.tensor;
  const int pp = s.policy.parallelism.pipeline;
  // Each data-parallel rank takes the same share of the batch (as in model/training_memory.cpp's
  // training_layout; counted here in 64 bits, where nodes x ranks cannot overflow).
  const long long dp =
      static_cast<long long>(std::max(1, s.hardware.gpu_count / std::max(1, tp * pp))) *
      std::max(1, s.training.nodes);
  if (s.training.global_batch % dp != 0)
    c.fail("workload.global_batch",
           "must be a multiple of the data-parallel degree " + std::to_string(dp) +
               " (hardware.gpu.count / (tensor x pipeline) x workload.nodes)");
}

}  // namespace

const WorkloadChecks training_checks{&check_keys, &check_layout};

}  // namespace tiersim::config
