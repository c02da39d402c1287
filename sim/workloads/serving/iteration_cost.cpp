#include "sim/workloads/serving/iteration_cost.hpp"

#include <algorithm>

#include "model/layout.hpp"
#include "model/llm.hpp"
#include "model/power.hpp"
#include "model/units.hpp"

namespace tiersim::sim {

IterationModel::IterationModel(const Scenario& s, const ExecutionModel& em)
    : s_(s), em_(with_stack(em, s.policy.stack)) {
  const Policy& p = s.policy;
  const LlmSpec& m = s.model;
  const HostSpec& host = s.hardware.host;
  tp_ = p.parallelism.tensor;
  // One GPU's share of a token's cache entry in one layer, in the form the stack keeps it.
  const KvCacheShape kv = stack_kv_cache(p.stack, m, p.kv_bits / 8.0, tp_);
  kv_token_layer_bytes_ = kv.bytes_per_token_layer / kv.split;
  kv_entry_split_ = kv.split;
  latent_kv_ = kv.latent;
  window_reads_ = stack_reads_window(p.stack, m);
  window_blocks_ = stack_caches_window(p.stack, m, s.serving.kv_tiers());
  peer_bps_ = units::gbps_to_bytes_per_s(gpu_peer_gbps(s.hardware.gpu, host));
  const auto modules = weight_modules(m, p);
  const WeightModule& emb = modules.front();
  // An MoE whose layers differ (GLM-4.5's and DeepSeek's dense first layers) streams and
  // computes each kind as its own: the first layer with the experts stands for its kind, the
  // first without for the dense ones.
  const WeightModule* expert = &modules[1];
  const WeightModule* dense = nullptr;
  if (m.mixed_layers()) {
    expert = nullptr;
    for (std::size_t i = 1; i + 1 < modules.size() && !(expert && dense); ++i) {
      const WeightModule*& kind = m.layer_has_experts(modules[i].layer) ? expert : dense;
      if (!kind) kind = &modules[i];
    }
  }
  const WeightModule& layer = *expert;
  const WeightModule& head = modules.back();
  embedding_elements_ = emb.elements();
  layer_elements_ = layer.elements();
  head_elements_ = head.elements();
  if (dense) {
    expert_layers_ = m.expert_layers();
    dense_layers_ = m.layers - expert_layers_;
    first_layer_dense_ = !m.layer_has_experts(0);
    last_layer_dense_ = !m.layer_has_experts(m.layers - 1);
    // Each kind computes as its own model, as the inference workload's layers do.
    kind_model_[0] = layer_model(m, false);
    kind_model_[1] = layer_model(m, true);
    kind_dequant_s_[0] = layer_dequant_s(s.hardware.gpu, em_, p, dense->elements(), tp_);
    kind_dequant_s_[1] = layer_dequant_s(s.hardware.gpu, em_, p, layer.elements(), tp_);
    // With prefetch, layer l computes while layer l + 1 is fetched: how often each kind follows
    // each (counted once here; the iteration cost then adds each pair's longer part).
    for (int l = 0; l + 1 < m.layers; ++l)
      pairs_[m.layer_has_experts(l) ? 1 : 0][m.layer_has_experts(l + 1) ? 1 : 0] += 1;
  }
  dequant_s_ = layer_dequant_s(s.hardware.gpu, em_, p, layer_elements_, tp_);

  // The weights' stream (model/weight_stream.hpp): the same operating point and per-tensor costs
  // as the inference workload, added up for the fetch process alone.
  const WeightStreamPoint stream = weight_stream_point(s, em_, modules);
  if (s.hardware.nvme.count > 0) {
    nvme_read_gbps_ = stream.nvme.read_gbps;
    // The KV tier reads and writes one block of one layer per request, all of the replica's
    // tensor-parallel shares together (a layer-first layout: vLLM's and LMCache's per-layer KV
    // tensors), at the policy's AIO queue depth.
    kv_nvme_ =
        nvme_array_timing(s.hardware.nvme, host, p.aio,
                          kv_token_layer_bytes_ * kv_entry_split_ * s.serving.prefix_block_tokens);
  }
  h2d_bps_ = stream.link_bytes_per_s;
  d2h_bps_ = units::gbps_to_bytes_per_s(d2h_gbps(s.hardware.gpu, host));
  auto fetch = [&](const WeightModule& mod, double& nvme_bytes) {
    const ModuleStream m = module_stream(stream, mod);
    for (const TensorStream& t : m.tensors) {
      streamed_bytes_ += (t.nvme_bytes + t.cpu_bytes) / tp_;
      nvme_bytes += t.nvme_bytes;
    }
    return module_stream_time(stream, m);
  };
  embedding_ = fetch(emb, embedding_nvme_bytes_);
  const double after_embedding = streamed_bytes_;
  layer_ = fetch(layer, layer_nvme_bytes_);
  // Every layer of a kind streams the same bytes; count them once per layer.
  if (dense) {
    const double expert_streamed = streamed_bytes_ - after_embedding;
    dense_layer_ = fetch(*dense, dense_layer_nvme_bytes_);
    const double dense_streamed = streamed_bytes_ - after_embedding - expert_streamed;
    streamed_bytes_ = after_embedding + layers_sum(expert_streamed, dense_streamed);
  } else {
    streamed_bytes_ = after_embedding + (streamed_bytes_ - after_embedding) * m.layers;
  }
  head_ = fetch(head, head_nvme_bytes_);
}

double IterationModel::kv_copies_s(double tokens, double bytes_per_s) const {
  // Each GPU copies its tensor-parallel share of every block over its own link, so the copies
  // per GPU are the blocks.
  return pinned_copies_s(s_.hardware.gpu, tokens / s_.serving.prefix_block_tokens,
                         tokens * kv_token_layer_bytes_ * s_.model.layers, bytes_per_s);
}

double IterationModel::layers_sum(double with_experts, double dense) const {
  if (dense_layers_ > 0) return expert_layers_ * with_experts + dense_layers_ * dense;
  return s_.model.layers * with_experts;
}

double IterationModel::layers_sum(double ModuleStreamTime::*part) const {
  return layers_sum(layer_.*part, dense_layer_.*part);
}

IterationCost IterationModel::cost(const IterationShape& w) const {
  const LlmSpec& m = s_.model;
  const GpuSpec& gpu = s_.hardware.gpu;
  const double tokens = w.tokens();
  IterationCost c;
  // Fused attention (FlashAttention, vLLM's PagedAttention) reads the KV cache once and keeps no
  // score matrix (Kwon et al., SOSP 2023, section 4); causal prefill attends to half a chunk on
  // average. Decode attention's FLOPs run at the GEMM rate (it is bound by its KV reads); each
  // prefill chunk's at the rate of the stack's attention kernel for its length.
  LayerPass pass;
  pass.tokens = tokens;
  pass.attention_flops = latent_kv_ ? latent_attention_flops(m, 1.0, w.decode_context_tokens)
                                    : attention_flops(m, 1.0, w.decode_context_tokens);
  // A latent cache's prefill chunks first widen their cached context into each head's keys and
  // values, at the GEMM rate with the attention (heads split over the ranks).
  // The cached tokens the prefill chunks read: on a sliding layer whose stack keeps only the
  // window, at most the window's worth of each chunk's offset.
  double prefill_kv_read_tokens = w.prefill_kv_read_tokens;
  if (window_reads_) {
    prefill_kv_read_tokens = 0;
    for (const PrefillChunk& chunk : w.prefill_chunks)
      prefill_kv_read_tokens += window_context(chunk.offset) * chunk.sequences;
  }
  if (latent_kv_) pass.attention_flops += latent_expansion_flops(m, prefill_kv_read_tokens);
  for (const PrefillChunk& chunk : w.prefill_chunks)
    pass.prefill_attention_s += prefill_attention_s(m, gpu, em_, s_.policy.stack, chunk, tp_);
  const double decode_reads = decode_kv_reads(s_.policy.stack, m.heads, m.kv_heads);
  pass.kv_distinct_read_bytes =
      (w.decode_context_tokens + prefill_kv_read_tokens) * kv_token_layer_bytes_;
  pass.kv_read_bytes = decode_reads == 1.0
                           ? pass.kv_distinct_read_bytes
                           : (w.decode_context_tokens * decode_reads + prefill_kv_read_tokens) *
                                 kv_token_layer_bytes_;
  pass.kv_write_bytes = tokens * kv_token_layer_bytes_;
  // A layer's kernels as the board runs them under its power limit (model/power.hpp); the
  // dequantisation kernel only streams memory.
  const auto layer_run_of = [&](const LlmSpec& lm, double dequant_s) {
    KernelTime k{dequant_s, 0, dequant_s};
    k += layer_kernel(lm, gpu, em_, pass, tp_, gemm_path(gpu, em_, s_.policy));
    return gpu_power_limited(gpu, k.plus_gap(em_.layer_overhead_s));
  };
  const LimitedKernels layer_run =
      dense_layers_ > 0 ? LimitedKernels{} : layer_run_of(m, dequant_s_);
  const double layer_gpu_s = layer_run.s;
  // An MoE whose layers differ: each kind's run (0 dense, 1 with the experts).
  LimitedKernels kind_run[2];
  if (dense_layers_ > 0)
    for (int k = 0; k < 2; ++k) kind_run[k] = layer_run_of(*kind_model_[k], kind_dequant_s_[k]);
  // Two ring all-reduces of the hidden states per layer under tensor parallelism (Megatron-LM),
  // after the kernels, as in the inference workload: each its latency by the link kind (NVLink,
  // PCIe peer-to-peer, PCIe through host memory) and its bytes at the peer rate.
  const double layer_peer_s =
      tensor_parallel_layer_comm(gpu, s_.hardware.host, m, tokens, tp_).seconds(peer_bps_);
  const double layer_s = layer_gpu_s + layer_peer_s;
  const KernelTime emb_k = edge_module(m, gpu, em_, false, tokens, 0, embedding_elements_, tp_);
  const KernelTime head_k = edge_module(m, gpu, em_, true, tokens, w.sampled, head_elements_, tp_);
  // The head's logits, one shard of the vocabulary per GPU, are gathered for the sampler after
  // the head (vLLM's LogitsProcessor), at the same link rate as the all-reduces.
  const double logits_peer_s =
      tensor_parallel_logits_comm(gpu, s_.hardware.host, m, w.sampled, tp_).seconds(peer_bps_);
  const LimitedKernels emb_run = gpu_power_limited(gpu, emb_k);
  const LimitedKernels head_run = gpu_power_limited(gpu, head_k);
  const double emb_s = emb_run.s;
  const double head_s = head_run.s;

  // Modules in order: embedding, the layers, the head. With prefetch, module i+1's weights arrive
  // while module i computes (a two-stage pipeline); without it each fetch precedes its compute.
  const double L = m.layers;
  if (dense_layers_ > 0) {
    // Each kind's fetch and compute, as many times as it has layers; with prefetch the first
    // layer's fetch overlaps the embedding, every later one the layer before it, and the head's
    // the last layer.
    const ModuleStreamTime* fetch[2] = {&dense_layer_, &layer_};
    const double kind_s[2] = {kind_run[0].s + layer_peer_s, kind_run[1].s + layer_peer_s};
    const double count[2] = {dense_layers_, expert_layers_};
    if (s_.policy.prefetch_layers > 0) {
      c.time_s = embedding_.time_s + std::max(emb_s, fetch[first_layer_dense_ ? 0 : 1]->time_s);
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b)
          c.time_s += pairs_[a][b] * std::max(kind_s[a], fetch[b]->time_s);
      c.time_s += std::max(kind_s[last_layer_dense_ ? 0 : 1], head_.time_s) + head_s;
    } else {
      c.time_s = embedding_.time_s + emb_s + head_.time_s + head_s;
      for (int k = 0; k < 2; ++k) c.time_s += count[k] * (fetch[k]->time_s + kind_s[k]);
    }
  } else if (s_.policy.prefetch_layers > 0) {
    c.time_s = embedding_.time_s + std::max(emb_s, layer_.time_s) +
               (L - 1) * std::max(layer_s, layer_.time_s) + std::max(layer_s, head_.time_s) +
               head_s;
  } else {
    c.time_s = embedding_.time_s + emb_s + L * (layer_.time_s + layer_s) + head_.time_s + head_s;
  }
  // Swap preemption: vLLM's worker copies the scheduled blocks (swap in, then swap out, each a
  // copy per layer into pinned host buffers) before it runs the model, on the same stream, so
  // the copies add to the iteration (vllm/worker/worker.py Worker.execute_worker, cache_engine
  // swap_in / swap_out; V0 engine). Each GPU copies its tensor-parallel share over its own link.
  const double swap_in_s = w.swap_in_tokens * kv_token_layer_bytes_ * L / h2d_bps_;
  const double swap_out_s = w.swap_out_tokens * kv_token_layer_bytes_ * L / d2h_bps_;
  c.time_s += logits_peer_s;
  c.time_s += swap_in_s + swap_out_s;
  c.d2h_s = swap_out_s;
  // Cached prefixes from the lower tiers are loaded whole before the forward pass that prefills
  // the rest of the prompt (vLLM's KV connectors, LMCache's retrieve: start_load_kv before the
  // model runs; layer-wise overlap is not modelled). Host DRAM: pinned copies over each GPU's
  // link, one per KV block of the tiers (workload.prefix_block_tokens, all layers of the block
  // together: vLLM's offloading connector issues one cudaMemcpyAsync per block of its contiguous
  // cross-layer layout), each with the GPU's fixed cost per copy (kv_copies_s). NVMe: the array
  // reads the replica's blocks while the bounce buffers' copies to the GPUs overlap the next
  // reads (the weights' AIO path), or one flow at the slower rate with GDS.
  // Copies down to the tiers run on their own stream and threads after the blocks are computed
  // (SGLang HiCache's write_through, LMCache's store): they load the link and the drives but do
  // not hold up the iteration, except that the prefix loads' reads share the drives with the
  // stores' writes issued at the same time (NvmeArrayTiming::mixed_s, model/ssd_model.hpp
  // mixed_seconds_per_byte): a load finishes later by the writes it shared the drives with.
  const double kv_nvme_read_bytes =
      w.kv_load_nvme_tokens * kv_token_layer_bytes_ * kv_entry_split_ * L;
  const double kv_nvme_write_bytes =
      w.kv_store_nvme_tokens * kv_token_layer_bytes_ * kv_entry_split_ * L;
  const NvmeArrayTiming::Mixed kv_nvme = kv_nvme_.mixed_s(kv_nvme_read_bytes, kv_nvme_write_bytes);
  const double kv_nvme_read_s = kv_nvme.read_busy_s, kv_nvme_write_s = kv_nvme.write_busy_s;
  double kv_copy_s = 0;
  if (w.kv_load_host_tokens > 0 || w.kv_load_nvme_tokens > 0) {
    const double host_s = kv_copies_s(w.kv_load_host_tokens, h2d_bps_);
    const double nvme_copy_s = kv_copies_s(w.kv_load_nvme_tokens, h2d_bps_);
    kv_copy_s = host_s + nvme_copy_s;
    c.kv_host_load_s = host_s;
    c.kv_nvme_copy_s = nvme_copy_s;
    c.kv_nvme_read_s = kv_nvme_read_s;
    c.kv_load_s = host_s + std::max(kv_nvme.read_done_s, nvme_copy_s);
    c.time_s += c.kv_load_s;
  }
  if (w.kv_store_host_tokens > 0) {
    c.kv_host_store_s = kv_copies_s(w.kv_store_host_tokens, d2h_bps_);
    c.d2h_s += c.kv_host_store_s;
  }
  c.kv_nvme_write_s = kv_nvme_write_s;
  // The iteration's load: its modules' loads weighted by their time.
  if (dense_layers_ > 0) {
    const double layers_s = dense_layers_ * kind_run[0].s + expert_layers_ * kind_run[1].s;
    c.gpu_s = emb_s + layers_s + head_s;
    c.gpu_load =
        c.gpu_s > 0 ? (emb_s * emb_run.load + dense_layers_ * kind_run[0].s * kind_run[0].load +
                       expert_layers_ * kind_run[1].s * kind_run[1].load + head_s * head_run.load) /
                          c.gpu_s
                    : 0.0;
  } else {
    c.gpu_s = emb_s + L * layer_gpu_s + head_s;
    c.gpu_load =
        c.gpu_s > 0
            ? (emb_s * emb_run.load + L * layer_gpu_s * layer_run.load + head_s * head_run.load) /
                  c.gpu_s
            : 0.0;
  }
  c.peer_s = L * layer_peer_s + logits_peer_s;
  c.weights_h2d_s =
      embedding_.h2d_s + layers_sum(&ModuleStreamTime::h2d_s) + head_.h2d_s + swap_in_s;
  c.h2d_s = c.weights_h2d_s + kv_copy_s;
  c.swap_out_d2h_s = swap_out_s;
  const double weights_nvme_s =
      embedding_.nvme_s + layers_sum(&ModuleStreamTime::nvme_s) + head_.nvme_s;
  c.weights_nvme_s = weights_nvme_s;
  c.nvme_s = weights_nvme_s + kv_nvme_read_s + kv_nvme_write_s;
  // The drives' load: each transfer's (model/power.hpp nvme_load, its rate over the rated rate
  // in its direction) weighted by its time.
  if (c.nvme_s > 0) {
    const NvmeArray& a = s_.hardware.nvme;
    const double weights_bytes = embedding_nvme_bytes_ +
                                 layers_sum(layer_nvme_bytes_, dense_layer_nvme_bytes_) +
                                 head_nvme_bytes_;
    c.weights_nvme_load = nvme_load(a, IoDirection::kRead, weights_bytes, weights_nvme_s);
    c.kv_nvme_read_load = nvme_load(a, IoDirection::kRead, kv_nvme_read_bytes, kv_nvme_read_s);
    c.kv_nvme_write_load =
        nvme_load(a, IoDirection::kWrite, kv_nvme_write_bytes, kv_nvme_write_s);
    c.nvme_load = (weights_nvme_s * c.weights_nvme_load + kv_nvme_read_s * c.kv_nvme_read_load +
                   kv_nvme_write_s * c.kv_nvme_write_load) /
                  c.nvme_s;
  }
  c.cpu_s = embedding_.cpu_s + layers_sum(&ModuleStreamTime::cpu_s) + head_.cpu_s;
  c.cpu_load = cpu_core_load(s_.hardware.host, 1.0);
  return c;
}

}  // namespace tiersim::sim
