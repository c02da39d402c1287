#include "config/hf_config.hpp"

#include <initializer_list>
#include <nlohmann/json.hpp>

#include "config/yaml_reader.hpp"
#include "model/errors.hpp"

namespace tiersim::config {

namespace {

using nlohmann::json;

// The largest count or width a config.json field may give, and any width derived from one
// (4 x hidden_size, n_shared_experts x moe_intermediate_size): far past any model's, and inside
// the int the model's fields are.
constexpr long long kMaxCount = 1000000000LL;

// How transformers builds each model_type's decoder layer, as far as bytes and FLOPs go.
struct ModelType {
  const char* name;
  FfnKind ffn_kind;
  bool learned_positions;  // a learned position table (OPT)
  // tie_word_embeddings when config.json leaves it out: the config class's own default
  // (PretrainedConfig's is true, and GemmaConfig, Gemma2Config and CohereConfig pass true;
  // LlamaConfig, GraniteConfig,
  // MistralConfig, MixtralConfig, Qwen2/3Config, Qwen2/3MoeConfig, Phi3Config, PhiConfig,
  // Olmo2Config, GPTNeoXConfig and GPTJConfig pass false).
  bool tied_by_default;
};

const std::vector<ModelType>& model_types() {
  static const std::vector<ModelType> kTypes = {
      // OPTDecoderLayer: fc1 -> ReLU -> fc2; OPTLearnedPositionalEmbedding.
      {"opt", FfnKind::kMlp, true, true},
      // BloomMLP dense_h_to_4h -> GELU -> dense_4h_to_h; ALiBi, no position table.
      {"bloom", FfnKind::kMlp, false, true},
      // GPTJMLP fc_in -> GELU -> fc_out; rotary.
      {"gptj", FfnKind::kMlp, false, false},
      // GPT2MLP c_fc -> GELU -> c_proj (n_inner, null by default: 4 x n_embd); a learned position
      // table of n_positions rows (wpe); GPT2Config keeps PretrainedConfig's tied head. Its
      // biases and layer norms (under 0.1% of GPT-2 XL) are not counted, as GPT-J's are not.
      {"gpt2", FfnKind::kMlp, true, true},
      // GPTBigCode (StarCoder, SantaCoder): GPT-2's layer with multi-query attention
      // (GPTBigCodeConfig multi_query, default true: one key/value head).
      {"gpt_bigcode", FfnKind::kMlp, true, true},
      // FalconMLP dense_h_to_4h -> GELU -> dense_4h_to_h; rotary.
      {"falcon", FfnKind::kMlp, false, true},
      // SwiGLU MLPs (gate_proj, up_proj, down_proj; Phi-3 fuses gate and up): rotary.
      {"llama", FfnKind::kGated, false, false},
      {"mistral", FfnKind::kGated, false, false},
      {"mixtral", FfnKind::kGated, false, false},
      {"qwen2", FfnKind::kGated, false, false},
      {"qwen3", FfnKind::kGated, false, false},
      {"qwen2_moe", FfnKind::kGated, false, false},
      {"qwen3_moe", FfnKind::kGated, false, false},
      // Mixtral's layer under other names, every layer sparse, no shared expert: PhimoeModel
      // (Phi-3.5-MoE: num_local_experts SwiGLU experts, top num_experts_per_tok), OlmoeModel
      // (OLMoE: num_experts of intermediate_size; its per-head q/k norms are not counted, as norms
      // are not) and GraniteMoeModel (Granite 3.x MoE: num_local_experts, the gate and up
      // projections fused in input_linear; its multipliers scale values). PhimoeConfig,
      // OlmoeConfig and GraniteMoeConfig pass tie_word_embeddings=False.
      {"phimoe", FfnKind::kGated, false, false},
      {"olmoe", FfnKind::kGated, false, false},
      {"granitemoe", FfnKind::kGated, false, false},
      // Glm4MoeMLP and Glm4MoeMoE (GLM-4.5, GLM-4.6): SwiGLU experts with one shared expert of
      // n_shared_experts x moe_intermediate_size, first_k_dense_replace dense layers of
      // intermediate_size; rotary on half the head (partial_rotary_factor, values only).
      // Glm4MoeConfig passes tie_word_embeddings=False. Not counted: the q/k/v biases
      // (attention_bias: q_dim + 2 kv_dim per layer, under 0.001% of GLM-4.5), the optional
      // per-head q/k norms, and the router's e_score_correction_bias (one per expert); nor the
      // num_nextn_predict_layers multi-token-prediction layer, which transformers does not load
      // (Glm4MoeForCausalLM leaves model.layers.<num_hidden_layers> out) and serving stacks run
      // only as a speculative-decoding draft.
      {"glm4_moe", FfnKind::kGated, false, false},
      // Llama4TextModel (Llama 4 Scout, Maverick; the text_config of a llama4 config): layers in
      // moe_layers (every interleave_moe_layer_step-th) run Llama4TextMoe, num_local_experts
      // routed SwiGLU experts of intermediate_size (top num_experts_per_tok) beside one shared
      // expert of the same width, the others Llama4TextMLP of intermediate_size_mlp.
      // Llama4TextConfig passes tie_word_embeddings=False. Three of every four layers attend in
      // chunks of attention_chunk_size (model.chunked_attention).
      {"llama4_text", FfnKind::kGated, false, false},
      // DeepseekV2/V3 (DeepSeek-V2, V2-Lite, V3, R1) and Kimi K2 (model_type kimi_k2, whose
      // config.json names DeepseekV3ForCausalLM): multi-head latent attention (kv_lora_rank,
      // q_lora_rank, qk_nope_head_dim + qk_rope_head_dim keys, v_head_dim values); SwiGLU experts
      // of moe_intermediate_size beside n_shared_experts of the same width; the first
      // first_k_dense_replace layers run a dense MLP of intermediate_size. Their config classes
      // pass tie_word_embeddings=False. Not counted: the router's e_score_correction_bias (one
      // per expert), and the num_nextn_predict_layers multi-token-prediction layer (11.5B of V3's
      // published 685B; its 671B leave it out), which transformers does not load.
      {"deepseek_v2", FfnKind::kGated, false, false},
      {"deepseek_v3", FfnKind::kGated, false, false},
      {"kimi_k2", FfnKind::kGated, false, false},
      {"phi3", FfnKind::kGated, false, false},
      // GraniteMLP (Llama's: gate_proj, up_proj, down_proj with SiLU); rotary; GraniteConfig's
      // tie_word_embeddings default is false (Granite 3.x configs set it true). Its embedding,
      // residual, attention and logit multipliers scale values, not bytes or FLOPs.
      {"granite", FfnKind::kGated, false, false},
      // CohereMLP (gate_proj, up_proj, down_proj with SiLU), the attention and the MLP in
      // parallel off one LayerNorm (Command-R); rotary; CohereConfig ties the head by default.
      // Its optional per-head q/k norms (use_qk_norm) are not counted, as norms are not.
      {"cohere", FfnKind::kGated, false, true},
      // Olmo2MLP: gate_proj, up_proj, down_proj with SiLU; rotary; Olmo2Config passes
      // tie_word_embeddings=False. Its per-head q/k norms are not counted, as norms are not.
      {"olmo2", FfnKind::kGated, false, false},
      // GemmaMLP / Gemma2MLP: gate_proj, up_proj, down_proj with a GELU gate; rotary; GemmaConfig
      // and Gemma2Config tie the head to the embedding by default (head_dim their own, 256 or
      // 128). Gemma-2 slides a 4096-token window on every other layer: the window is recorded
      // and a longer sequence is refused, as for a model that slides it on every layer.
      {"gemma", FfnKind::kGated, false, true},
      {"gemma2", FfnKind::kGated, false, true},
      // Gemma3TextModel (the language model of Gemma 3: the text_config of a gemma3 checkpoint,
      // or gemma-3-1b's own config.json): Gemma-2's layer, a window on five of every six layers
      // (sliding_window_pattern, or layer_types). Its per-head q/k norms are not counted.
      {"gemma3_text", FfnKind::kGated, false, true},
      // GptOssModel (gpt-oss-20b, gpt-oss-120b): every layer runs num_local_experts SwiGLU
      // experts of intermediate_size (top num_experts_per_tok), no shared expert; every other
      // layer attends over a 128-token window (layer_types). GptOssConfig passes
      // tie_word_embeddings=False. Not counted: the q/k/v/o and expert biases, the router's bias
      // and the per-head attention sinks (under 0.1% of gpt-oss-120b). The checkpoints store the
      // experts in MXFP4: that is the policy's weight_bits, not the architecture.
      {"gpt_oss", FfnKind::kGated, false, false},
      // GPTNeoXMLP dense_h_to_4h -> GELU -> dense_4h_to_h; rotary; GPTNeoXConfig passes
      // tie_word_embeddings=False. Its biases (under 0.02% of GPT-NeoX-20B) are not counted, as
      // GPT-J's are not.
      {"gpt_neox", FfnKind::kMlp, false, false},
      // PhiMLP fc1 -> GELU -> fc2 (Phi-1, Phi-1.5, Phi-2); partial rotary; PhiConfig passes
      // tie_word_embeddings=False.
      {"phi", FfnKind::kMlp, false, false},
      // Starcoder2MLP c_fc -> GELU -> c_proj (StarCoder2); grouped-query attention, rotary, a
      // sliding window where the config sets one; Starcoder2Config passes no tie_word_embeddings,
      // so PretrainedConfig's true holds. Its biases (use_bias, under 0.1% of StarCoder2-15B) are
      // not counted, as GPT-J's are not.
      {"starcoder2", FfnKind::kMlp, false, true},
  };
  return kTypes;
}

class Reader {
 public:
  // `prefix`: where the object read sits in the file ("text_config." for the language model of a
  // multimodal config), for the keys errors and sources name.
  Reader(const json& j, std::string path, std::string prefix = "")
      : j_(j), path_(std::move(path)), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw ConfigError(path_, 0, prefix_ + key, message);
  }

