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

double activation_checkpoint_bytes(const LlmSpec& m, double micro_batch, int seq) {
  return m.layers * 2.0 * seq * micro_batch * m.hidden;
}

double layer_token_activation_bytes(const LlmSpec& m, bool with_experts) {
  const double h = m.hidden;
  // Korthikanti et al. 2022, Sec. 4.1, term by term at the layer's own widths. The two norms'
  // inputs (2 x 2h); attention: the QKV projections' input (2h), Q and K for the scores, V for
  // their product with the probabilities, the output projection's input, and its dropout mask
  // (1 byte a value). For a GPT layer (every width h) that is 4h + 11h.
  double bytes =
      4 * h + 2 * h + 2.0 * m.q_dim() + 2.0 * m.kv_dim() + 2.0 * m.v_dim() + 2.0 * m.o_dim() + h;
  // MLA (DeepseekV3Attention): the up projections also keep their inputs, the compressed query
  // and the key-value latent; its K and V above are the widened ones kv_b_proj makes.
  if (m.mla()) bytes += 2.0 * (double(m.q_lora_rank) + m.kv_lora_rank);
  // The MLP: its input (2h) and its dropout mask (h), and per inner element what autograd keeps:
  // a plain MLP the activation's input and output (2 x 2 bytes; 4h wide in a GPT layer: 3h + 16h
  // = 19h), a gated one the gate's and the up projection's outputs, the activation's output and
  // the product the down projection reads (4 x 2 bytes).
  const double per_inner = m.ffn_kind == FfnKind::kGated ? 8.0 : 4.0;
  bytes += 3 * h;
  if (with_experts) {
    // Each token's top-k experts keep their own copy of the token (the dispatch) and their inner
    // activations; the shared experts read the layer's input; the router keeps its fp32
    // probabilities.
    bytes += m.experts_per_token * (2 * h + per_inner * m.ffn) + per_inner * m.shared_ffn +
             4.0 * m.experts;
  } else {
    bytes += per_inner * (m.experts > 1 ? m.dense_mlp_width() : m.ffn);
  }
  return bytes;
}

double activation_bytes(const LlmSpec& m, double micro_batch, int seq, bool checkpointing) {
  const double s = seq, b = micro_batch;
  // One layer's full set: its per-token activations and the attention scores (5 x heads x s per
  // token: the softmax's fp16 output and the dropout's mask and output), for the widest kind of
  // layer; all layers together without checkpointing.
  const auto layer_set = [&](bool with_experts) {
    return s * b * (layer_token_activation_bytes(m, with_experts) + 5.0 * m.heads * s);
  };
  const int expert_layers = m.expert_layers();
  const double expert_set = expert_layers > 0 ? layer_set(true) : 0;
  const double dense_set = expert_layers < m.layers ? layer_set(false) : 0;
  const double layer_full = std::max(expert_set, dense_set);
  const double all_layers = expert_layers * expert_set + (m.layers - expert_layers) * dense_set;
  const double logits = s * b * m.vocab * (2.0 + 4.0);
  // Without checkpointing every layer's activations are still held when the loss runs, so the
  // peak is their sum with the logits. With it the two peaks come at different times: the logits
  // (Megatron-LM's fp16 output and its .float() copy, which vocab_parallel_cross_entropy turns
  // into the softmax it saves in place) live from the head's forward until the loss's and the
  // head's backward have run, and autograd frees them before the first layer is recomputed; a
  // layer's full set lives only while that layer is recomputed and run backward. The checkpoints
  // are held throughout.
  if (checkpointing) return activation_checkpoint_bytes(m, b, seq) + std::max(layer_full, logits);
  return all_layers + logits;
}

const std::vector<ZeroStrategy>& zero_strategies() {
  using T = Tier;
  static const std::vector<ZeroStrategy> kStrategies = {
      {"data_parallel", 0, T::kGpu, T::kGpu, T::kGpu, false},
      {"zero_offload", 2, T::kGpu, T::kCpu, T::kCpu, false},
      {"zero3", 3, T::kGpu, T::kGpu, T::kGpu, false},
      {"zero_infinity_cpu", 3, T::kCpu, T::kCpu, T::kCpu, true},
      {"zero_infinity_nvme", 3, T::kNvme, T::kCpu, T::kNvme, true},
  };
  return kStrategies;
}

void apply_strategy(Scenario& s, const ZeroStrategy& st) {
  s.training.zero_stage = st.stage;
  s.training.params = st.params;
  s.training.gradients = st.gradients;
  s.training.optimizer = st.optimizer;
  s.training.optimizer_on_cpu = st.optimizer != Tier::kGpu;
  s.training.cpu_checkpointing = st.cpu_checkpointing;
}

