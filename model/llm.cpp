#include "model/llm.hpp"

#include <algorithm>
#include <cmath>

namespace tiersim {

namespace {
// OPT and BLOOM put biases on every linear layer and layer norm; Llama, Mixtral and Phi-3 do not.
bool has_biases(const LlmSpec& m) { return m.family == "opt" || m.family == "bloom"; }

// Elements of MLA's kv_b_proj: the latent widened into each head's key (past its rotary part) and
// value. Its weights, and the work of widening one token's latent.
double kv_b_proj_elements(const LlmSpec& m) {
  const double nope = m.head_dim() - m.qk_rope_dim;
  return double(m.kv_lora_rank) * m.heads * (nope + m.v_head_dim());
}
}  // namespace

AttentionMatrices attention_matrices(const LlmSpec& m) {
  const double h = m.hidden, q = m.q_dim();
  AttentionMatrices a;
  auto add = [&a](const char* name, double elements) { a.items[a.count++] = {name, elements}; };
  if (!m.mla()) {
    const double kv = m.kv_dim();
    add("q_proj", h * q);
    add("k_proj", h * kv);
    add("v_proj", h * kv);
    add("o_proj", q * h);
    return a;
  }
  // DeepseekV3Attention: q_a_proj (hidden -> q_lora_rank) and q_b_proj (-> heads x head_dim), or
  // q_proj; kv_a_proj_with_mqa (hidden -> kv_lora_rank + qk_rope_head_dim); kv_b_proj
  // (kv_lora_rank -> heads x (qk_nope_head_dim + v_head_dim)); o_proj (heads x v_head_dim ->
  // hidden). No biases (attention_bias false in every published config).
  if (m.q_lora_rank > 0) {
    add("q_a_proj", h * m.q_lora_rank);
    add("q_b_proj", double(m.q_lora_rank) * q);
  } else {
    add("q_proj", h * q);
  }
  add("kv_a_proj", h * m.latent_kv_dim());
  add("kv_b_proj", kv_b_proj_elements(m));
  add("o_proj", double(m.o_dim()) * h);
  return a;
}

ParamCounts count_params(const LlmSpec& m) {
  ParamCounts p;
  const double h = m.hidden, q = m.q_dim(), kv = m.kv_dim(), f = m.ffn;
  const bool bias = has_biases(m);
  p.attention = attention_matrices(m).elements() + (bias ? q + h + 2 * kv : 0);
  const double matrices = m.ffn_kind == FfnKind::kGated ? 3 : 2;
  p.ffn_per_expert = matrices * h * f + (bias ? f + h : 0);
  p.ffn_total = p.ffn_per_expert * m.experts;
  p.ffn_shared = matrices * h * m.shared_ffn;
  p.router = m.experts > 1 ? h * m.experts : 0;
  p.norms = 2 * h * (bias ? 2 : 1);
  // MLA's q_a_layernorm and kv_a_layernorm (RMSNorms of the two latents).
  if (m.mla()) p.norms += double(m.q_lora_rank) + m.kv_lora_rank;
  // Each norm's weight (and bias) has h elements; the biases are q's, k's and v's (BLOOM fuses
  // them into query_key_value's one bias of q + 2 kv), o's and fc2's (h) and fc1's (f).
  p.largest_small_param = h;
  if (bias) p.largest_small_param = std::max({h, f, m.family == "bloom" ? q + 2 * kv : q});
  p.largest_small_param = std::max(p.largest_small_param, p.router);
  p.expert_layer = p.attention + p.ffn_total + p.ffn_shared + p.router + p.norms;
  p.per_layer = p.expert_layer;
  p.embedding = static_cast<double>(m.vocab) * h + (m.learned_positions ? m.max_positions * h : 0);
  p.lm_head = m.tied_embeddings ? 0 : static_cast<double>(m.vocab) * h;
  const double final_norm = h * (bias ? 2 : 1);
  double layers_total = p.per_layer * m.layers;
  if (m.mixed_layers()) {
    // Layers without the experts run one dense MLP (its bias, for families with biases).
    const double fd = m.dense_mlp_width();
    p.ffn_dense = matrices * h * fd + (bias ? fd + h : 0);
    p.dense_layer = p.attention + p.ffn_dense + p.norms;
    const double with_experts = m.expert_layers();
    layers_total = with_experts * p.expert_layer + (m.layers - with_experts) * p.dense_layer;
    p.per_layer = layers_total / m.layers;
    if (bias) p.largest_small_param = std::max(p.largest_small_param, fd);
  }
  p.total = layers_total + p.embedding + p.lm_head + final_norm;
  return p;
}

LlmSpec layer_model(const LlmSpec& m, bool with_experts) {
  if (!m.mixed_layers()) return m;
  LlmSpec one = m;
  one.sources = SourceMap{};
  one.dense_first_layers = 0;
  one.moe_layer_step = 1;
  one.dense_ffn = 0;
  if (!with_experts) {
    one.ffn = m.dense_mlp_width();
    one.experts = 1;
    one.experts_per_token = 1;
    one.shared_ffn = 0;
  }
  return one;
}

double bytes_per_weight(int bits, int group_size) {
  // Group-wise quantisation stores an fp16 scale and an fp16 minimum (4 bytes) per group.
  if (bits >= 16) return bits / 8.0;
  return bits / 8.0 + 4.0 / group_size;
}

double kv_bytes_per_token_layer(const LlmSpec& m, double bytes_per_elem) {
  return (double(m.kv_dim()) + m.v_dim()) * bytes_per_elem;
}

KvCacheShape kv_cache_shape(const LlmSpec& m, KvCacheForm form, double bytes_per_elem, double tp) {
  if (form == KvCacheForm::kLatent && m.mla())
    return {m.latent_kv_dim() * bytes_per_elem, 1.0, true};
  return {kv_bytes_per_token_layer(m, bytes_per_elem), tp, false};
}

double layer_active_params(const LlmSpec& m) {
  const double h = m.hidden, f = m.ffn;
  const double matrices = m.ffn_kind == FfnKind::kGated ? 3 : 2;
  // With MLA's absorbed decode, kv_b_proj's halves are applied to the query and the output
  // instead of the new token's latent: the same multiply-adds per token.
  const double attention = attention_matrices(m).elements();
  const double router = m.experts > 1 ? h * m.experts : 0;
  // Every token runs its top-k routed experts and the shared ones.
  const double with_experts =
      attention + matrices * h * (f * m.experts_per_token + double(m.shared_ffn)) + router;
  if (!m.mixed_layers()) return with_experts;
  const double dense = attention + matrices * h * double(m.dense_mlp_width());
  const double n = m.expert_layers();
  return (n * with_experts + (m.layers - n) * dense) / m.layers;
}

double layer_read_params(const LlmSpec& m, double tokens) {
  const double active = layer_active_params(m);
  if (m.experts <= 1) return active;
  const double matrices = m.ffn_kind == FfnKind::kGated ? 3 : 2;
  const double per_expert = matrices * double(m.hidden) * m.ffn;
  const double beyond_top_k = std::max(
      0.0, expected_distinct_experts(m, tokens) - std::min(m.experts, m.experts_per_token));
  return active + beyond_top_k * per_expert * m.expert_layers() / m.layers;
}

double expected_distinct_experts(const LlmSpec& m, double tokens) {
  if (m.experts <= 1) return 1;
  const double e = m.experts;
  const double k = std::min(e, double(std::max(1, m.experts_per_token)));
  return e * (1.0 - std::pow(1.0 - k / e, std::max(0.0, tokens)));
}

double layer_gemm_flops(const LlmSpec& m, double tokens) {
  return 2.0 * tokens * layer_active_params(m);
}

double attention_flops(const LlmSpec& m, double queries, double context) {
  // Scores (Q K^T) and the weighted sum (P V), 2 FLOPs per multiply-add, every query head.
  return 2.0 * queries * context * (double(m.q_dim()) + m.o_dim());
}

namespace {
// The mean over the layers of `context` keys on the full-attention layers and `sliding_keys` on
// the sliding ones (a context past the window; m.sliding_layers() > 0).
double layers_mean(const LlmSpec& m, double context, double sliding_keys) {
  const int sliding = m.sliding_layers();
  return ((m.layers - sliding) * context + double(sliding) * sliding_keys) / m.layers;
}
}  // namespace

double mean_window_context(const LlmSpec& m, double context) {
  if (m.sliding_layers() <= 0 || context <= m.sliding_window) return context;
  return layers_mean(m, context, m.sliding_window);
}

double mean_attended_context(const LlmSpec& m, double context) {
  if (!m.chunked_attention || m.sliding_layers() <= 0 || context <= m.sliding_window)
    return mean_window_context(m, context);
  const double in_chunk = std::fmod(std::max(context, 1.0) - 1.0, m.sliding_window) + 1.0;
  return layers_mean(m, context, in_chunk);
}

CausalPairs chunked_causal_pairs(double queries, double offset, double chunk) {
  CausalPairs p;
  if (queries <= 0) return p;
  if (chunk <= 0) return causal_pairs(queries, offset, 0);
  // Chunk by chunk over the queries' positions offset + 1 .. offset + queries: in a chunk that
  // starts at s, the queries a .. b (the new tokens begin at offset + 1) attend to p - s + 1 keys
  // each, of which p - max(s, offset + 1) + 1 are new.
  const double first = offset + 1, last = offset + queries;
  for (double s = std::floor((first - 1) / chunk) * chunk + 1; s <= last; s += chunk) {
    const double a = std::max(s, first), b = std::min(s + chunk - 1, last);
    const double n = b - a + 1;
    const double attended = n * ((a - s + 1) + (b - s + 1)) / 2;  // sum of p - s + 1
    const double fresh = n * (n + 1) / 2;                         // sum of p - a + 1
    p.diagonal += fresh;
    p.cached += attended - fresh;
  }
  return p;
}

CausalPairs causal_pairs(double queries, double offset, double window) {
  CausalPairs p;
  if (queries <= 0) return p;
  if (window <= 0 || offset + queries <= window) {
    p.diagonal = queries * (queries + 1) / 2;
    p.cached = queries * offset;
    return p;
  }
  // Query i attends to min(offset + i, window) keys: of them min(i, window) new tokens (itself
  // and those before it), the rest from the offset.
  const double ramp = std::min(queries, window);  // queries still under the window's width
  p.diagonal = ramp * (ramp + 1) / 2 + (queries - ramp) * window;
  // Sum over i of min(offset + i, window), less the diagonal.
  const double under = std::clamp(window - offset, 0.0, queries);  // i with offset + i <= window
  const double all = under * offset + under * (under + 1) / 2 + (queries - under) * window;
  p.cached = all - p.diagonal;
  return p;
}

double latent_expansion_flops(const LlmSpec& m, double tokens) {
  if (!m.mla()) return 0;
  return 2.0 * tokens * kv_b_proj_elements(m);
}

double latent_attention_flops(const LlmSpec& m, double queries, double context) {
  if (!m.mla()) return attention_flops(m, queries, context);
  return 2.0 * queries * context * m.heads * (double(m.latent_kv_dim()) + m.kv_lora_rank);
}

// The fp32 buffer (model/llm.hpp HostKvCache), checked again for the versions that Micron's
// ZeRO-Inference runs used (issue 30): every commit of the fork's modeling_opt.py that has the
// offload (71b1ce1 "add opt", 2023-06, to 0e25ddc, 2023-09, the branch head) allocates [layers, 2,
// batch, heads, prompt + max_new_tokens - 1, head_dim] with torch.empty(buffer_shape,
// pin_memory=...) and no dtype, and its decode attention sends the query as query_states.float()
// into torch.bmm with the buffer's keys: bmm takes one dtype, so an fp16 buffer would not run at
// all. The default dtype is float32 there: from_pretrained(torch_dtype=torch.float16) sets it only
// while building the model and restores it (modeling_utils.py, dtype_orig), and DeepSpeed's
// zero.Init puts back the torch.empty it wraps on exit (runtime/zero/partition_parameters.py,
// unpatch_init_and_builtins). DeepSpeedExamples' run_model.py (every version since the 2023-09
// refresh) passes gen_len as max_new_tokens, so the buffer holds prompt + gen - 1 positions, all of
// them written by the end of the generation. OPT-30B at batch 200, prompt 512, gen 32 thus needs
// 299e9 bytes of host DRAM for this buffer.
HostKvCache zero_inference_host_kv(const LlmSpec& m) {
  HostKvCache c;
  if (m.family == "bloom") {
    // BloomModel.forward: buffers of hidden_states.dtype; BloomAttention returns its fp32 output.
    c.bytes_per_elem = 2;
    c.fresh_each_generate = true;
  } else if (m.family == "opt") {
    // OPTAttention: torch.bmm(...).to(hidden_states.dtype) on the CPU before the move back.
    c.output_bytes_per_elem = 2;
    c.fresh_each_generate = true;
    // OPTAttention's prefill store: copy_(key_states, non_blocking=True), so PyTorch converts on
    // the GPU and stages in the buffer's fp32 (aten/src/ATen/native/cuda/Copy.cu,
    // copy_kernel_cuda: conversion_device = non_blocking ? kCUDA : kCPU).
    c.prefill_staging_bytes_per_elem = c.bytes_per_elem;
  }
  // LlamaAttention copies with non_blocking=self.async_kv_offload, off unless run_model.py gets
  // --async_kv_offload: staged in the fp16 of the source. BLOOM's prefill store is not re-read;
  // it is taken to block like Llama's.
  return c;
}

bool generation_config_hybrid_cache(const LlmSpec& m) {
  return m.family == "gemma2" || m.family == "gemma3_text";
}

bool zero_inference_host_kv_supported(const LlmSpec& m) {
  return m.family == "opt" || m.family == "bloom" || m.family == "llama";
}

CpuAttentionWork zero_inference_decode_attention(const LlmSpec& m, double seqs, double context) {
  const HostKvCache c = zero_inference_host_kv(m);
  CpuAttentionWork w;
  w.flops = attention_flops(m, seqs, context);
  const double tokens = seqs * context;
  const double compact_bytes = tokens * kv_bytes_per_token_layer(m, c.bytes_per_elem);
  // K and V for every query head in fp32: what the matmuls read.
  const double full_fp32_bytes = tokens * 2.0 * m.head_dim() * m.heads * 4.0;
  const bool materialised = m.kv_heads < m.heads || c.bytes_per_elem != 4.0;
  w.dram_bytes = compact_bytes;
  if (materialised) {
    w.dram_bytes += 2.0 * full_fp32_bytes;  // written, then read by the matmuls
    w.fresh_bytes = full_fp32_bytes;
  }
  return w;
}

}  // namespace tiersim
