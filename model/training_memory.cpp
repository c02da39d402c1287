#include "model/training_memory.hpp"

#include <algorithm>
#include <cmath>

#include "model/errors.hpp"
#include "model/units.hpp"

namespace tiersim {

StateBytes state_bytes_per_param(TrainingWorkload::Precision precision,
                                 TrainingWorkload::Optimizer optimizer) {
  using P = TrainingWorkload::Precision;
  using O = TrainingWorkload::Optimizer;
  const double working = precision == P::kMixed ? 2.0 : 4.0;
  // Mixed precision keeps an fp32 master copy next to the fp16 working weights.
  const double master = precision == P::kMixed ? 4.0 : 0.0;
  // Adam: fp32 momentum and variance; SGD with momentum: one fp32 buffer.
  const double moments = optimizer == O::kAdam ? 8.0 : 4.0;
  return StateBytes{working, working, master + moments};
}

TrainingLayout training_layout(const Scenario& s) {
  const auto& par = s.policy.parallelism;
  const int model_parallel = std::max(1, par.tensor * par.pipeline);
  TrainingLayout l;
  l.ranks_per_node = std::max(1, s.hardware.gpu_count / model_parallel);
  l.data_parallel = l.ranks_per_node * std::max(1, s.training.nodes);
  l.micro_batch = double(s.training.global_batch) / l.data_parallel;
  return l;
}

RankStates rank_states(const LlmSpec& m, const TrainingWorkload& w, int data_parallel) {
  const double n = count_params(m).total;
  const StateBytes b = state_bytes_per_param(w.precision, w.optimizer_kind);
  const double dp = std::max(1, data_parallel);
  RankStates r;
  r.optimizer = n * b.optimizer / (w.zero_stage >= 1 ? dp : 1.0);
  r.grads = n * b.grads / (w.zero_stage >= 2 ? dp : 1.0);
  r.params = n * b.params / (w.zero_stage >= 3 ? dp : 1.0);
  return r;
}

double activation_bytes(const LlmSpec& m, double micro_batch, int seq, bool checkpointing) {
  const double s = seq, h = m.hidden, b = micro_batch;
  const double layer_full = s * b * h * (34.0 + 5.0 * m.heads * s / h);
  const double layer_input = 2.0 * s * b * h;
  const double logits = s * b * m.vocab * (2.0 + 4.0);
  if (checkpointing) return m.layers * layer_input + layer_full + logits;
  return m.layers * layer_full + logits;
}

namespace {

// The largest unit ZeRO-3 gathers at once: a transformer layer or the (un)embedding matrix.
double largest_module_params(const LlmSpec& m) {
  const ParamCounts c = count_params(m);
  return std::max({c.per_layer, c.embedding, c.lm_head});
}

}  // namespace

CapacityReport training_capacity(const Scenario& s, const ExecutionModel& em) {
  const TrainingWorkload& w = s.training;
  const LlmSpec& m = s.model;
  const TrainingLayout l = training_layout(s);
  const RankStates rs = rank_states(m, w, l.data_parallel);
  const StateBytes b = state_bytes_per_param(w.precision, w.optimizer_kind);
  const ZeroBuffers zb;
  const double n = count_params(m).total;
  const double dp = l.data_parallel;
  const double partition = w.zero_stage >= 1 ? n / dp : n;
  const bool mixed = w.precision == TrainingWorkload::Precision::kMixed;
  const bool cpu_step = w.optimizer_on_cpu || w.optimizer != Tier::kGpu;

  TierMemory gpu{"gpu", 0, s.hardware.gpu.memory_gb * units::kGB, {}};
  if (w.params == Tier::kGpu) gpu.add("parameters", rs.params);
  if (w.gradients == Tier::kGpu) gpu.add("gradients", rs.grads);
  if (w.optimizer == Tier::kGpu) gpu.add("optimizer states", rs.optimizer);
  if (w.zero_stage >= 3) {
    // Gathered parameters live until released; at least the modules in flight (prefetched, in
    // use, and the one whose gradients are being reduced).
    const double live = std::max(zb.max_live_params,
                                 (s.policy.prefetch_layers + 2) * largest_module_params(m));
    gpu.add("gathered parameters (ZeRO-3 live)", std::min(live, n) * b.params);
  }
  if (w.zero_stage >= 2 || w.gradients != Tier::kGpu)
    gpu.add("gradient reduce bucket", std::min(zb.reduce_bucket_elems, n) * b.grads);
  if (mixed && !cpu_step) {
    // Plain data parallelism fuses every gradient into one flat fp32 buffer for the all-reduce and
    // the step (the ZeRO paper's "6 GB for a 1.5B model"); ZeRO converts its partition, stage 3
    // one sub-group at a time.
    const double fp32_grads =
        w.zero_stage >= 3 ? std::min(partition, zb.sub_group_params) : partition;
    gpu.add("fp32 gradient buffer (optimizer step)", fp32_grads * 4.0);
  }
  gpu.add("activations", activation_bytes(m, l.micro_batch, w.sequence_tokens,
                                          w.activation_checkpointing));
  gpu.add("CUDA context and workspace", em.gpu_reserved_bytes);

  const double rpn = l.ranks_per_node;
  TierMemory cpu{"cpu", 0, s.hardware.host.dram_gb * units::kGB, {}};
  if (w.params == Tier::kCpu) cpu.add("parameters", rpn * rs.params);
  if (w.gradients == Tier::kCpu) cpu.add("gradients", rpn * rs.grads);
  if (w.optimizer == Tier::kCpu) cpu.add("optimizer states", rpn * rs.optimizer);
  if (cpu_step && mixed && w.gradients != Tier::kCpu)
    cpu.add("fp32 gradients for CPU Adam", rpn * std::min(partition, zb.sub_group_params) * 4.0);
  if (w.optimizer == Tier::kNvme)
    // Two sub-groups in flight (one being stepped, one being read or written back), each with its
    // optimizer states and fp32 gradients.
    cpu.add("pinned optimizer swap buffers",
            rpn * 2.0 * std::min(partition, zb.nvme_sub_group_params) * (b.optimizer + 4.0));
  if (w.params == Tier::kNvme)
    cpu.add("pinned parameter swap buffers",
            rpn * (s.policy.prefetch_layers + 2) * largest_module_params(m) * b.params / dp);
  cpu.add("operating system and framework", em.host_reserved_bytes);

  TierMemory nvme{"nvme", 0, s.hardware.nvme.count * s.hardware.nvme.drive.capacity_tb * 1e12, {}};
  if (w.params == Tier::kNvme) nvme.add("parameters", rpn * rs.params);
  if (w.gradients == Tier::kNvme) nvme.add("gradients", rpn * rs.grads);
  if (w.optimizer == Tier::kNvme) nvme.add("optimizer states", rpn * rs.optimizer);

  CapacityReport r;
  r.tiers = {gpu, cpu, nvme};
  finish_capacity(r);
  return r;
}

LlmSpec scaled_model(const LlmSpec& base, TrainingWorkload::Shape shape, int step) {
  if (step < 1) throw ModelError("model scale step must be >= 1");
  LlmSpec m = base;
  m.published_params_b = 0;
  if (shape == TrainingWorkload::Shape::kLayers) {
    m.layers = step;
  } else {
    constexpr int kHeadDim = 64;
    m.hidden = kHeadDim * step;
    m.heads = step;
    const double kv_ratio = base.heads > 0 ? double(base.kv_heads) / base.heads : 1.0;
    m.kv_heads = std::max(1, int(std::lround(m.heads * kv_ratio)));
    while (m.heads % m.kv_heads != 0) ++m.kv_heads;  // keep grouped-query heads a divisor
    m.ffn = int(std::lround(double(m.hidden) * base.ffn / base.hidden));
    m.layers = std::max(1, int(std::lround(double(m.hidden) * base.layers / base.hidden)));
  }
  m.name = base.name + "-scaled-" + std::to_string(step);
  return m;
}

CapacitySearch largest_trainable(const Scenario& s, const ExecutionModel& em) {
  Scenario probe = s;
  auto fits = [&](int step, std::string* why) {
    probe.model = scaled_model(s.model, s.training.capacity_shape, step);
    const CapacityReport r = training_capacity(probe, em);
    if (why) *why = r.shortfall;
    return r.fits;
  };
  CapacitySearch out;
  std::string why;
  if (!fits(1, &why)) {
    out.limit = why;
    return out;
  }
  // Double until a step does not fit, then bisect: memory grows with the step.
  int lo = 1, hi = 2;
  constexpr int kMaxStep = 1 << 20;
  while (hi < kMaxStep && fits(hi, nullptr)) {
    lo = hi;
    hi *= 2;
  }
  if (hi >= kMaxStep) throw ModelError("capacity search did not find a model that does not fit");
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (fits(mid, nullptr) ? lo : hi) = mid;
  }
  fits(hi, &out.limit);
  out.found = true;
  out.step = lo;
  out.model = scaled_model(s.model, s.training.capacity_shape, lo);
  out.params = count_params(out.model).total;
  return out;
}

}  // namespace tiersim
