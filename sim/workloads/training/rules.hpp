#pragma once
// The combinations of ZeRO stage and offload tiers the training workload models, as DeepSpeed
// allows them. Checked when a scenario loads (checks.cpp, where the error names the key
// and the line) and again when a run starts (training.cpp), for scenarios a study changed after
// loading. Header-only: the loader's checks build without the simulator.
#include <optional>
#include <string>

#include "model/scenario.hpp"

namespace tiersim::training_rules {

struct Issue {
  const char* key;
  std::string message;
};

inline std::optional<Issue> offload_issue(const Scenario& s) {
  const TrainingWorkload& w = s.training;
  // DeepSpeed's zero_optimization offload_param is "valid only with stage 3"; offload_optimizer
  // "valid for ZeRO stage 1, 2, 3" (deepspeed/runtime/zero/config.py): with stage 0 there is no
  // ZeRO optimizer to move the states and step to the CPU.
  if (w.params != Tier::kGpu && w.zero_stage < 3)
    return Issue{"workload.params",
                 "parameters off the GPU need ZeRO stage 3 (workload.zero_stage: 3): stage 3 "
                 "fetches them per layer (DeepSpeed offload_param is valid only with stage 3)"};
  if ((w.optimizer != Tier::kGpu || w.optimizer_on_cpu) && w.zero_stage < 1)
    return Issue{"workload.optimizer",
                 "optimizer states off the GPU, or CPU Adam, need ZeRO stage 1, 2 or 3 "
                 "(workload.zero_stage): DeepSpeed's offload_optimizer is valid for those stages "
                 "only"};
  if (!w.optimizer_on_cpu && w.optimizer == Tier::kGpu && w.gradients != Tier::kGpu)
    return Issue{"workload.gradients",
                 "gradients off the GPU need the optimizer step on the CPU (workload.optimizer: "
                 "cpu or nvme, or workload.optimizer_on_cpu: true)"};
  if (w.optimizer_on_cpu && w.optimizer == Tier::kGpu)
    return Issue{"workload.optimizer_on_cpu",
                 "CPU Adam needs the optimizer states on cpu or nvme (workload.optimizer)"};
  if (w.cpu_checkpointing && !w.activation_checkpointing)
    return Issue{"workload.cpu_checkpointing",
                 "moves activation checkpoints to host memory: it needs "
                 "workload.activation_checkpointing: true"};
  return std::nullopt;
}

}  // namespace tiersim::training_rules
