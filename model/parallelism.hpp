#pragma once
// Which tensor/pipeline layouts the simulator can run: one rule set, checked by the scenario
// loader at load time (with file, line and key) and again by the workloads for scenarios built
// in code (sweeps, the planner, tests).
#include <optional>
#include <string>

#include "model/llm.hpp"
#include "model/scenario.hpp"

namespace tiersim {

struct ParallelismIssue {
  std::string key;      // the scenario key to blame: "policy.parallelism.tensor", ...
  std::string message;  // why the layout cannot run
};

// The first rule the scenario's parallelism breaks, or nullopt. Rules:
//   inference: hardware.gpu.count == tensor x pipeline x data, where data > 1 (ZeRO-Inference's
//     data-parallel ranks, ZeRO-3 partitioned weights) needs tensor = pipeline = 1, the
//     zero-inference schedule and a batch it divides; training: a multiple of tensor x pipeline.
//   tensor divides the heads and the KV heads: each rank holds whole heads and its own share of
//     the KV cache (the simulator divides attention and KV traffic by the degree; replicated KV
//     heads, as in vLLM with tensor > kv_heads, are not modelled).
//   pipeline <= layers (every stage holds at least one layer).
//   inference: micro_batches <= batch, and micro_batches = 1 when weights are streamed (every
//     micro-batch would re-fetch the stage's layers; not modelled).
std::optional<ParallelismIssue> parallelism_issue(const Scenario& scenario);

}  // namespace tiersim