  const json* find(std::initializer_list<const char*> keys, std::string* found = nullptr) const {
    for (const char* k : keys) {
      auto it = j_.find(k);
      if (it != j_.end() && !it->is_null()) {
        if (found) *found = k;
        return &*it;
      }
    }
    return nullptr;
  }

  // As find, but a number 0 counts as absent: fields where 0, like null, means "none"
  // (q_lora_rank, shared_expert_intermediate_size, n_shared_experts).
  const json* find_nonzero(std::initializer_list<const char*> keys,
                           std::string* found = nullptr) const {
    const json* v = find(keys, found);
    return v && v->is_number() && v->get<double>() == 0 ? nullptr : v;
  }

  // A positive integer under the first of `keys` present; the spec's source names the key.
  int count(std::initializer_list<const char*> keys, LlmSpec& m, const char* field) const {
    std::string key;
    const json* v = find(keys, &key);
    if (!v) fail(*keys.begin(), std::string("missing (expected a positive integer: ") + field + ")");
    return count_value(*v, key, m, field);
  }

  int count_value(const json& v, const std::string& key, LlmSpec& m, const char* field) const {
    const int n = whole(v, key, 1);
    m.sources[field] = source(key);
    return n;
  }

  // A whole number from `low` up to kMaxCount under `key`.
  int whole(const json& v, const std::string& key, long long low) const {
    if (!v.is_number_integer() || v.get<long long>() < low || v.get<long long>() > kMaxCount)
      fail(key, (low == 1 ? std::string("expected a positive integer")
                          : "expected a whole number from " + std::to_string(low)) +
                    " up to " + std::to_string(kMaxCount) + ", got " + v.dump());
    return static_cast<int>(v.get<long long>());
  }

