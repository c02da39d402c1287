#pragma once
// Transformer architectures: bytes and FLOPs per layer, KV-cache size. Pure functions.
#include <cstdint>
#include <string>

#include "model/hardware.hpp"

namespace tiersim {

enum class FfnKind { kMlp, kGated };  // kMlp: up+down (OPT, BLOOM); kGated: gate+up+down (Llama)

struct LlmSpec {
  std::string name;
  std::string family;            // opt, llama, bloom, mixtral, phi
  int layers = 0;
  int hidden = 0;
  int ffn = 0;                   // FFN inner size (per expert for MoE)
  int heads = 0;
  int kv_heads = 0;              // == heads without grouped-query attention
  int vocab = 0;
  int experts = 1;               // 1 = dense
  int experts_per_token = 1;     // top-k routing for MoE
  FfnKind ffn_kind = FfnKind::kMlp;
  bool tied_embeddings = false;  // output projection shares the input embedding
  bool learned_positions = false;  // OPT/BLOOM-style position table (max_positions x hidden)
  int max_positions = 2048;
  double published_params_b = 0;   // for the catalog's cross-check only
  SourceMap sources;

  int head_dim() const { return hidden / heads; }
  int kv_dim() const { return head_dim() * kv_heads; }
};

// Parameter counts (elements, not bytes).
struct ParamCounts {
  double attention = 0;          // q, k, v, o projections incl. biases
  double ffn_per_expert = 0;     // one expert's FFN
  double ffn_total = 0;          // all experts
  double router = 0;             // MoE gate
  double norms = 0;              // layer norms of one layer
  double per_layer = 0;          // everything in one transformer layer
  double embedding = 0;          // token (+ position) embedding
  double lm_head = 0;            // 0 when tied
  double total = 0;
};
ParamCounts count_params(const LlmSpec& m);

// Bytes of one weight element stored at `bits` precision, including group-wise quantisation
// metadata (an fp16 scale and an fp16 minimum per group of `group_size` elements).
double bytes_per_weight(int bits, int group_size = 64);

// KV cache bytes for one token in one layer (K and V), at `bytes_per_elem` (2 for fp16).
double kv_bytes_per_token_layer(const LlmSpec& m, double bytes_per_elem = 2.0);

// FLOPs of one layer's matrix multiplies for `tokens` tokens (2 * params touched per token).
// For MoE only the routed experts count.
double layer_gemm_flops(const LlmSpec& m, double tokens);
// Weight elements a token touches in one layer (active parameters).
double layer_active_params(const LlmSpec& m);
// FLOPs of attention scores and weighted sum for `queries` query tokens, each attending to
// `context` keys on average, summed over the batch.
double attention_flops(const LlmSpec& m, double queries, double context);

}  // namespace tiersim