ZeroBuffers zero_buffers(const TrainingWorkload& w) {
  ZeroBuffers zb;
  zb.reduce_bucket_elems = w.reduce_bucket_elems;
  zb.reduce_buckets = w.zero_stage <= 2 && w.overlap_comm ? 2 : 1;
  return zb;
}

double largest_operator_params(const LlmSpec& m, int linear_tiles) {
  const double h = m.hidden;
  // One Linear: an FFN matrix (h x ffn), a q/o projection (h x h) or a k/v projection (h x kv).
  double linear = h * std::max({double(m.widest_ffn()), h, double(m.kv_dim())});
  // MLA's projections have shapes of their own (kv_b_proj, q_b_proj, o_proj).
  if (m.mla()) {
    const AttentionMatrices a = attention_matrices(m);
    for (int i = 0; i < a.count; ++i) linear = std::max(linear, a.items[i].elements);
  }
  const double token_embedding = double(m.vocab) * h;
  return std::max(linear / std::max(1, linear_tiles), token_embedding);
}

double gathered_params_bytes(const LlmSpec& m, const TrainingWorkload& w, const ZeroBuffers& zb) {
  const StateBytes b = state_bytes_per_param(w.precision, w.optimizer_kind);
  const ParamCounts c = count_params(m);
  double live = largest_operator_params(m, w.linear_tiles) + zb.prefetch_bucket_params;
  if (w.activation_checkpointing)
    live += std::min(std::max(c.expert_layer, c.dense_layer), zb.max_reuse_distance_params);
  return std::min(live, c.total) * b.params;
}

double largest_sub_group_params(double partition_params, const TrainingWorkload& w,
                                const ZeroBuffers& zb) {
  const double sub_group =
      w.optimizer == Tier::kNvme ? zb.nvme_sub_group_params : zb.sub_group_params;
  return std::min(partition_params, sub_group);
}

bool host_grads_are_fp32(const TrainingWorkload& w) {
  return w.zero_stage <= 2 ||
         (w.zero3_host_grads == TrainingWorkload::Zero3HostGrads::kFp32Partition &&
          w.optimizer != Tier::kNvme);
}

double host_grad_partition_bytes(double partition_params, const TrainingWorkload& w) {
  if (host_grads_are_fp32(w)) return partition_params * 4.0;
  // DeepSpeed 0.3.15-0.5 with the optimizer on NVMe swaps the fp32 partition out with it.
  if (w.zero3_host_grads == TrainingWorkload::Zero3HostGrads::kFp32Partition) return 0.0;
  return partition_params * state_bytes_per_param(w.precision, w.optimizer_kind).grads;
}

double fp32_grad_sub_group_bytes(double partition_params, const TrainingWorkload& w,
                                 const ZeroBuffers& zb) {
  return largest_sub_group_params(partition_params, w, zb) * 4.0;
}

double param_swap_buffer_bytes(const LlmSpec& m, const TrainingWorkload& w, int data_parallel,
                               const ZeroBuffers& zb) {
  const double partition = largest_operator_params(m, w.linear_tiles) / std::max(1, data_parallel);
  const double buffer = std::max(zb.param_swap_buffer_elems, partition);
  return zb.param_swap_buffer_count * buffer *
         state_bytes_per_param(w.precision, w.optimizer_kind).params;
}

double optimizer_swap_buffer_bytes(double partition_params, const TrainingWorkload& w,
                                   const ZeroBuffers& zb) {
  return zb.optimizer_swap_buffer_count * largest_sub_group_params(partition_params, w, zb) * 4.0;
}

