#pragma once
// Transformer architectures: bytes and FLOPs per layer, KV-cache size. Pure functions.
#include <algorithm>
#include <cstdint>
#include <string>

#include "model/hardware.hpp"

namespace tiersim {

enum class FfnKind { kMlp, kGated };  // kMlp: up+down (OPT, BLOOM); kGated: gate+up+down (Llama)

struct LlmSpec {
  std::string name;
  // The Hugging Face config.json the architecture was read from (config/hf_config.hpp); "" when
  // the catalog's or the scenario's fields give it.
  std::string hf_config;
  std::string family;            // opt, llama, bloom, mixtral, phi3, ...: HF model_type
  int layers = 0;
  int hidden = 0;
  int ffn = 0;                   // FFN inner size (per expert for MoE)
  int heads = 0;
  int kv_heads = 0;              // == heads without grouped-query attention
  int vocab = 0;
  int experts = 1;               // 1 = dense
  int experts_per_token = 1;     // top-k routing for MoE
  // Inner width of the shared experts every token runs beside its routed ones, taken together
  // (Qwen2-MoE's shared_expert_intermediate_size; DeepSeek's n_shared_experts x
  // moe_intermediate_size); 0 = none.
  int shared_ffn = 0;
  // Which layers of an MoE have the experts; the others run one dense MLP of dense_ffn. Layer l
  // (from 0) has them when l >= dense_first_layers and (l + 1) % moe_layer_step == 0: DeepSeek's
  // and GLM-4.5's first_k_dense_replace dense layers (DeepseekV3DecoderLayer,
  // Glm4MoeDecoderLayer), Qwen2-MoE's decoder_sparse_step (Qwen2MoeDecoderLayer).
  int dense_first_layers = 0;
  int moe_layer_step = 1;
  // Inner width of the dense MLP of an MoE's layers without experts (HF intermediate_size beside
  // moe_intermediate_size); 0 = ffn.
  int dense_ffn = 0;
  FfnKind ffn_kind = FfnKind::kMlp;
  bool tied_embeddings = false;  // output projection shares the input embedding
  bool learned_positions = false;  // OPT/BLOOM-style position table (max_positions x hidden)
  int max_positions = 2048;
  double published_params_b = 0;   // for the catalog's cross-check only
  // Width of one attention head when the model sets it apart from hidden / heads (HF head_dim:
  // Qwen3-32B has 64 heads of 128 on a hidden size of 5120); 0 = hidden / heads.
  int head_size = 0;
  // Sliding-window attention over this many tokens (HF sliding_window, when in use); 0 = none.
  // A sliding layer attends to the last sliding_window tokens only (Mistral-7B v0.1 on every
  // layer; Gemma-2 and gpt-oss on every other one, Gemma-3 on five of six, Llama 4's chunked
  // attention on three of four). Whether the cache keeps only the window is the stack's
  // (ExecutionStack::window_cache).
  int sliding_window = 0;
  // Of the layers of a model with a window, how many attend over the whole context all the same
  // (HF layer_types "full_attention"); 0 = every layer slides.
  int full_attention_layers = 0;
  // The sliding layers attend within fixed chunks of sliding_window tokens rather than over the
  // last sliding_window tokens (Llama 4's attention_chunk_size, Llama4TextAttention's chunked
  // mask): a query sees the keys of its own chunk up to itself, so ((position - 1) mod the chunk)
  // + 1 of them. A cache that keeps only the window holds at most the chunk as well.
  bool chunked_attention = false;
  // Multi-head latent attention (DeepSeek-V2/V3, Kimi K2; DeepseekV3Attention in transformers):
  // kv_a_proj_with_mqa projects each token to one latent of kv_lora_rank elements and one rotary
  // key of qk_rope_dim elements that every head shares; kv_b_proj widens the latent per head into
  // the key's other head_dim - qk_rope_dim elements and a value of v_head_size. 0 = not MLA.
  int kv_lora_rank = 0;
  int qk_rope_dim = 0;
  // MLA's query down projection (q_a_proj to q_lora_rank, then q_b_proj); 0 = one q_proj.
  int q_lora_rank = 0;
  // Width of one value head where it differs from the key's (MLA's v_head_dim); 0 = head_dim.
  int v_head_size = 0;
  std::string dtype;  // the checkpoint's torch_dtype (bfloat16, float16, float32); "" = unknown
  SourceMap sources;