  bool flag(const char* key, bool otherwise) const {
    const json* v = find({key});
    if (!v) return otherwise;
    if (!v->is_boolean()) fail(key, "expected true or false, got " + v->dump());
    return v->get<bool>();
  }

  std::string text(const char* key) const {
    const json* v = find({key});
    if (!v) return "";
    if (!v->is_string()) fail(key, "expected a string, got " + v->dump());
    return v->get<std::string>();
  }

  std::string source(const std::string& key) const {
    return "hf_config " + path_ + ": " + prefix_ + key;
  }

 private:
  const json& j_;
  std::string path_;
  std::string prefix_;
};

// A JSON value as an error quotes it: whole when short, else its start.
std::string excerpt_json(const json& v) {
  const std::string text = v.dump();
  return text.size() <= 80 ? text : text.substr(0, 77) + "...";
}

// Which layers of an MoE have the experts (LlmSpec::layer_has_experts: l >= dense_first_layers
// and (l + 1) % moe_layer_step == 0), from the fields each family names them by:
// - first_k_dense_replace (DeepSeek-V2/V3, GLM-4.5): the first k layers are dense;
// - moe_layer_freq (DeepSeek): experts where l % freq == 0, which is every layer at 1, the only
//   value released models use; another would place them where the step rule does not;
// - decoder_sparse_step (Qwen2-MoE, Qwen3-MoE): experts where (l + 1) % step == 0;
// - mlp_only_layers (Qwen2-MoE, Qwen3-MoE): dense layers by index; a prefix 0..k-1 is the first
//   k layers, any other list is refused.
void read_expert_layers(const Reader& r, LlmSpec& m) {
  m.sources["dense_first_layers"] = r.source("model_type") + " (no dense layers named)";
  m.sources["moe_layer_step"] = r.source("model_type") + " (experts on every layer)";
  if (const json* k = r.find({"first_k_dense_replace"})) {
    m.dense_first_layers = r.whole(*k, "first_k_dense_replace", 0);
    m.sources["dense_first_layers"] = r.source("first_k_dense_replace");
  }
  if (const json* k = r.find({"moe_layer_freq"}); k && r.whole(*k, "moe_layer_freq", 1) != 1)
    r.fail("moe_layer_freq", "experts on every " + k->dump() +
                                 "th layer counted from layer 0 are not modelled (only 1: every "
                                 "layer past first_k_dense_replace)");
  std::string step_key;
  if (const json* k = r.find({"decoder_sparse_step", "interleave_moe_layer_step"}, &step_key)) {
    m.moe_layer_step = r.whole(*k, step_key, 1);
    m.sources["moe_layer_step"] = r.source(step_key);
  }
  // Llama 4 may list its MoE layers (Llama4TextConfig moe_layers, which overrides the step): read
  // when it is the step's own list, l = step - 1, 2 step - 1, ...
  if (const json* k = r.find({"moe_layers"})) {
    bool as_step = k->is_array();
    long long expected = m.moe_layer_step - 1;  // a step up to 1e9: no int overflow
    for (std::size_t i = 0; as_step && i < k->size(); ++i, expected += m.moe_layer_step)
      as_step = (*k)[i].is_number_integer() && (*k)[i].get<long long>() == expected;
    if (!as_step || expected < m.layers)
      r.fail("moe_layers", "MoE layers other than every " + std::to_string(m.moe_layer_step) +
                               "th (interleave_moe_layer_step) are not modelled, got " +
                               excerpt_json(*k));
  }
  if (const json* k = r.find({"mlp_only_layers"}); k && !(k->is_array() && k->empty())) {
    if (!k->is_array())
      r.fail("mlp_only_layers", "expected a list of layer indices, got " + k->dump());
    for (std::size_t i = 0; i < k->size(); ++i)
      if (!(*k)[i].is_number_integer() || (*k)[i].get<long long>() != static_cast<long long>(i))
        r.fail("mlp_only_layers",
               "dense layers other than the first ones (0, 1, ...) are not "
               "modelled, got " +
                   k->dump());
    if (r.find({"first_k_dense_replace"}))
      r.fail("mlp_only_layers",
             "names the first dense layers as first_k_dense_replace does; give "
             "one of the two");
    m.dense_first_layers = static_cast<int>(k->size());
    m.sources["dense_first_layers"] = r.source("mlp_only_layers");
  }
  if (m.dense_first_layers >= m.layers || m.expert_layers() == 0)
    r.fail(m.dense_first_layers >= m.layers ? "first_k_dense_replace"
           : step_key.empty()               ? "decoder_sparse_step"
                                            : step_key,
           "leaves no layer of the " + std::to_string(m.layers) + " with the experts");
}

// Multi-head latent attention (model/llm.hpp LlmSpec::kv_lora_rank), where the config gives
// kv_lora_rank: the key head is qk_nope_head_dim + qk_rope_head_dim wide (a head_dim key, which
// newer transformers write as the rotary part, is not the head's width here), the value head
// v_head_dim. DeepSeek's and Kimi K2's configs must give it.
void read_latent_attention(const Reader& r, LlmSpec& m) {
  const bool mla_type =
      m.family == "deepseek_v2" || m.family == "deepseek_v3" || m.family == "kimi_k2";
  if (!r.find({"kv_lora_rank"})) {
    if (mla_type)
      r.fail("kv_lora_rank", "missing: " + m.family +
                                 " attends through a compressed key/value latent of this width");
    return;
  }
  m.kv_lora_rank = r.count({"kv_lora_rank"}, m, "kv_lora_rank");
  m.qk_rope_dim = r.count({"qk_rope_head_dim"}, m, "qk_rope_dim");
  const int nope = r.count({"qk_nope_head_dim"}, m, "head_dim");
  if (1LL * nope + m.qk_rope_dim > kMaxCount)
    r.fail("qk_nope_head_dim", "plus qk_rope_head_dim is beyond any model's head width");
  m.head_size = nope + m.qk_rope_dim;
  m.sources["head_dim"] = r.source("qk_nope_head_dim") + " + " + r.source("qk_rope_head_dim");
  m.v_head_size = r.count({"v_head_dim"}, m, "v_head_dim");
  // V2-Lite projects the query directly (q_lora_rank null; 0 reads the same).
  if (const json* q = r.find_nonzero({"q_lora_rank"})) {
    m.q_lora_rank = r.count_value(*q, "q_lora_rank", m, "q_lora_rank");
  } else {
    m.sources["q_lora_rank"] = r.source("q_lora_rank") + " (null or absent: one q_proj)";
  }
  if (1LL * m.heads * std::max(m.head_size, m.v_head_size) > kMaxCount)
    r.fail("num_attention_heads", "times the head width is beyond any model's attention width");
}

}  // namespace