CapacityReport training_capacity(const Scenario& s, const ExecutionModel& em) {
  const TrainingWorkload& w = s.training;
  const LlmSpec& m = s.model;
  const TrainingLayout l = training_layout(s);
  const RankStates rs = rank_states(m, w, l.data_parallel);
  const StateBytes b = state_bytes_per_param(w.precision, w.optimizer_kind);
  const ZeroBuffers zb = zero_buffers(w);
  const double n = count_params(m).total;
  const double dp = l.data_parallel;
  const double partition = w.zero_stage >= 1 ? n / dp : n;
  const bool mixed = w.precision == TrainingWorkload::Precision::kMixed;
  const bool cpu_step = w.optimizer_on_cpu || w.optimizer != Tier::kGpu;

  const double checkpoints_bytes =
      w.activation_checkpointing && w.cpu_checkpointing
          ? activation_checkpoint_bytes(m, l.micro_batch, w.sequence_tokens)
          : 0.0;

  TierMemory gpu = gpu_tier(s.hardware.gpu, em);
  if (w.params == Tier::kGpu) gpu.add("parameters", rs.params);
  if (w.gradients == Tier::kGpu) gpu.add("gradients", rs.grads);
  if (w.optimizer == Tier::kGpu) gpu.add("optimizer states", rs.optimizer);
  if (w.zero_stage >= 3)
    gpu.add("gathered parameters (ZeRO-3 live)", gathered_params_bytes(m, w, zb));
  if (w.zero_stage >= 2 || w.gradients != Tier::kGpu)
    gpu.add("gradient reduce bucket", zb.reduce_buckets * zb.reduce_bucket_elems * b.grads);
  if (mixed && !cpu_step) {
    // Plain data parallelism fuses every gradient into one flat fp32 buffer for the all-reduce and
    // the step (the ZeRO paper's "6 GB for a 1.5B model"); ZeRO converts its partition, stage 3
    // one sub-group at a time.
    const double fp32_grads =
        w.zero_stage >= 3 ? std::min(partition, zb.sub_group_params) : partition;
    gpu.add("fp32 gradient buffer (optimizer step)", fp32_grads * 4.0);
  }
  gpu.add("activations",
          activation_bytes(m, l.micro_batch, w.sequence_tokens, w.activation_checkpointing) -
              checkpoints_bytes);
  add_communicator_buffers(gpu, em, double(s.hardware.gpu_count) * s.training.nodes);

  const double rpn = l.ranks_per_node;
  // DeepSpeed's own host gradient buffers when the optimizer steps on the CPU (mixed precision).
  const bool deepspeed_grads = cpu_step && mixed && w.zero_stage >= 1;
  TierMemory cpu{"cpu", 0, s.hardware.host.dram_gb * units::kGB, {}};
  if (w.params == Tier::kCpu) cpu.add("parameters", rpn * rs.params);
  const bool fp32_host_grads = deepspeed_grads && host_grads_are_fp32(w);
  if (w.gradients == Tier::kCpu && deepspeed_grads) {
    const double bytes = host_grad_partition_bytes(partition, w);
    if (bytes > 0)
      cpu.add(fp32_host_grads ? "fp32 gradient partition" : "gradient partitions (flat buffer)",
              rpn * bytes);
  } else if (w.gradients == Tier::kCpu) {
    cpu.add("gradients", rpn * rs.grads);
  }
  if (w.optimizer == Tier::kCpu) cpu.add("optimizer states", rpn * rs.optimizer);
  // CPU Adam steps straight from an fp32 gradient partition where one is kept (stages 1-2;
  // DeepSpeed 0.3.15-0.5's stage 3 with the optimizer in host memory); otherwise (today's stage
  // 3, the NVMe optimizer, gradients kept on the GPU) it converts one sub-group at a time into an
  // fp32 buffer.
  if (cpu_step && mixed && !(fp32_host_grads && w.gradients == Tier::kCpu))
    cpu.add("fp32 gradient buffer (one sub-group)",
            rpn * fp32_grad_sub_group_bytes(partition, w, zb));
  if (w.optimizer == Tier::kNvme)
    cpu.add("pinned optimizer swap buffers", rpn * optimizer_swap_buffer_bytes(partition, w, zb));
  if (w.params == Tier::kNvme)
    cpu.add("pinned parameter swap buffers",
            rpn * param_swap_buffer_bytes(m, w, l.data_parallel, zb));
  if (checkpoints_bytes > 0) cpu.add("activation checkpoints", rpn * checkpoints_bytes);
  cpu.add("operating system and framework", em.host_reserved_bytes);

  TierMemory nvme{"nvme", 0, s.hardware.nvme.count * s.hardware.nvme.drive.capacity_tb * 1e12, {}};
  if (w.params == Tier::kNvme) nvme.add("parameters", rpn * rs.params);
  if (w.gradients == Tier::kNvme) nvme.add("gradients", rpn * rs.grads);
  if (w.optimizer == Tier::kNvme) nvme.add("optimizer states", rpn * rs.optimizer);
  if (w.optimizer == Tier::kNvme && deepspeed_grads && w.zero_stage >= 3)
    // stage3.py partition_grads swaps each swappable sub-group's fp32 gradients out to NVMe
    // (optimizer_swapper.swap_out_gradients) until its step.
    nvme.add("fp32 gradients (swapped sub-groups)", rpn * partition * 4.0);

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