  int head_dim() const { return head_size > 0 ? head_size : hidden / heads; }
  // Layers that attend over a sliding window (0 for a model without one).
  int sliding_layers() const {
    return sliding_window > 0 ? std::max(0, layers - full_attention_layers) : 0;
  }
  // True when layer `layer` runs the routed experts (always false for a dense model).
  bool layer_has_experts(int layer) const {
    return experts > 1 && layer >= dense_first_layers && (layer + 1) % moe_layer_step == 0;
  }
  // Layers with the experts: the l in [dense_first_layers, layers) with (l + 1) divisible by the
  // step, i.e. floor(layers / step) - floor(dense_first_layers / step); 0 for a dense model.
  int expert_layers() const {
    if (experts <= 1) return 0;
    const int step = moe_layer_step > 0 ? moe_layer_step : 1;
    return std::max(0, layers / step - std::min(dense_first_layers, layers) / step);
  }
  // An MoE some of whose layers run a dense MLP instead of the experts.
  bool mixed_layers() const { return experts > 1 && expert_layers() < layers; }
  int dense_mlp_width() const { return dense_ffn > 0 ? dense_ffn : ffn; }
  // The widest FFN intermediate any layer computes (activation peaks, the largest Linear).
  int widest_ffn() const { return mixed_layers() ? std::max(ffn, dense_mlp_width()) : ffn; }
  int kv_dim() const { return head_dim() * kv_heads; }
  // Width of the query projection: heads x head_dim.
  int q_dim() const { return head_dim() * heads; }
  bool mla() const { return kv_lora_rank > 0; }
  int v_head_dim() const { return v_head_size > 0 ? v_head_size : head_dim(); }
  // Width of the values of one token (kv_heads x v_head_dim) and of the attention output that
  // o_proj reads (heads x v_head_dim): kv_dim() and q_dim() unless the value heads are narrower.
  int v_dim() const { return v_head_dim() * kv_heads; }
  int o_dim() const { return v_head_dim() * heads; }
  // Elements of MLA's compressed cache entry of one token in one layer: the latent and the
  // shared rotary key.
  int latent_kv_dim() const { return kv_lora_rank + qk_rope_dim; }
};

// One weight matrix of a layer's attention.
struct AttentionMatrix {
  const char* name = "";  // static: "q_proj", "kv_b_proj", ...
  double elements = 0;
};
// A layer's attention matrices in the order the layer runs them: q, k, v and o projections, or
// MLA's q_a (when the query is compressed), q_b or q, kv_a, kv_b and o projections
// (DeepseekV3Attention). The one place their shapes are written.
struct AttentionMatrices {
  AttentionMatrix items[5];
  int count = 0;
  double elements() const {
    double sum = 0;
    for (int i = 0; i < count; ++i) sum += items[i].elements;
    return sum;
  }
};
AttentionMatrices attention_matrices(const LlmSpec& m);

// The model one kind of its layers computes as: for an MoE with dense layers, a model of only
// layers with the experts (with_experts) or only dense ones (one MLP of dense_ffn); any other
// model is returned as it is. Its per-layer functions (layer_active_params, layer_gemm_flops)
// then give that layer's own figures where the model's give the mean over its layers. Sources
// and names are left out.
LlmSpec layer_model(const LlmSpec& m, bool with_experts);

// Parameter counts (elements, not bytes).
struct ParamCounts {
  double attention = 0;          // q, k, v, o projections incl. biases
  double ffn_per_expert = 0;     // one expert's FFN
  double ffn_total = 0;          // all routed experts
  double ffn_shared = 0;         // the shared experts (LlmSpec::shared_ffn)
  double router = 0;             // MoE gate
  double ffn_dense = 0;          // the dense MLP of an MoE's layer without experts
  double norms = 0;              // layer norms of one layer
  // The largest of one layer's parameters that are not its weight matrices (a norm's weight or
  // bias, a projection's bias, the router): what ZeRO-3's persistence threshold compares
  double largest_small_param = 0;
  // Everything in one transformer layer: one with the experts (or any layer of a dense model),
  // one with the dense MLP instead (an MoE with dense layers), and the mean over the model's
  // layers, so that per_layer x layers is every layer's parameters.
  double expert_layer = 0;
  double dense_layer = 0;
  double per_layer = 0;
  double embedding = 0;          // token (+ position) embedding
  double lm_head = 0;            // 0 when tied
  double total = 0;
};
ParamCounts count_params(const LlmSpec& m);

// Bytes of one weight element stored at `bits` precision, including group-wise quantisation
// metadata (an fp16 scale and an fp16 minimum per group of `group_size` elements).
double bytes_per_weight(int bits, int group_size = 64);

// KV cache bytes for one token in one layer (K and V, every KV head), at `bytes_per_elem` (2 for
// fp16). For an MLA model, the keys and values kv_b_proj widens the latent into, as transformers'
// DeepseekV3Attention caches them.
double kv_bytes_per_token_layer(const LlmSpec& m, double bytes_per_elem = 2.0);

// How a stack keeps the KV cache, and what one GPU of a tensor-parallel group holds of it.
enum class KvCacheForm {
  kPerHead,  // keys and values per KV head, split over the tensor-parallel ranks by head
  // MLA's compressed entry (LlmSpec::latent_kv_dim elements a token and layer), which every
  // tensor-parallel rank keeps whole: the latent is shared by all heads, so it cannot be split by
  // head (vLLM's MLA backends, SGLang, TensorRT-LLM's DeepSeek support).
  kLatent,
};
struct KvCacheShape {
  double bytes_per_token_layer = 0;  // [bytes] one token, one layer, the whole cache entry
  // The ranks the entry is split over: the tensor-parallel degree, or 1 where every rank keeps
  // it whole. bytes_per_token_layer / split is one GPU's share.
  double split = 1;
  bool latent = false;  // MLA's compressed entry: decode attends in the absorbed form
};
KvCacheShape kv_cache_shape(const LlmSpec& m, KvCacheForm form, double bytes_per_elem, double tp);

// ZeRO-Inference's KV-cache offload as the transformers fork pinned by DeepSpeedExamples'
// zero_inference/requirements.txt (tjruwase/transformers@kvcache-offload-cpu) implements it:
// LlamaModel.forward / OPTDecoder.forward allocate the host buffer with torch.empty(shape) and no
// dtype, so it is PyTorch's default float32; BloomModel.forward passes hidden_states.dtype
// (fp16). Neither pins it by default (run_model.py --pin_kv_cache is off). OPT and BLOOM delete
// and re-allocate the buffer at every prefill; Llama keeps it while the shape is unchanged, so
// the timed second generate() of run_model.py reuses already-touched pages. The fork implements
// only OPT, BLOOM and Llama; other families are taken to follow the Llama code (same HF attention
// with repeat_kv).
struct HostKvCache {
  double bytes_per_elem = 4;        // element size of the host K/V buffer
  double query_bytes_per_elem = 4;  // q is sent as query.float().to('cpu')
  double output_bytes_per_elem =
      4;  // attention output returned to the GPU (OPT casts to fp16 first)
  bool fresh_each_generate = false;  // buffer re-allocated, so first touched, at every prefill
  // Element size of the CPU staging tensor of the prefill copy: the buffer slice is not contiguous,
  // so copy_ goes through a fresh contiguous CPU temporary, converted on the GPU (buffer dtype)
  // when the copy is non_blocking, on the CPU (source dtype, fp16) when it blocks.
  double prefill_staging_bytes_per_elem = 2;
};
HostKvCache zero_inference_host_kv(const LlmSpec& m);
// Whether transformers' generate keeps only the window on `m`'s sliding layers whatever cache it
// keeps for other models: Gemma-2's and Gemma-3's generation_config.json name
// cache_implementation "hybrid", and generate builds that HybridCache (a static cache of
// sliding_window slots on the sliding layers, of the whole length on the others) for them.
bool generation_config_hybrid_cache(const LlmSpec& m);
// Whether ZeRO-Inference can keep `m`'s KV cache in host memory at all: the transformers fork
// that gives it (tjruwase/transformers@kvcache-offload-cpu) changes only modeling_opt.py,
// modeling_bloom.py and modeling_llama.py, and DeepSpeedExamples' run_model.py loads only
// OPTForCausalLM, BloomForCausalLM and LlamaForCausalLM ("Unexpected model type" otherwise).
bool zero_inference_host_kv_supported(const LlmSpec& m);

// One decode step of CPU attention for one layer, `seqs` sequences over `context` cached tokens.
struct CpuAttentionWork {
  double flops = 0;        // Q K^T and P V
  bool fp32 = true;        // the matmuls run in fp32 (else fp16)
  double dram_bytes = 0;   // bytes read and written in host DRAM
  double fresh_bytes = 0;  // of those, bytes written to freshly allocated (never touched) pages
};
// As the fork computes it: both matmuls on the CPU in fp32 over the buffer prefix. With grouped-
// query attention, repeat_kv() (expand + reshape of the CPU tensors) materialises K and V for
// every query head, every layer and step: the compact prefix is read, the expanded copy written
// into a new allocation and read again by the matmuls. BLOOM's fp16 buffer is likewise copied to
// a fresh fp32 tensor (key_layer.float(), value_layer.float()). The score, mask and softmax
// tensors (4 B per head per cached token, < 3% of the K/V bytes at head_dim 128) are left out.
CpuAttentionWork zero_inference_decode_attention(const LlmSpec& m, double seqs, double context);

// Expected number of distinct experts one MoE layer routes `tokens` tokens to, under uniform
// top-k routing of independent tokens: a token misses a given expert with probability 1 - k/E,
// so E * (1 - (1 - k/E)^tokens). Real routing is more concentrated (llama.cpp PR #15346: 72-95 of
// 128 experts used by a 512-token batch where uniform gives 128), so this is an upper bound on the
// experts, and bytes, a pass needs. 1 for dense models.
double expected_distinct_experts(const LlmSpec& m, double tokens);

// FLOPs of one layer's matrix multiplies for `tokens` tokens (2 * params touched per token).
// For MoE only the routed experts count.
double layer_gemm_flops(const LlmSpec& m, double tokens);
// Weight elements a token touches in one layer (active parameters); for an MoE with dense
// layers, the mean over the layers (layers x this is what a token touches in all of them).
double layer_active_params(const LlmSpec& m);
// Weight elements one layer's GEMMs read for a pass of `tokens` tokens: the active parameters,
// except that an MoE layer reads every expert some token was routed to
// (expected_distinct_experts, the same upper bound the routed fetch takes), not one token's
// top-k; for an MoE with dense layers, the mean over the layers. layer_active_params at 1 token.
double layer_read_params(const LlmSpec& m, double tokens);
// FLOPs of attention scores and weighted sum for `queries` query tokens, each attending to
// `context` keys on average, summed over the batch (keys of head_dim, values of v_head_dim).
double attention_flops(const LlmSpec& m, double queries, double context);
// The keys one query attends to at `context` tokens of its sequence, averaged over the layers: the
// whole context on a full-attention layer, the last sliding_window tokens on a sliding one
// (LlmSpec::sliding_layers). `context` itself for a model without a window or a context within
// it. Exact for what is linear in it (attention FLOPs, K/V bytes): `layers` x this is what the
// layers together attend to, and, where the cache keeps only the window, hold.
double mean_window_context(const LlmSpec& m, double context);
// The keys a decode query at position `context` (from 1) attends to, averaged over the layers:
// mean_window_context, except that a chunked layer (LlmSpec::chunked_attention) sees only its own
// chunk's keys up to itself, ((context - 1) mod sliding_window) + 1. mean_window_context stays
// what such a cache holds at most (the whole chunk).
double mean_attended_context(const LlmSpec& m, double context);
// Query-key pairs of one sequence's causal pass of `queries` new tokens after `offset` cached
// ones, on a layer whose queries attend to at most `window` keys (themselves included; 0 = no
// window): query i (from 1) attends to min(offset + i, window) keys. `diagonal` counts the pairs
// among the new tokens (queries x (queries + 1) / 2 without a window), `cached` those with the
// offset (queries x offset).
struct CausalPairs {
  double diagonal = 0;
  double cached = 0;
};
CausalPairs causal_pairs(double queries, double offset, double window);
// The same on a chunked layer (LlmSpec::chunked_attention): query p (its position, from 1)
// attends to the keys of its own chunk of `chunk` tokens up to itself, those among the new
// tokens in `diagonal`, the cached ones in `cached`.
CausalPairs chunked_causal_pairs(double queries, double offset, double chunk);
// The same over MLA's compressed cache, as the latent-cache stacks decode (the "absorbed" form
// of DeepSeek-V2, arXiv 2405.04434 section 2.1.3: kv_b_proj's key half folded into the query,
// its value half applied to the output): every head scores against the latent and the rotary
// key (latent_kv_dim) and sums latents (kv_lora_rank). attention_flops for any other model.
double latent_attention_flops(const LlmSpec& m, double queries, double context);
// FLOPs of widening `tokens` cached latents into every head's keys and values (kv_b_proj), as the
// latent stacks do for the context a prefill chunk attends to (vLLM's MLA chunked prefill,
// vllm/v1/attention/backends/mla/common.py: cache_kv_c_chunk @ W_UK and @ W_UV before the
// attention); 0 for a model without MLA.
double latent_expansion_flops(const LlmSpec& m, double tokens);

}  // namespace tiersim