const std::vector<std::string>& hf_model_types() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> n;
    for (const auto& t : model_types()) n.push_back(t.name);
    return n;
  }();
  return kNames;
}

LlmSpec read_hf_config(const std::string& path) {
  return parse_hf_config(read_input_file(path, "Hugging Face config.json"), path);
}

// The layers of a model with a sliding window that attend over the whole context all the same
// (LlmSpec::full_attention_layers). Newer configs list every layer's kind (layer_types:
// "full_attention", "sliding_attention", Llama 4's "chunked_attention"); older ones leave it to
// the model class: Gemma-2 slides on even layers (Gemma2DecoderLayer: is_sliding = not
// bool(layer_idx % 2)), Gemma-3 on all but every sliding_window_pattern-th (default 6), Llama 4
// chunks all but every fourth (Llama4TextConfig no_rope_layers: NoPE layers attend fully), and
// Qwen2 with use_sliding_window keeps its first max_window_layers layers on full attention. Other
// models slide on every layer (Mistral, Phi-3).
void read_full_attention_layers(const Reader& r, LlmSpec& m, const std::string& type) {
  if (const json* t = r.find({"layer_types"})) {
    if (!t->is_array() || t->size() != static_cast<std::size_t>(m.layers))
      r.fail("layer_types", "expected a list of " + std::to_string(m.layers) +
                                " layer kinds (num_hidden_layers), got " + t->dump().substr(0, 80));
    int full = 0;
    for (const json& kind : *t) {
      if (!kind.is_string())
        r.fail("layer_types", "expected strings such as \"full_attention\", got " + kind.dump());
      const std::string k = kind.get<std::string>();
      if (k == "full_attention") {
        ++full;
      } else if (k != "sliding_attention" && k != "chunked_attention") {
        r.fail("layer_types", "unsupported layer kind '" + k +
                                  "' (supported: full_attention, sliding_attention, "
                                  "chunked_attention)");
      }
    }
    m.full_attention_layers = full;
    m.sources["full_attention_layers"] = r.source("layer_types") + " (full_attention entries)";
    return;
  }
  std::string why;
  if (type == "gemma2") {
    m.full_attention_layers = m.layers / 2;
    why = " (gemma2: the odd layers attend fully)";
  } else if (type == "gemma3_text") {
    int pattern = 6;
    if (const json* p = r.find({"sliding_window_pattern"}))
      pattern = r.count_value(*p, "sliding_window_pattern", m, "full_attention_layers");
    m.full_attention_layers = m.layers / pattern;
    why = " (gemma3_text: every sliding_window_pattern-th layer attends fully)";
  } else if (type == "llama4_text") {
    m.full_attention_layers = m.layers / 4;
    why = " (llama4_text: every fourth layer attends fully)";
  } else if (const json* w = r.find({"max_window_layers"}); w && type.rfind("qwen", 0) == 0) {
    m.full_attention_layers =
        std::min(m.layers, r.count_value(*w, "max_window_layers", m, "full_attention_layers"));
    m.sources["full_attention_layers"] = r.source("max_window_layers") + " (the first layers)";
    return;
  } else {
    why = " (" + type + ": every layer slides)";
  }
  m.sources["full_attention_layers"] = r.source("model_type") + why;
}

