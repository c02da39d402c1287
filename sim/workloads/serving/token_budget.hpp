#pragma once
// The token budget of one serving iteration (workload.token_budget): the scheduler's default where
// the scenario gives none, and how many generating requests the in-flight scheduler leaves room
// for beside a whole prompt. The simulation (serving.cpp) and the load-time checks (checks.cpp)
// use the same rule.
#include <algorithm>

#include "model/scenario.hpp"

namespace tiersim {

// [tokens] The budget of `w`'s iterations, for requests of at most `max_prompt` prompt tokens and
// `max_total` prompt plus output tokens, with `max_positions` the model's context.
// - chunked: Sarathi-Serve's chunk size 512 (its artifact's default);
// - inflight: TensorRT-LLM's max_num_tokens, 8192 by default (BuildConfig and the LLM API's
//   max_num_tokens);
// - continuous: vLLM's max_num_batched_tokens without chunking, max(max_model_len, 2048)
//   (vllm/config.py SchedulerConfig), and at least the longest request;
// - static: every prompt of a full batch prefilled at once.
inline int serving_token_budget(const ServingWorkload& w, int max_positions, int max_prompt,
                                int max_total) {
  using Sched = ServingWorkload::Scheduler;
  if (w.token_budget > 0) return w.token_budget;
  switch (w.scheduler) {
    case Sched::kChunked:
      return 512;
    case Sched::kInflight:
      return 8192;
    case Sched::kContinuous:
      return std::max({max_positions, 2048, max_total});
    case Sched::kStatic:
      break;
  }
  return w.max_batch * max_prompt;
}

// [requests] In-flight batching without chunking takes the generating requests first, one token
// each, then whole prompts until the first that does not fit in the budget
// (microBatchScheduler.cpp: the scan stops there). So a prompt of `prompt_tokens` joins only while
// at most budget - prompt_tokens requests generate, and requests of that prompt length never run
// more than this many at once, whatever max_batch allows.
inline int inflight_batch_limit(int budget_tokens, int prompt_tokens) {
  return std::max(0, budget_tokens - prompt_tokens) + 1;
}

}  // namespace tiersim
