#include "study/fit_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "model/capacity.hpp"
#include "model/errors.hpp"
#include "model/parallelism.hpp"
#include "model/stack.hpp"
#include "model/training_memory.hpp"
#include "model/units.hpp"
#include "sim/workloads/workload.hpp"

namespace tiersim::fit {
namespace {

// The memory model of the scenario's workload: its own check (serving's start-up profile), else
// inference's fixed batch or ZeRO training's.
CapacityReport capacity(const Scenario& s, const ExecutionModel& em) {
  if (const auto own = sim::workload_ops(s.kind).capacity) return own(s, em);
  return has_capability(s, kCapZeroTraining) ? training_capacity(s, em) : inference_capacity(s, em);
}

bool fits(const Scenario& s, const ExecutionModel& em) {
  if (parallelism_issue(s)) return false;
  try {
    return capacity(s, em).fits;
  } catch (const ModelError&) {
    return false;  // a configuration the model cannot express does not fit either
  }
}

const TierMemory* tier(const CapacityReport& r, const char* name) {
  for (const auto& t : r.tiers)
    if (t.tier == name) return &t;
  return nullptr;
}

// The batch the search varies: inference's batch of sequences, or training's global batch.
int& batch_of(Scenario& s) {
  return has_capability(s, kCapZeroTraining) ? s.training.global_batch : s.inference.batch;
}

// The batch can only move in steps every rank, GPU batch and micro-batch divides (training: every
// data-parallel rank takes the same share, sim/workloads/training/checks.cpp).
int batch_step(const Scenario& s) {
  if (has_capability(s, kCapZeroTraining)) return std::max(1, training_layout(s).data_parallel);
  const Policy& p = s.policy;
  return std::max(1, p.parallelism.data) * p.batches_per_fetch();
}

// Memory grows with the batch (KV cache, activations), so the batches that fit are the ones up
// to the largest: a binary search over multiples of the step below the scenario's batch.
std::optional<Suggestion> largest_batch(const Scenario& s, const ExecutionModel& em) {
  const bool training = has_capability(s, kCapZeroTraining);
  const int step = batch_step(s);
  Scenario t = s;
  const int batch = batch_of(t);
  int lo = 0, hi = (batch - 1) / step;  // in steps; lo fits (0: none known)
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    batch_of(t) = mid * step;
    if (fits(t, em))
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo == 0) return std::nullopt;
  const std::string key = training ? "workload.global_batch=" : "workload.batch=";
  Suggestion g{"largest batch", {key + std::to_string(lo * step)}, ""};
  g.detail = std::to_string(lo * step) + " of " + std::to_string(batch) +
             (training ? " samples per iteration fit" : " sequences fit");
  return g;
}

// Training without activation checkpointing holds every layer's activations: recomputing them
// keeps only each layer's input (model/training_memory.hpp activation_bytes).
std::optional<Suggestion> checkpointing(const Scenario& s, const ExecutionModel& em) {
  if (!has_capability(s, kCapZeroTraining) || s.training.activation_checkpointing)
    return std::nullopt;
  Scenario t = s;
  t.training.activation_checkpointing = true;
  if (!fits(t, em)) return std::nullopt;
  return Suggestion{"activation checkpointing",
                    {"workload.activation_checkpointing=true"},
                    "each layer's activations recomputed in the backward pass"};
}

// Host DRAM is a capacity, not a need: when only the host tier is short, the need itself is the
// smallest DRAM that fits (in whole GB, checked).
std::optional<Suggestion> smallest_dram(const Scenario& s, const ExecutionModel& em) {
  const CapacityReport r = capacity(s, em);
  const TierMemory* cpu = tier(r, "cpu");
  if (!cpu || cpu->fits()) return std::nullopt;
  for (const auto& t : r.tiers)
    if (t.tier != "cpu" && !t.fits()) return std::nullopt;  // more DRAM alone does not help
  Scenario t = s;
  t.hardware.host.dram_gb = std::ceil(cpu->required_bytes / units::kGB);
  if (!fits(t, em)) return std::nullopt;
  char gib[64];
  std::snprintf(gib, sizeof gib, ", %.0f GiB of DIMMs",
                std::ceil(cpu->required_bytes / (1024.0 * 1024.0 * 1024.0)));
  // The catalog's dram_gb is the most its platform holds (scenarios/catalog/hosts.yaml): past it,
  // the answer is another host, which the suggestion must say rather than set a DRAM size the
  // named one cannot hold.
  std::string beyond;
  if (const auto prov = s.provenance.source("hardware.host.dram_gb");
      prov && prov->rfind("catalog:", 0) == 0 && t.hardware.host.dram_gb > s.hardware.host.dram_gb)
    beyond = "; more than the " + format_gb(s.hardware.host.dram_gb * units::kGB) + " " +
             s.hardware.host.name + " holds: a host that holds more (hardware.host.model)";
  return Suggestion{
      "smallest DRAM",
      {"hardware.host.dram_gb=" + std::to_string(static_cast<long long>(t.hardware.host.dram_gb))},
      "the host needs " + format_gb(cpu->required_bytes) + gib + beyond};
}

// More GPUs hold what one cannot: more pipeline stages of the scenario's tensor-parallel groups,
// or (one GPU per rank, no tensor or pipeline parallelism) more ZeRO-Inference data-parallel
// ranks, whichever needs fewer GPUs; each tried from one GPU more than the scenario has up to
// kMaxGpus. Only when the GPU tier is short.
std::optional<Suggestion> fewest_gpus(const Scenario& s, const ExecutionModel& em) {
  if (has_capability(s, kCapZeroTraining)) return std::nullopt;
  const CapacityReport r = capacity(s, em);
  const TierMemory* gpu = tier(r, "gpu");
  if (!gpu || gpu->fits()) return std::nullopt;
  const Parallelism& par = s.policy.parallelism;
  if (!has_capability(s, kCapFixedBatch)) {
    // Replicas of tensor-parallel GPUs (serving): a wider tensor degree for each, as many
    // replicas as before.
    const int replicas = std::max(1, s.hardware.gpu_count / std::max(1, par.tensor));
    for (int tp = par.tensor + 1; tp * replicas <= kMaxGpus; ++tp) {
      Scenario t = s;
      t.policy.parallelism.tensor = tp;
      t.hardware.gpu_count = tp * replicas;
      if (!fits(t, em)) continue;
      std::string detail = std::to_string(tp) + "-way tensor parallelism";
      if (replicas > 1)
        detail += ", " + std::to_string(replicas) + " replicas of " + std::to_string(tp) + " GPUs";
      return Suggestion{"fewest GPUs",
                        {"hardware.gpu.count=" + std::to_string(tp * replicas),
                         "policy.parallelism.tensor=" + std::to_string(tp)},
                        detail};
    }
    return std::nullopt;
  }
  for (int n = s.hardware.gpu_count + 1; n <= kMaxGpus; ++n) {
    if (par.data == 1 && n % par.tensor == 0) {
      Scenario t = s;
      t.hardware.gpu_count = n;
      t.policy.parallelism.pipeline = n / par.tensor;
      if (fits(t, em))
        return Suggestion{"fewest GPUs",
                          {"hardware.gpu.count=" + std::to_string(n),
                           "policy.parallelism.pipeline=" + std::to_string(n / par.tensor)},
                          std::to_string(n) + " GPUs in " + std::to_string(n / par.tensor) +
                              " pipeline stages"};
    }
    if (par.tensor == 1 && par.pipeline == 1) {
      Scenario t = s;
      t.hardware.gpu_count = n;
      t.policy.parallelism.data = n;
      if (fits(t, em))
        return Suggestion{"fewest GPUs",
                          {"hardware.gpu.count=" + std::to_string(n),
                           "policy.parallelism.data=" + std::to_string(n)},
                          std::to_string(n) + " ZeRO-Inference ranks, " +
                              std::to_string(s.inference.batch / n) + " sequences each"};
    }
  }
  return std::nullopt;
}

// When the GPU tier is short: the first stack of the table that `keeps` accepts and on which the
// scenario fits, or none (the suggestions that change the stack for the cache it keeps).
template <typename Keeps>
std::optional<std::string> first_fitting_stack(const Scenario& s, const ExecutionModel& em,
                                               Keeps keeps) {
  const CapacityReport r = capacity(s, em);  // tier() points into it
  const TierMemory* gpu = tier(r, "gpu");
  if (!gpu || gpu->fits()) return std::nullopt;
  for (const std::string& name : stack_names()) {
    if (!keeps(execution_stack(name))) continue;
    Scenario t = s;
    t.policy.stack = execution_stack(name);
    return fits(t, em) ? std::optional<std::string>(name) : std::nullopt;
  }
  return std::nullopt;
}

// An MLA model on a stack that keeps each head's widened keys and values (transformers) holds
// heads x (head_dim + v_head_dim) elements a token where the latent stacks hold the latent
// (model/llm.hpp KvCacheForm): when the GPUs are short, the closest fit may be such an engine,
// the first of the stack table's that keep it.
std::optional<Suggestion> latent_cache(const Scenario& s, const ExecutionModel& em) {
  if (!s.model.mla() || s.policy.stack.mla_cache != KvCacheForm::kPerHead) return std::nullopt;
  const auto name = first_fitting_stack(
      s, em, [](const ExecutionStack& st) { return st.mla_cache == KvCacheForm::kLatent; });
  if (!name) return std::nullopt;
  const double kv_bytes = s.policy.kv_bits / 8.0, tp = s.policy.parallelism.tensor;
  const auto per_gpu = [&](const ExecutionStack& st) {
    const KvCacheShape k = stack_kv_cache(st, s.model, kv_bytes, tp);
    return s.model.layers * k.bytes_per_token_layer / k.split;
  };
  char kib[128];
  std::snprintf(kib, sizeof kib, "%.1f KiB of KV cache per token on each GPU against %.1f KiB",
                per_gpu(execution_stack(*name)) / 1024, per_gpu(s.policy.stack) / 1024);
  return Suggestion{"latent KV cache",
                    {"policy.stack=" + *name},
                    "the " + *name + " stack keeps MLA's compressed latent: " + kib};
}

// A model with a sliding window on a stack that caches every token on every layer
// (transformers' cache of the hf-* versions): a stack that keeps only the window on the sliding
// layers (ExecutionStack::window_cache) holds less of a long sequence. A fixed batch only, where
// the sequence's length is known.
std::optional<Suggestion> window_cache(const Scenario& s, const ExecutionModel& em) {
  const LlmSpec& m = s.model;
  if (m.sliding_layers() == 0 || stack_caches_window(s.policy.stack, m, false) ||
      !has_capability(s, kCapFixedBatch))
    return std::nullopt;
  const double tokens = double(s.inference.prompt_tokens) + s.inference.gen_tokens;
  if (tokens <= m.sliding_window) return std::nullopt;
  const auto name = first_fitting_stack(s, em, [&](const ExecutionStack& st) {
    return stack_caches_window(st, m, false) && (!m.mla() || st.mla_cache);
  });
  if (!name) return std::nullopt;
  char why[160];
  std::snprintf(why, sizeof why,
                "keeps only the last %d tokens on the %d sliding layers: %.0f of a sequence's "
                "%.0f tokens a layer on average",
                m.sliding_window, m.sliding_layers(), mean_window_context(m, tokens), tokens);
  return Suggestion{
      "windowed KV cache", {"policy.stack=" + *name}, "the " + *name + " stack " + why};
}

}  // namespace

std::vector<Suggestion> closest_fits(const Scenario& s, const ExecutionModel& em) {
  std::vector<Suggestion> out;
  const bool training = has_capability(s, kCapZeroTraining);
  const bool fixed_batch = has_capability(s, kCapFixedBatch);
  const bool own_check = sim::workload_ops(s.kind).capacity != nullptr;
  if (!(training || fixed_batch || own_check) || s.policy.schedule == Schedule::kFlexGen)
    return out;
  if (fits(s, em)) return out;
  if (training || fixed_batch)
    if (auto g = largest_batch(s, em)) out.push_back(*g);
  if (auto g = checkpointing(s, em)) out.push_back(*g);
  if (auto g = smallest_dram(s, em)) out.push_back(*g);
  if (auto g = fewest_gpus(s, em)) out.push_back(*g);
  if (auto g = latent_cache(s, em)) out.push_back(*g);
  if (auto g = window_cache(s, em)) out.push_back(*g);
  return out;
}

}  // namespace tiersim::fit