LlmSpec parse_hf_config(const std::string& text, const std::string& path) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error for bad syntax; out_of_range (406) for a number too large for a double, as 1e400.
    throw ConfigError(path, 0, "", std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw ConfigError(path, 0, "", "expected a JSON object (a config.json)");
  // Multimodal checkpoints whose language model is the config's text_config, read here; the
  // vision tower, which runs only on image inputs, is not counted: Llama 4
  // (Llama4ForConditionalGeneration: about 0.8B parameters beside Scout's 107.8B), Gemma 3
  // (Gemma3ForConditionalGeneration: a 0.4B SigLIP encoder beside the 27B's language model),
  // Mistral Small 3.1 (Mistral3ForConditionalGeneration: a Pixtral encoder beside a Mistral) and
  // Kimi K2.5 (KimiK25ForConditionalGeneration: Kimi K2's language model, a kimi_k2 or
  // deepseek_v3 text_config).
  const json* body = &j;
  std::string prefix;
  if (const auto t = j.find("model_type"); t != j.end() && t->is_string()) {
    const std::string wrapper = t->get<std::string>();
    if (wrapper == "llama4" || wrapper == "gemma3" || wrapper == "mistral3" ||
        wrapper == "kimi_k25") {
      const auto text = j.find("text_config");
      if (text == j.end() || !text->is_object())
        throw ConfigError(
            path, 0, "text_config",
            "missing: a " + wrapper + " config gives its language model in text_config");
      body = &*text;
      prefix = "text_config.";
    }
  }
  const Reader r(*body, path, prefix);
  LlmSpec m;
  m.hf_config = path;

  // Other multimodal checkpoints nest the language model too; which of their fields it keeps
  // elsewhere is not known here, so its text_config is read only when given as a file.
  if (r.find({"text_config"}))
    r.fail("text_config",
           "a multimodal config whose language model is read only from text_config of llama4, "
           "gemma3, mistral3 and kimi_k25 configs; save this one's text_config as a config.json "
           "of its own and give that");
  const std::string type = r.text("model_type");
  if (type.empty()) r.fail("model_type", "missing (expected one of: " + join(hf_model_types()) + ")");
  const ModelType* mt = nullptr;
  for (const auto& t : model_types())
    if (type == t.name) mt = &t;
  if (!mt)
    r.fail("model_type", "unsupported model_type '" + type + "'" + did_you_mean(type, hf_model_types()) +
                             "; supported: " + join(hf_model_types()));
  m.family = type;
  m.sources["family"] = r.source("model_type");
  m.ffn_kind = mt->ffn_kind;
  m.sources["ffn_kind"] = r.source("model_type") + " (" + type + "'s MLP)";
  m.learned_positions = mt->learned_positions;
  m.sources["learned_positions"] = r.source("model_type") + " (" + type + "'s position encoding)";

  m.layers = r.count({"num_hidden_layers", "n_layer", "num_layers"}, m, "layers");
  m.hidden = r.count({"hidden_size", "n_embd", "n_embed", "d_model"}, m, "hidden");
  m.heads = r.count({"num_attention_heads", "n_head"}, m, "heads");
  // Gemma 3's checkpoints leave vocab_size out of their text_config: Gemma3TextConfig's default.
  if (type == "gemma3_text" && !r.find({"vocab_size"})) {
    m.vocab = 262208;
    m.sources["vocab"] = r.source("model_type") + " (Gemma3TextConfig's default vocab_size)";
  } else {
    m.vocab = r.count({"vocab_size"}, m, "vocab");
  }

  // Key/value heads: GQA configs name them; Falcon's old decoder is multi-query (one KV head)
  // unless new_decoder_architecture gives num_kv_heads; otherwise multi-head.
  if (r.find({"num_key_value_heads", "num_kv_heads", "n_head_kv"}) &&
      (type != "falcon" || r.flag("new_decoder_architecture", false))) {
    m.kv_heads = r.count({"num_key_value_heads", "num_kv_heads", "n_head_kv"}, m, "kv_heads");
  } else if ((type == "falcon" && r.flag("multi_query", true) &&
              !r.flag("new_decoder_architecture", false)) ||
             (type == "gpt_bigcode" && r.flag("multi_query", true))) {
    m.kv_heads = 1;
    m.sources["kv_heads"] = r.source("multi_query") +
                            " (one key/value head; the config class's "
                            "default is true)";
  } else {
    m.kv_heads = m.heads;
    m.sources["kv_heads"] = r.source("num_attention_heads") + " (multi-head attention)";
  }
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    r.fail("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(m.heads) + ")");

  // head_dim apart from hidden / heads (Qwen3, Gemma); equal to it is the ordinary case. MLA
  // gives its heads' widths in fields of its own.
  read_latent_attention(r, m);
  const json* hd = m.mla() ? nullptr : r.find({"head_dim"});
  if (hd) {
    const int d = r.count_value(*hd, "head_dim", m, "head_dim");
    if (1LL * d * m.heads != m.hidden || m.hidden % m.heads != 0) m.head_size = d;
  } else if (!m.mla() && m.hidden % m.heads != 0) {
    r.fail("head_dim", "missing, and hidden_size (" + std::to_string(m.hidden) +
                           ") is not a multiple of num_attention_heads (" + std::to_string(m.heads) + ")");
  }

  // Mixture of experts: routed experts with their top-k; every layer sparse.
  std::string experts_key;
  if (const json* e = r.find({"num_local_experts", "num_experts", "n_routed_experts"}, &experts_key)) {
    m.experts = r.count_value(*e, experts_key, m, "experts");
    m.experts_per_token = r.count({"num_experts_per_tok"}, m, "experts_per_token");
    if (m.experts_per_token > m.experts)
      r.fail("num_experts_per_tok",
             "exceeds " + experts_key + " (" + std::to_string(m.experts) + ")");
    m.sources["experts_per_token"] = r.source("num_experts_per_tok");
    read_expert_layers(r, m);
  } else {
    m.sources["experts"] = r.source("model_type") + " (dense: no expert count)";
    m.sources["experts_per_token"] = std::string(m.sources["experts"]);
    // Copied first: inserting a key into the source map may move the ones already in it.
    const std::string dense = m.sources["experts"];
    for (const char* field : {"dense_first_layers", "moe_layer_step", "dense_ffn"})
      m.sources[field] = dense;
  }

  // FFN width (per expert for MoE). GPT-J's and GPT-2's n_inner, BLOOM's and Falcon's MLPs
  // default to 4 x hidden (BloomMLP, FalconMLP: ffn_hidden_size if given).
  std::string ffn_key;
  if (const json* f = r.find({"moe_intermediate_size", "intermediate_size", "ffn_dim", "n_inner",
                              "ffn_hidden_size"},
                             &ffn_key);
      f && !(m.experts == 1 && ffn_key == "moe_intermediate_size")) {
    m.ffn = r.count_value(*f, ffn_key, m, "ffn");
  } else if (type == "bloom" || type == "gptj" || type == "falcon" || type == "gpt2" ||
             type == "gpt_bigcode") {
    if (m.hidden > kMaxCount / 4)
      r.fail("hidden_size", "x 4, the MLP's width when not given, is beyond any model's: " +
                                std::to_string(4LL * m.hidden));
    m.ffn = 4 * m.hidden;
    m.sources["ffn"] = r.source("hidden_size") + " x 4 (" + type + "'s MLP width when not given)";
  } else {
    r.fail("intermediate_size", "missing (expected the MLP's inner width)");
  }
  // The dense MLP of an MoE's layers without experts: intermediate_size, where the experts' width
  // is moe_intermediate_size (DeepseekV3MLP, Glm4MoeMLP, Qwen2MoeMLP of config.intermediate_size).
  if (m.mixed_layers() && type == "llama4_text") {
    // Llama4TextMLP of intermediate_size_mlp; the experts' width is intermediate_size.
    m.dense_ffn = r.count({"intermediate_size_mlp"}, m, "dense_ffn");
  } else if (m.mixed_layers()) {
    if (ffn_key != "moe_intermediate_size")
      r.fail("moe_intermediate_size",
             "missing: an MoE with dense layers gives its experts' width here and the dense "
             "MLP's in intermediate_size");
    m.dense_ffn = r.count({"intermediate_size"}, m, "dense_ffn");
  } else if (m.experts > 1) {
    m.sources["dense_ffn"] =
        r.source("model_type") + " (every layer has the experts: no dense MLP)";
  }
  // Shared experts, which every token runs beside its routed ones: Qwen2-MoE gives their width
  // (one shared expert of shared_expert_intermediate_size, Qwen2MoeSparseMoeBlock; its one-output
  // sigmoid gate, hidden_size elements, is not counted), DeepSeek their count at the routed
  // experts' width (DeepseekV2MoE: intermediate_size = moe_intermediate_size x n_shared_experts).
  if (m.experts > 1 && type == "llama4_text") {
    // Llama4TextMoe's shared_expert: one Llama4TextMLP of intermediate_size beside the experts.
    m.shared_ffn = m.ffn;
    m.sources["shared_ffn"] = r.source(ffn_key) + " (llama4_text's one shared expert)";
  } else if (m.experts > 1) {
    std::string shared_key;
    if (const json* s = r.find_nonzero({"shared_expert_intermediate_size"}, &shared_key)) {
      m.shared_ffn = r.count_value(*s, shared_key, m, "shared_ffn");
    } else if (const json* n = r.find_nonzero({"n_shared_experts"}, &shared_key)) {
      const long long width = 1LL * r.count_value(*n, shared_key, m, "shared_ffn") * m.ffn;
      if (width > kMaxCount)
        r.fail(shared_key, "times " + ffn_key + " (" + std::to_string(m.ffn) +
                               ") is beyond any model's MLP width: " + std::to_string(width));
      m.shared_ffn = static_cast<int>(width);
      m.sources["shared_ffn"] = r.source(shared_key) + " x " + r.source(ffn_key);
    }
  }
  if (type == "opt") {
    if (const json* p = r.find({"word_embed_proj_dim"});
        p && !(p->is_number_integer() && p->get<long long>() == m.hidden))
      r.fail("word_embed_proj_dim", "an embedding projected to another width is not modelled");
  }

  // Sliding-window attention (model/llm.hpp LlmSpec::sliding_window): the window, and which
  // layers attend over the whole context all the same. Qwen3 and Mixtral name a window but leave
  // it off (use_sliding_window false, or null).
  if (const json* w = r.find({"sliding_window"}); w && r.flag("use_sliding_window", true))
    m.sliding_window = r.count_value(*w, "sliding_window", m, "sliding_window");
  // Llama 4's chunked attention: a token attends to those of its own chunk before it, at most
  // attention_chunk_size of them (LlmSpec::chunked_attention, with the chunk's width as the
  // window).
  if (const json* c = r.find({"attention_chunk_size"}); c && type == "llama4_text") {
    m.sliding_window = r.count_value(*c, "attention_chunk_size", m, "sliding_window");
    m.sources["sliding_window"] += " (the chunks' width)";
    m.chunked_attention = true;
    m.sources["chunked_attention"] = r.source("attention_chunk_size");
  }
  bool max_known = true;  // from the file or its config class, not tiersim's default
  if (const json* p = r.find({"max_position_embeddings", "n_positions", "seq_length"}, &ffn_key)) {
    m.max_positions = r.count_value(*p, ffn_key, m, "max_positions");
  } else if (type == "gemma3_text") {
    m.max_positions = 131072;
    m.sources["max_positions"] =
        r.source("model_type") + " (Gemma3TextConfig's default max_position_embeddings)";
  } else {
    max_known = false;
    m.sources["max_positions"] = "estimate: " + path + " gives no maximum length; the default " +
                                 std::to_string(m.max_positions);
  }
  // A window (or chunk) at least as wide as the trained context never slides (Phi-3.5-MoE's
  // 131,072 of 131,072): the model attends fully, and is not a sliding-window model.
  if (max_known && m.sliding_window > 0 && m.sliding_window >= m.max_positions) {
    m.sources["sliding_window"] += " (not narrower than max_positions: no window)";
    m.sliding_window = 0;
    m.chunked_attention = false;
  }
  if (m.sliding_window > 0) read_full_attention_layers(r, m, type);
  m.tied_embeddings = r.flag("tie_word_embeddings", mt->tied_by_default);
  m.sources["tied_embeddings"] =
      r.find({"tie_word_embeddings"})
          ? r.source("tie_word_embeddings")
          : r.source("model_type") + " (the config class's default, " +
                (mt->tied_by_default ? "true" : "false") + ")";

  // torch_dtype (newer transformers write dtype).
  std::string dtype_key;
  if (const json* d = r.find({"torch_dtype", "dtype"}, &dtype_key)) {
    if (!d->is_string()) r.fail(dtype_key, "expected a string, got " + d->dump());
    m.dtype = d->get<std::string>();
    static const std::vector<std::string> kDtypes = {"float16", "bfloat16", "float32"};
    bool known = false;
    for (const auto& k : kDtypes) known = known || k == m.dtype;
    if (!known)
      r.fail(dtype_key, "unsupported dtype '" + m.dtype + "'" + did_you_mean(m.dtype, kDtypes) +
                            "; supported: " + join(kDtypes));
    m.sources["dtype"] = r.source(dtype_key);
  }
  return m;
}

}  // namespace tiersim::config
