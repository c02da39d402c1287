// Models from a Hugging Face config.json (config/hf_config.hpp): the shipped files reproduce the
// catalog's models; a scenario can name one; a bad or unsupported file is an error naming the
// file and the field.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "config/catalog.hpp"
#include "config/hf_config.hpp"
#include "model/errors.hpp"
#include "model/layout.hpp"
#include "model/llm.hpp"
#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace config_hf_config_test {

using namespace tiersim;
using namespace tiersim::config;

namespace {

const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
const std::string kHf = kData + "/catalog/hf";

ConfigError hf_error(const std::string& text) {
  try {
    (void)parse_hf_config(text, "bad/config.json");
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("no error for " << text);
  throw;
}

// Parameters a token touches, input embedding included: each layer's active ones (its routed
// experts' top-k share) over the layers, the embedding and the output head. The model cards of
// the MoE tests below count so; DeepSeek's count leaves the embedding out (active_params below).
double active_with_embedding(const LlmSpec& m) {
  const ParamCounts c = count_params(m);
  return layer_active_params(m) * m.layers + c.embedding + c.lm_head;
}

// DIR/s.yaml: one H200 running the shipped config.json `shipped` (copied into DIR as
// config.json), an inference batch with weights and KV cache on the GPU. Its path.
std::string scenario_with_config(const test::TempDir& dir, const std::string& shipped, int batch,
                                 int prompt_tokens, int gen_tokens) {
  std::filesystem::copy_file(kHf + "/" + shipped, dir.file("config.json"));
  std::ofstream(dir.file("s.yaml"))
      << "name: qwen\nhardware: {gpu: {model: H200}}\nmodel: {hf_config: config.json}\n"
      << "workload: {kind: inference, batch: " << batch << ", prompt_tokens: " << prompt_tokens
      << ", gen_tokens: " << gen_tokens << "}\npolicy: {weights: gpu, kv_cache: gpu}\n";
  return dir.file("s.yaml");
}

}  // namespace

TEST_CASE("every shipped config.json reproduces its catalog model", "[config][hf_config]") {
  const Catalog c = Catalog::load(kData);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(kHf)) {
    if (e.path().extension() != ".json") continue;
    ++files;
    const std::string name = e.path().stem().string();
    INFO(name);
    const LlmSpec from_file = read_hf_config(e.path().string());
    const LlmSpec& catalog = c.model(name);  // every file is named after a catalog model
    const double file_params = count_params(from_file).total;
    // Within 1% of the catalog's own count and of the published size.
    CHECK(file_params == Approx(count_params(catalog).total).epsilon(0.01));
    CHECK(file_params / 1e9 == Approx(catalog.published_params_b).epsilon(0.01));
    // The shape the simulator's costs follow, field by field.
    CHECK(from_file.layers == catalog.layers);
    CHECK(from_file.kv_dim() == catalog.kv_dim());
    CHECK(from_file.q_dim() == catalog.q_dim());
    CHECK(from_file.ffn == catalog.ffn);
    CHECK(from_file.vocab == catalog.vocab);
    CHECK(from_file.experts == catalog.experts);
    CHECK(from_file.ffn_kind == catalog.ffn_kind);
  }
  // the 16 older catalog models, llama-3.1-70b/-405b, qwen3-32b, qwen2.5-7b and the ten added
  // with Gemma-2 and GPT-NeoX's readers (llama-2-13b ... gemma-2-27b)
  CHECK(files >= 30);
}

TEST_CASE("Qwen3's head width is its own, not hidden / heads", "[config][hf_config]") {
  const LlmSpec q = read_hf_config(kHf + "/qwen3-32b.json");
  CHECK(q.hidden == 5120);
  CHECK(q.heads == 64);
  CHECK(q.head_dim() == 128);  // hidden / heads would be 80
  CHECK(q.q_dim() == 8192);
  CHECK(q.kv_dim() == 1024);
  CHECK(q.dtype == "bfloat16");
  CHECK_FALSE(q.tied_embeddings);
  // 64 x (2 x 5120 x 8192 + 2 x 5120 x 1024 + 3 x 5120 x 25600 + norms) + 2 x 151936 x 5120.
  CHECK(count_params(q).total / 1e9 == Approx(32.76).epsilon(0.002));
}

TEST_CASE("Gemma, GPT-NeoX, Phi and OLMo-2 configs count their published sizes",
          "[config][hf_config]") {
  // Published sizes: Gemma 7B 8.54B (Gemma Team 2024, Table 2: 7.75B non-embedding + 0.79B
  // embedding, the head tied); GPT-NeoX-20B 20.55B (Black et al. 2022: 20,554,567,680); Phi-2
  // 2.78B (the Hub's count for microsoft/phi-2). Each config's fields as on the Hub.
  const LlmSpec gemma = parse_hf_config(R"({"model_type": "gemma", "hidden_size": 3072,
      "intermediate_size": 24576, "num_hidden_layers": 28, "num_attention_heads": 16,
      "num_key_value_heads": 16, "head_dim": 256, "vocab_size": 256000,
      "max_position_embeddings": 8192})",
                                        "gemma-7b/config.json");
  CHECK(gemma.tied_embeddings);  // GemmaConfig's default
  CHECK(gemma.ffn_kind == FfnKind::kGated);
  CHECK(gemma.q_dim() == 4096);  // 16 heads of 256 on a width of 3072
  CHECK(count_params(gemma).total / 1e9 == Approx(8.54).epsilon(0.01));

  const LlmSpec neox = parse_hf_config(R"({"model_type": "gpt_neox", "hidden_size": 6144,
      "intermediate_size": 24576, "num_hidden_layers": 44, "num_attention_heads": 64,
      "vocab_size": 50432, "max_position_embeddings": 2048})",
                                       "gpt-neox-20b/config.json");
  CHECK_FALSE(neox.tied_embeddings);  // GPTNeoXConfig's default
  CHECK(neox.ffn_kind == FfnKind::kMlp);
  CHECK(neox.kv_heads == 64);
  CHECK(count_params(neox).total / 1e9 == Approx(20.55).epsilon(0.01));

  const LlmSpec phi = parse_hf_config(R"({"model_type": "phi", "hidden_size": 2560,
      "intermediate_size": 10240, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": null, "vocab_size": 51200, "max_position_embeddings": 2048})",
                                      "phi-2/config.json");
  CHECK_FALSE(phi.tied_embeddings);  // PhiConfig's default
  CHECK(phi.kv_heads == 32);         // null: multi-head attention
  CHECK(count_params(phi).total / 1e9 == Approx(2.78).epsilon(0.01));

  // OLMo-2 7B as on the Hub (allenai/OLMo-2-1124-7B config.json): 7.30B parameters (the Hub's
  // count), its head apart from its embedding.
  const LlmSpec olmo = parse_hf_config(R"({"model_type": "olmo2", "hidden_size": 4096,
      "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 32, "vocab_size": 100352, "max_position_embeddings": 4096})",
                                       "olmo-2-7b/config.json");
  CHECK_FALSE(olmo.tied_embeddings);  // Olmo2Config's default
  CHECK(olmo.ffn_kind == FfnKind::kGated);
  CHECK(count_params(olmo).total / 1e9 == Approx(7.30).epsilon(0.01));
}

TEST_CASE("Granite and Cohere (Command-R) configs count their published sizes",
          "[config][hf_config]") {
  // Granite 3.3 8B as on the Hub (ibm-granite/granite-3.3-8b-instruct config.json, its scaling
  // multipliers left out: they scale values): 8,170,864,640 parameters, the Hub's count, to the
  // element (the norms included, the head tied).
  const LlmSpec granite = parse_hf_config(R"({"model_type": "granite", "hidden_size": 4096,
      "intermediate_size": 12800, "num_hidden_layers": 40, "num_attention_heads": 32,
      "num_key_value_heads": 8, "vocab_size": 49159, "max_position_embeddings": 131072,
      "tie_word_embeddings": true, "embedding_multiplier": 12.0, "residual_multiplier": 0.22})",
                                          "granite-3.3-8b/config.json");
  CHECK(granite.ffn_kind == FfnKind::kGated);
  CHECK(granite.kv_heads == 8);
  CHECK(count_params(granite).total == Approx(8170864640.0).epsilon(1e-9));
  // Without the key, GraniteConfig's default: an untied head.
  CHECK_FALSE(parse_hf_config(R"({"model_type": "granite", "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
      "vocab_size": 100})",
                              "g/config.json")
                  .tied_embeddings);

  // Command-R (CohereForAI/c4ai-command-r-v01 config.json): 35B parameters (its model card),
  // multi-head attention, the head tied to the 256k-token embedding (CohereConfig's default).
  const LlmSpec cohere = parse_hf_config(R"({"model_type": "cohere", "hidden_size": 8192,
      "intermediate_size": 22528, "num_hidden_layers": 40, "num_attention_heads": 64,
      "num_key_value_heads": 64, "vocab_size": 256000, "max_position_embeddings": 8192,
      "logit_scale": 0.0625, "use_qk_norm": false})",
                                         "c4ai-command-r-v01/config.json");
  CHECK(cohere.tied_embeddings);
  CHECK(cohere.ffn_kind == FfnKind::kGated);
  CHECK(count_params(cohere).total / 1e9 == Approx(35.0).epsilon(0.01));
}

TEST_CASE("Phi-3.5-MoE, OLMoE, Granite MoE and StarCoder2 configs count their published sizes",
          "[config][hf_config]") {
  // Phi-3.5-MoE (microsoft/Phi-3.5-MoE-instruct config.json): 16 experts, top 2; its model card
  // gives 41.9B parameters, 6.6B active. Its 131,072-token window is as wide as its context: no
  // window.
  const LlmSpec phimoe = parse_hf_config(R"({"model_type": "phimoe", "hidden_size": 4096,
      "intermediate_size": 6400, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 8, "num_local_experts": 16, "num_experts_per_tok": 2,
      "vocab_size": 32064, "max_position_embeddings": 131072, "sliding_window": 131072})",
                                         "phi-3.5-moe/config.json");
  CHECK_FALSE(phimoe.tied_embeddings);  // PhimoeConfig's default
  CHECK(phimoe.sliding_window == 0);
  const ParamCounts pc = count_params(phimoe);
  CHECK(pc.total / 1e9 == Approx(41.9).epsilon(0.01));
  CHECK(active_with_embedding(phimoe) / 1e9 == Approx(6.6).epsilon(0.01));
  // OLMoE-1B-7B (allenai/OLMoE-1B-7B-0924 config.json): 64 experts of 1,024, top 8; 6.9B
  // parameters, 1.3B active (its paper's title and model card).
  const LlmSpec olmoe = parse_hf_config(R"({"model_type": "olmoe", "hidden_size": 2048,
      "intermediate_size": 1024, "num_hidden_layers": 16, "num_attention_heads": 16,
      "num_key_value_heads": 16, "num_experts": 64, "num_experts_per_tok": 8,
      "vocab_size": 50304, "max_position_embeddings": 4096, "clip_qkv": null})",
                                        "olmoe/config.json");
  CHECK_FALSE(olmoe.tied_embeddings);  // OlmoeConfig's default
  const ParamCounts oc = count_params(olmoe);
  CHECK(oc.total / 1e9 == Approx(6.92).epsilon(0.01));
  CHECK(active_with_embedding(olmoe) / 1e9 == Approx(1.28).epsilon(0.01));
  // Granite 3.0 3B-A800M (ibm-granite/granite-3.0-3b-a800m-base config.json): 40 experts of
  // 512, top 8, the head tied; 3.3B parameters, 800M active (its model card; the layers' own,
  // without the 75M of the embedding).
  const LlmSpec granite = parse_hf_config(R"({"model_type": "granitemoe", "hidden_size": 1536,
      "intermediate_size": 512, "num_hidden_layers": 32, "num_attention_heads": 24,
      "num_key_value_heads": 8, "num_local_experts": 40, "num_experts_per_tok": 8,
      "vocab_size": 49155, "max_position_embeddings": 4096, "tie_word_embeddings": true,
      "embedding_multiplier": 12.0})",
                                          "granite-3.0-3b-a800m/config.json");
  const ParamCounts gc = count_params(granite);
  CHECK(gc.total / 1e9 == Approx(3.3).epsilon(0.02));
  CHECK(layer_active_params(granite) * granite.layers / 1e9 == Approx(0.8).epsilon(0.02));
  // StarCoder2-3B (bigcode/starcoder2-3b config.json): a plain MLP, two key/value heads, a
  // 4,096-token window on every layer; 3.03B parameters (its Hub page).
  const LlmSpec sc2 = parse_hf_config(R"({"model_type": "starcoder2", "hidden_size": 3072,
      "intermediate_size": 12288, "num_hidden_layers": 30, "num_attention_heads": 24,
      "num_key_value_heads": 2, "vocab_size": 49152, "max_position_embeddings": 16384,
      "sliding_window": 4096, "use_bias": true})",
                                      "starcoder2-3b/config.json");
  CHECK(sc2.ffn_kind == FfnKind::kMlp);
  CHECK(sc2.tied_embeddings);  // PretrainedConfig's default: Starcoder2Config passes none
  CHECK(sc2.sliding_window == 4096);
  CHECK(sc2.sliding_layers() == 30);
  CHECK(count_params(sc2).total / 1e9 == Approx(3.03).epsilon(0.01));
}

TEST_CASE("GPT-2 and GPTBigCode configs count their published sizes", "[config][hf_config]") {
  // GPT-2 XL as on the Hub (openai-community/gpt2-xl config.json): n_inner null, so the MLP is
  // 4 x n_embd; a learned position table of n_positions rows; the head tied to the embedding.
  // 1,557,611,200 parameters (the Hub's count); biases and layer norms are not counted.
  const LlmSpec m = parse_hf_config(R"({"model_type": "gpt2", "n_embd": 1600, "n_head": 25,
      "n_layer": 48, "n_inner": null, "n_positions": 1024, "n_ctx": 1024, "vocab_size": 50257})",
                                    "gpt2-xl/config.json");
  CHECK(m.ffn == 4 * 1600);
  CHECK(m.learned_positions);
  CHECK(m.max_positions == 1024);
  CHECK(m.tied_embeddings);  // GPT2Config keeps PretrainedConfig's default
  CHECK(m.kv_heads == 25);
  CHECK(count_params(m).total / 1e9 == Approx(1.5576).epsilon(0.01));

  // StarCoder as on the Hub (bigcode/starcoder config.json): GPT-2's layer with multi-query
  // attention (multi_query true: one key/value head). Published: 15.5B parameters (the model card).
  const LlmSpec sc = parse_hf_config(R"({"model_type": "gpt_bigcode", "n_embd": 6144,
      "n_head": 48, "n_layer": 40, "n_inner": 24576, "n_positions": 8192, "multi_query": true,
      "vocab_size": 49152})",
                                     "starcoder/config.json");
  CHECK(sc.kv_heads == 1);
  CHECK(sc.learned_positions);
  CHECK(count_params(sc).total / 1e9 == Approx(15.5).epsilon(0.01));
  // Its multi_query defaults to true; false is multi-head attention.
  CHECK(parse_hf_config(R"({"model_type": "gpt_bigcode", "n_embd": 64, "n_head": 4,
      "n_layer": 2, "vocab_size": 100})",
                        "mq/config.json")
            .kv_heads == 1);
  CHECK(parse_hf_config(R"({"model_type": "gpt_bigcode", "n_embd": 64, "n_head": 4,
      "n_layer": 2, "vocab_size": 100, "multi_query": false})",
                        "mha/config.json")
            .kv_heads == 4);
  // A width whose default MLP (4 x n_embd) would overflow is an error, not a wrapped number.
  CHECK_THROWS_WITH(parse_hf_config(R"({"model_type": "gpt2", "n_embd": 900000000,
      "n_head": 1, "n_layer": 2, "vocab_size": 100})",
                                    "wide/config.json"),
                    Catch::Contains("hidden_size"));
}

TEST_CASE("an MoE's dense layers: GLM-4.5's first layers, Qwen-MoE's sparse step",
          "[config][hf_config]") {
  // GLM-4.5 and GLM-4.5-Air (scenarios/catalog/hf): 3 and 1 dense first layers of
  // intermediate_size, then 160 and 128 routed experts of moe_intermediate_size and one shared.
  // Published: 355B and 106B parameters in all (zai-org/GLM-4.5 README and model cards).
  const std::string dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios/catalog/hf/";
  const LlmSpec glm = read_hf_config(dir + "glm-4.5.json");
  CHECK(glm.dense_first_layers == 3);
  CHECK(glm.dense_ffn == 12288);
  CHECK(glm.ffn == 1536);
  CHECK(glm.shared_ffn == 1536);
  CHECK(glm.expert_layers() == 89);
  CHECK_FALSE(glm.layer_has_experts(2));
  CHECK(glm.layer_has_experts(3));
  const ParamCounts c = count_params(glm);
  CHECK(c.total / 1e9 == Approx(355).epsilon(0.01));
  CHECK(c.dense_layer < c.expert_layer / 10);
  CHECK(count_params(read_hf_config(dir + "glm-4.5-air.json")).total / 1e9 ==
        Approx(106).epsilon(0.01));
  // The catalog entry's sources name the file as the catalog does, at each mention: shared_ffn's
  // source names it twice, and only the first used to lose this machine's folder.
  const LlmSpec entry =
      Catalog::load(std::string(TIERSIM_SOURCE_DIR) + "/scenarios").model("glm-4.5");
  CHECK(entry.sources.at("shared_ffn") ==
        "hf_config hf/glm-4.5.json: n_shared_experts x hf_config hf/glm-4.5.json: "
        "moe_intermediate_size");
  // The layout fetches each layer as it is: dense layers without expert tensors, and every
  // element counted once.
  const std::vector<WeightModule> mods = weight_modules(glm, Policy{});
  double elements = 0;
  for (const auto& mod : mods) elements += mod.elements();
  CHECK(elements == Approx(c.total).epsilon(1e-9));
  const auto experts_in = [&](int layer) {
    int n = 0;
    for (const auto& t : mods[static_cast<std::size_t>(layer) + 1].tensors) n += t.expert >= 0;
    return n;
  };
  CHECK(experts_in(0) == 0);
  CHECK(experts_in(2) == 0);
  CHECK(experts_in(3) == 160 * 3);
  // Active parameters: each layer's own, averaged (GLM-4.5 publishes 32B active; this count
  // has the input embedding and the q/k/v biases' omission in it: 33.6B).
  CHECK(active_with_embedding(glm) / 1e9 == Approx(33.6).epsilon(0.01));
  // Each kind of layer's own model (what the simulator computes each layer as): the mean over the
  // layers is theirs, weighted by how many of each there are.
  const LlmSpec dense = layer_model(glm, false), experts = layer_model(glm, true);
  CHECK(dense.experts == 1);
  CHECK(dense.ffn == 12288);
  CHECK(layer_active_params(dense) == Approx(c.attention + 3.0 * 5120 * 12288));
  CHECK(count_params(experts).expert_layer == Approx(c.expert_layer));
  CHECK(layer_active_params(glm) * 92 ==
        Approx(3 * layer_active_params(dense) + 89 * layer_active_params(experts)));
  // A layer model's layers are all alike; a model whose layers already are is its own.
  CHECK_FALSE(layer_model(read_hf_config(dir + "glm-4.5-air.json"), true).mixed_layers());
  CHECK(layer_model(read_hf_config(kHf + "/mixtral-8x7b.json"), false).experts == 8);

  // Qwen-MoE's forms: mlp_only_layers [0, 1] is two dense first layers; decoder_sparse_step 2
  // puts the experts on layers 1, 3, 5 ... (Qwen2MoeDecoderLayer: (layer_idx + 1) % step == 0).
  const std::string qwen =
      R"({"model_type": "qwen2_moe", "num_hidden_layers": 6, "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 10, "num_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "intermediate_size": 256, )";
  const LlmSpec first = parse_hf_config(qwen + R"("mlp_only_layers": [0, 1]})", "q.json");
  CHECK(first.dense_first_layers == 2);
  CHECK(first.expert_layers() == 4);
  CHECK(first.dense_ffn == 256);
  const LlmSpec step = parse_hf_config(qwen + R"("decoder_sparse_step": 2})", "q.json");
  CHECK(step.moe_layer_step == 2);
  CHECK(step.expert_layers() == 3);
  CHECK_FALSE(step.layer_has_experts(0));
  CHECK(step.layer_has_experts(1));
  // Every layer's own parameters add up: 3 with experts, 3 dense.
  const ParamCounts sc = count_params(step);
  CHECK(sc.per_layer * 6 == Approx(3 * sc.expert_layer + 3 * sc.dense_layer));
  CHECK(sc.dense_layer == Approx(sc.attention + 3 * 64.0 * 256 + sc.norms));
  // Without moe_intermediate_size the dense layers' width is unknown.
  CHECK_THROWS_WITH(parse_hf_config(R"({"model_type": "qwen2_moe", "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "num_experts": 8,
      "num_experts_per_tok": 2, "intermediate_size": 32, "first_k_dense_replace": 1})",
                                    "w.json"),
                    Catch::Contains("moe_intermediate_size"));
}

TEST_CASE("a Llama 4 config is read from its text_config: experts, shared expert, dense layers",
          "[config][hf_config]") {
  // Llama4TextConfig's defaults are Scout's (16 experts on every layer); Maverick's text_config
  // differs in 128 experts on every other layer (interleave_moe_layer_step 2), the others dense
  // MLPs of intermediate_size_mlp. Published (Meta's model cards): Scout 109B in all with its
  // vision tower, Maverick 400B; 17B active each.
  const std::string text =
      R"("model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
      "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
      "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 202048, "num_experts_per_tok": 1,
      "attention_chunk_size": 8192, "tie_word_embeddings": false, )";
  const auto config = [&](const std::string& experts) {
    return R"({"model_type": "llama4", "architectures": ["Llama4ForConditionalGeneration"],
      "vision_config": {"hidden_size": 1408}, "text_config": {)" +
           text + experts + "}}";
  };
  const LlmSpec scout = parse_hf_config(
      config(R"("num_local_experts": 16, "interleave_moe_layer_step": 1)"), "s.json");
  CHECK(scout.family == "llama4_text");
  CHECK(scout.experts == 16);
  CHECK(scout.shared_ffn == 8192);
  CHECK(scout.expert_layers() == 48);
  CHECK(scout.sliding_window == 8192);
  CHECK(scout.chunked_attention);  // attention_chunk_size: chunks of that width, not a window
  CHECK_THAT(scout.sources.at("layers"),
             Catch::Equals("hf_config s.json: text_config.num_hidden_layers"));
  const ParamCounts sc = count_params(scout);
  CHECK(sc.total / 1e9 == Approx(107.77).epsilon(0.001));  // the text model of the 109B
  CHECK(active_with_embedding(scout) / 1e9 == Approx(17).epsilon(0.02));

  const LlmSpec maverick =
      parse_hf_config(config(R"("num_local_experts": 128, "interleave_moe_layer_step": 2,
      "moe_layers": [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33, 35, 37, 39,
      41, 43, 45, 47])"),
                      "m.json");
  CHECK(maverick.moe_layer_step == 2);
  CHECK(maverick.dense_ffn == 16384);
  CHECK_FALSE(maverick.layer_has_experts(0));
  CHECK(maverick.layer_has_experts(1));
  CHECK(count_params(maverick).total / 1e9 == Approx(400).epsilon(0.01));

  // A list of MoE layers that is not the step's is refused, naming the nested key.
  try {
    (void)parse_hf_config(config(R"("num_local_experts": 16, "moe_layers": [0, 5])"), "x.json");
    FAIL("expected an error");
  } catch (const ConfigError& e) {
    CHECK(e.key_path() == "text_config.moe_layers");
  }
  // A step near the largest count, its list's indices past an int: an error, not an overflow.
  CHECK_THROWS_WITH(
      parse_hf_config(config(R"("num_local_experts": 16, "interleave_moe_layer_step": 1000000000,
      "moe_layers": [999999999, 1999999999, 2999999999])"),
                      "z.json"),
      Catch::Contains("leaves no layer"));
  CHECK_THROWS_WITH(parse_hf_config(R"({"model_type": "llama4"})", "y.json"),
                    Catch::Contains("text_config") && Catch::Contains("missing"));
}

TEST_CASE("a Qwen2-MoE config counts its shared expert beside the routed ones",
          "[config][hf_config]") {
  // Qwen1.5-MoE-A2.7B as on the Hub (Qwen/Qwen1.5-MoE-A2.7B config.json): 60 routed experts of
  // 1,408, top 4, and one shared expert of 5,632 that every token runs. Published: 14.3B
  // parameters, 2.7B activated per token (the model card).
  const LlmSpec m = parse_hf_config(R"({"model_type": "qwen2_moe", "hidden_size": 2048,
      "intermediate_size": 5632, "moe_intermediate_size": 1408,
      "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4,
      "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
      "vocab_size": 151936, "decoder_sparse_step": 1, "mlp_only_layers": [],
      "max_position_embeddings": 8192, "tie_word_embeddings": false})",
                                    "qwen1.5-moe-a2.7b/config.json");
  CHECK(m.ffn == 1408);
  CHECK(m.shared_ffn == 5632);
  const ParamCounts c = count_params(m);
  CHECK(c.total / 1e9 == Approx(14.3).epsilon(0.01));
  CHECK(active_with_embedding(m) / 1e9 == Approx(2.7).epsilon(0.01));
  // DeepSeek's form: a count of shared experts at the routed experts' width.
  const LlmSpec n = parse_hf_config(R"({"model_type": "qwen3_moe", "hidden_size": 2048,
      "moe_intermediate_size": 768, "n_shared_experts": 2, "num_experts": 128,
      "num_experts_per_tok": 8, "num_hidden_layers": 4, "num_attention_heads": 32,
      "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 1000})",
                                    "shared/config.json");
  CHECK(n.shared_ffn == 2 * 768);
  // A count that would overflow the width is an error naming the key.
  CHECK_THROWS_WITH(parse_hf_config(R"({"model_type": "qwen3_moe", "hidden_size": 64,
      "moe_intermediate_size": 100000, "n_shared_experts": 100000, "num_experts": 4,
      "num_experts_per_tok": 2, "num_hidden_layers": 2, "num_attention_heads": 4,
      "vocab_size": 100})",
                                    "huge/config.json"),
                    Catch::Contains("n_shared_experts"));
}

TEST_CASE("a model's shared experts resolve and load back; none leaves the key out",
          "[config][hf_config]") {
  const std::string yaml =
      "name: t\nhardware: {gpu: {model: H100-SXM}}\n"
      "workload: {kind: inference, batch: 1, prompt_tokens: 16, gen_tokens: 2}\n";
  const Scenario s = test::load_yaml(yaml + "model: {name: mixtral-8x7b, shared_ffn: 1024}\n");
  CHECK(s.model.shared_ffn == 1024);
  CHECK_THAT(s.resolved_yaml, Catch::Contains("shared_ffn: 1024"));
  CHECK(load_scenario_text(s.resolved_yaml, "resolved.yaml").hash == s.hash);
  const Scenario none = test::load_yaml(yaml + "model: {name: mixtral-8x7b}\n");
  CHECK_THAT(none.resolved_yaml, !Catch::Contains("shared_ffn"));
  CHECK(none.hash != s.hash);
  // Shared experts need routed ones.
  CHECK_THROWS_WITH(test::load_yaml(yaml + "model: {name: llama-3-8b, shared_ffn: 1024}\n"),
                    Catch::Contains("model.shared_ffn"));
}

TEST_CASE("an MoE's dense layers resolve and load back, and need an MoE", "[config][hf_config]") {
  const std::string yaml =
      "name: t\nhardware: {gpu: {model: H200, count: 8}}\n"
      "workload: {kind: inference, batch: 1, prompt_tokens: 16, gen_tokens: 2}\n"
      "policy: {parallelism: {tensor: 8}}\n";
  const Scenario glm = test::load_yaml(yaml + "model: {name: glm-4.5}\n");
  CHECK(glm.model.dense_first_layers == 3);
  CHECK_THAT(glm.resolved_yaml, Catch::Contains("dense_first_layers: 3") &&
                                    Catch::Contains("dense_ffn: 12288") &&
                                    !Catch::Contains("moe_layer_step"));
  const Scenario back = load_scenario_text(glm.resolved_yaml, "resolved.yaml");
  CHECK(back.hash == glm.hash);
  CHECK(back.model.expert_layers() == 89);
  // By hand on a catalog MoE: Mixtral with experts on every other layer.
  const Scenario every_other =
      test::load_yaml(yaml + "model: {name: mixtral-8x7b, moe_layer_step: 2, dense_ffn: 4096}\n");
  CHECK(every_other.model.expert_layers() == 16);
  CHECK(load_scenario_text(every_other.resolved_yaml, "r.yaml").hash == every_other.hash);
  // A dense model has no expert layers to place; an MoE needs at least one.
  CHECK_THROWS_WITH(test::load_yaml(yaml + "model: {name: llama-3-8b, dense_first_layers: 2}\n"),
                    Catch::Contains("model.dense_first_layers") && Catch::Contains("dense model"));
  CHECK_THROWS_WITH(
      test::load_yaml(yaml + "model: {name: mixtral-8x7b, moe_layer_step: 64}\n"),
      Catch::Contains("model.moe_layer_step") && Catch::Contains("an MoE needs at least one"));
  CHECK_THROWS_WITH(test::load_yaml(yaml + "model: {name: mixtral-8x7b, dense_first_layers: 32}\n"),
                    Catch::Contains("model.dense_first_layers"));
  // A dense width no layer uses is an error, not a silent no-op.
  CHECK_THROWS_WITH(test::load_yaml(yaml + "model: {name: mixtral-8x7b, dense_ffn: 4096}\n"),
                    Catch::Contains("model.dense_ffn") && Catch::Contains("no layer runs"));
}

TEST_CASE("an attention width past any model's is refused, not wrapped around",
          "[config][hf_config]") {
  // heads x head_dim of 10^12 overflowed an int: under UBSan a signed overflow, in Release a
  // negative GPU time that the power model refused with a confusing message.
  const LlmSpec m = parse_hf_config(R"({"model_type": "llama", "hidden_size": 4096,
      "intermediate_size": 11008, "num_hidden_layers": 2, "num_attention_heads": 1000000,
      "num_key_value_heads": 1000000, "head_dim": 1000000, "vocab_size": 100})",
                                    "big/config.json");
  CHECK(m.head_size == 1000000);
  const std::string yaml =
      "name: t\nhardware: {gpu: {model: H100-SXM}}\n"
      "workload: {kind: inference, batch: 1, prompt_tokens: 16, gen_tokens: 2}\n"
      "model: {name: llama-3-8b, heads: 1000000, kv_heads: 1000000, head_dim: 1000000}\n";
  CHECK_THROWS_WITH(
      test::load_yaml(yaml),
      Catch::Contains("model.head_dim") && Catch::Contains("beyond any model's attention width"));
}

TEST_CASE("Gemma-2 slides its window on every other layer, and runs past it",
          "[config][hf_config][window]") {
  const LlmSpec g = read_hf_config(kHf + "/gemma-2-9b.json");
  CHECK(g.sliding_window == 4096);  // no use_sliding_window key: the window applies
  CHECK(g.full_attention_layers == 21);  // of 42: Gemma2DecoderLayer slides on the even ones
  CHECK_THAT(g.sources.at("full_attention_layers"), Catch::Contains("odd layers attend fully"));
  CHECK(g.tied_embeddings);
  CHECK(g.head_dim() == 256);
  test::TempDir dir;
  std::ofstream(dir.file("s.yaml")) << "name: x\nhardware: {gpu: {model: H200}}\n"
                                       "model: {name: gemma-2-9b}\n"
                                       "workload: {kind: inference, batch: 1, prompt_tokens: 4000, "
                                       "gen_tokens: 96}\npolicy: {weights: gpu, kv_cache: gpu}\n";
  CHECK_NOTHROW(load_scenario(dir.file("s.yaml")));
  // Past the window: the sliding layers attend to (and the optimized stack keeps) the window.
  LoadOptions longer;
  longer.overrides = {"workload.prompt_tokens=8000", "policy.stack=optimized"};
  const Scenario s = load_scenario(dir.file("s.yaml"), longer);
  CHECK(s.model.full_attention_layers == 21);
  // The resolved scenario carries the split, so a copy of it runs the same model.
  CHECK_THAT(s.resolved_yaml, Catch::Contains("full_attention_layers: 21"));
  CHECK(test::load_yaml(s.resolved_yaml).model.full_attention_layers == 21);
  // With the window set to 0 the catalog's split means nothing: the model resolves (and reloads)
  // as one without a window.
  longer.overrides.push_back("model.sliding_window=0");
  const Scenario none = load_scenario(dir.file("s.yaml"), longer);
  CHECK(none.model.sliding_layers() == 0);
  CHECK_THAT(none.resolved_yaml, !Catch::Contains("full_attention_layers"));
  CHECK(test::load_yaml(none.resolved_yaml).model.sliding_layers() == 0);
}

TEST_CASE("a scenario runs a model given only as a config.json", "[config][hf_config]") {
  test::TempDir dir;
  const std::string scenario = scenario_with_config(dir, "qwen3-32b.json", 4, 128, 8);
  const Scenario s = load_scenario(scenario);
  CHECK(s.model.layers == 64);
  CHECK(s.model.head_dim() == 128);
  CHECK(s.model.name == std::filesystem::path(dir.str()).filename().string());  // named by its folder, as on the Hub
  CHECK_THAT(s.provenance.at("model.layers"), Catch::Contains("num_hidden_layers"));
  // The file's content is part of the scenario: another width is another hash.
  const Scenario wider = load_scenario(scenario, [] {
    LoadOptions o;
    o.overrides = {"model.ffn=25601"};
    return o;
  }());
  CHECK(wider.hash != s.hash);
  // A name with the file is only a name; a field after it still overrides.
  LoadOptions named;
  named.overrides = {"model.name=my-finetune", "model.layers=2"};
  const Scenario n = load_scenario(scenario, named);
  CHECK(n.model.name == "my-finetune");
  CHECK(n.model.layers == 2);
  CHECK(n.model.head_dim() == 128);
  // The resolved scenario loads back into the same one.
  const std::string resolved = dir.file("resolved.yaml");
  std::ofstream(resolved) << s.resolved_yaml;
  CHECK(load_scenario(resolved).hash == s.hash);
}

TEST_CASE("a run reloads from any folder: the stored scenario names its files absolutely",
          "[config][hf_config]") {
  test::TempDir dir;
  scenario_with_config(dir, "qwen3-32b.json", 4, 128, 8);
  // Named relative to the working folder, as `tiersim sweep sub/s.yaml` names it.
  const std::string relative = std::filesystem::relative(dir.file("s.yaml")).string();
  REQUIRE(std::filesystem::path(relative).is_relative());
  const Scenario s = load_scenario(relative);
  CHECK(std::filesystem::path(s.model.hf_config).is_relative());
  REQUIRE_FALSE(s.portable_yaml.empty());
  CHECK_THAT(s.portable_yaml,
             Catch::Contains(
                 std::filesystem::absolute(dir.file("config.json")).lexically_normal().string()));
  // Written into another folder (as `tiersim report` reloads a stored run), the portable text
  // loads and the scenario's own does not: its path was relative to the working folder. The
  // folder is one where that relative path names no file (from a folder as deep below the
  // temporary folder's parent as the working folder is, "../../x/config.json" is the same file).
  std::filesystem::path elsewhere = dir.file("elsewhere");
  while (std::filesystem::exists((elsewhere / s.model.hf_config).lexically_normal()))
    elsewhere /= "deeper";
  std::filesystem::create_directories(elsewhere);
  const std::string moved = (elsewhere / "run.yaml").string();
  std::ofstream(moved) << s.portable_yaml;
  CHECK(load_scenario(moved).model.layers == 64);
  std::ofstream(moved) << s.resolved_yaml;
  CHECK_THROWS_AS(load_scenario(moved), ConfigError);
  // Named absolutely, the scenario has nothing to make portable.
  CHECK(load_scenario(dir.file("s.yaml")).portable_yaml.empty());
}

TEST_CASE("catalog models may be given by a config.json", "[config][hf_config]") {
  const Catalog c = Catalog::load(kData);
  const LlmSpec& m = c.model("llama-3.1-405b");
  CHECK(m.layers == 126);
  CHECK(m.hidden == 16384);
  CHECK(m.max_positions == 131072);
  CHECK(m.hf_config == "hf/llama-3.1-405b.json");
  CHECK_THAT(m.sources.at("layers"), Catch::Equals("hf_config hf/llama-3.1-405b.json: num_hidden_layers"));
  // What the issue reported: "llama-3.1-70b" was answered "did you mean llama-3.1-8b".
  CHECK(c.model("llama-3.1-70b").layers == 80);
}

TEST_CASE("a bad or unsupported config.json names the file and the field", "[config][hf_config]") {
  ConfigError e = hf_error("{\"model_type\": \"llama\", \"hidden_size\": 4096}");
  CHECK(e.file() == "bad/config.json");
  CHECK(e.key_path() == "num_hidden_layers");
  CHECK_THAT(e.what(), Catch::Contains("missing"));

  e = hf_error("{\"model_type\": \"mamba\"}");
  CHECK(e.key_path() == "model_type");
  CHECK_THAT(e.what(), Catch::Contains("unsupported model_type 'mamba'"));
  // DeepSeek attends through a latent: its config must say how wide.
  e = hf_error(
      "{\"model_type\": \"deepseek_v3\", \"num_hidden_layers\": 2, \"hidden_size\": "
      "64, \"num_attention_heads\": 4, \"vocab_size\": 10, \"intermediate_size\": 8}");
  CHECK(e.key_path() == "kv_lora_rank");
  CHECK_THAT(e.what(), Catch::Contains("missing"));

  const std::string moe =
      "{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
      "\"num_attention_heads\": 4, \"vocab_size\": 10, \"num_experts\": 8, "
      "\"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32, \"intermediate_size\": 128, ";
  // Dense layers other than the first ones, or a pattern that leaves no layer its experts.
  e = hf_error(moe + "\"mlp_only_layers\": [1]}");
  CHECK(e.key_path() == "mlp_only_layers");
  CHECK_THAT(e.what(), Catch::Contains("other than the first ones"));
  e = hf_error(moe + "\"decoder_sparse_step\": 3}");
  CHECK(e.key_path() == "decoder_sparse_step");
  CHECK_THAT(e.what(), Catch::Contains("leaves no layer of the 2 with the experts"));
  e = hf_error(moe + "\"first_k_dense_replace\": 2}");
  CHECK(e.key_path() == "first_k_dense_replace");
  e = hf_error(moe + "\"moe_layer_freq\": 2}");
  CHECK(e.key_path() == "moe_layer_freq");
  e = hf_error(moe + "\"first_k_dense_replace\": 1, \"mlp_only_layers\": [0]}");
  CHECK_THAT(e.what(), Catch::Contains("give one of the two"));
  // Every layer sparse: read, with the per-expert width.
  const LlmSpec ok = parse_hf_config(moe + "\"decoder_sparse_step\": 1, \"mlp_only_layers\": []}",
                                     "ok.json");
  CHECK(ok.experts == 8);
  CHECK(ok.experts_per_token == 2);
  CHECK(ok.ffn == 32);

  e = hf_error("{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
               "\"num_attention_heads\": 4, \"vocab_size\": 10, \"intermediate_size\": -3}");
  CHECK(e.key_path() == "intermediate_size");
  CHECK_THAT(e.what(), Catch::Contains("positive integer"));

  e = hf_error("{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
               "\"num_attention_heads\": 4, \"vocab_size\": 10, \"intermediate_size\": 8, "
               "\"torch_dtype\": \"float8\"}");
  CHECK(e.key_path() == "torch_dtype");

  e = hf_error("{not json");
  CHECK_THAT(e.what(), Catch::Contains("not valid JSON"));

  // A number beyond a double's range is a JSON error too (nlohmann raises out_of_range, not
  // parse_error, for it), not an internal error.
  e = hf_error("{\"model_type\": \"llama\", \"num_hidden_layers\": 1e400}");
  CHECK_THAT(e.what(), Catch::Contains("not valid JSON"));
}

TEST_CASE("a scenario names the config.json that is wrong", "[config][hf_config]") {
  test::TempDir dir;
  std::ofstream(dir.file("config.json")) << "{\"model_type\": \"llama\"}";
  std::ofstream(dir.file("s.yaml")) << "name: x\nhardware: {gpu: {model: H200}}\n"
                                       "model:\n  hf_config: config.json\n"
                                       "workload: {kind: inference, batch: 1}\n";
  try {
    (void)load_scenario(dir.file("s.yaml"));
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.line() == 4);
    CHECK(e.key_path() == "model.hf_config");
    CHECK_THAT(e.what(), Catch::Contains(dir.file("config.json")));
    CHECK_THAT(e.what(), Catch::Contains("num_hidden_layers"));
  }
}

TEST_CASE("inference and training run past a sliding window", "[config][hf_config][window]") {
  test::TempDir dir;
  scenario_with_config(dir, "phi-3-mini.json", 1, 1024, 32);
  const LlmSpec phi = load_scenario(dir.file("s.yaml")).model;
  CHECK(phi.sliding_window == 2047);
  CHECK(phi.sliding_layers() == phi.layers);  // phi3: every layer slides
  LoadOptions longer;
  longer.overrides = {"workload.prompt_tokens=4000"};
  CHECK_NOTHROW(load_scenario(dir.file("s.yaml"), longer));
  std::ofstream(dir.file("t.yaml"))
      << "name: t\nhardware: {gpu: {model: H200}}\nmodel: {hf_config: config.json}\n"
         "workload: {kind: training, sequence_tokens: 4096, global_batch: 8}\n";
  // Training computes every key under the window's mask, as eager attention does.
  CHECK(load_scenario(dir.file("t.yaml")).model.sliding_window == 2047);
}

TEST_CASE("Gemma 3 and Mistral Small 3.1 are read from their text_config",
          "[config][hf_config][window]") {
  // google/gemma-3-27b-it's text_config leaves vocab_size, max_position_embeddings and the
  // window's pattern to Gemma3TextConfig (262,208; 131,072; every sixth layer full). Published:
  // 27B for the language model (the 27.4B of the model card add the 0.4B SigLIP encoder).
  const LlmSpec g = parse_hf_config(R"({"model_type": "gemma3",
      "architectures": ["Gemma3ForConditionalGeneration"], "vision_config": {"hidden_size": 1152},
      "text_config": {"model_type": "gemma3_text", "head_dim": 128, "hidden_size": 5376,
        "intermediate_size": 21504, "num_attention_heads": 32, "num_hidden_layers": 62,
        "num_key_value_heads": 16, "query_pre_attn_scalar": 168, "sliding_window": 1024}})",
                                    "gemma-3-27b-it/config.json");
  CHECK(g.family == "gemma3_text");
  CHECK(g.vocab == 262208);
  CHECK_THAT(g.sources.at("vocab"), Catch::Contains("Gemma3TextConfig's default"));
  CHECK(g.max_positions == 131072);
  CHECK(g.tied_embeddings);
  CHECK(g.sliding_window == 1024);
  CHECK(g.full_attention_layers == 10);  // layers 5, 11, ..., 59
  CHECK_THAT(g.sources.at("layers"),
             Catch::Equals("hf_config gemma-3-27b-it/config.json: text_config.num_hidden_layers"));
  CHECK(count_params(g).total / 1e9 == Approx(27.0).epsilon(0.01));
  // mistralai/Mistral-Small-3.1-24B-Instruct-2503: a Mistral language model, no window.
  const LlmSpec ms = parse_hf_config(R"({"model_type": "mistral3",
      "text_config": {"model_type": "mistral", "head_dim": 128, "hidden_size": 5120,
        "intermediate_size": 32768, "max_position_embeddings": 131072, "num_attention_heads": 32,
        "num_hidden_layers": 40, "num_key_value_heads": 8, "sliding_window": null,
        "vocab_size": 131072}})",
                                     "mistral-small/config.json");
  CHECK(ms.family == "mistral");
  CHECK(ms.sliding_window == 0);
  CHECK(count_params(ms).total / 1e9 == Approx(23.6).epsilon(0.01));
  // Another wrapper: its text_config, saved apart, is what the reader takes.
  CHECK_THAT(hf_error(R"({"model_type": "llava", "text_config": {"model_type": "llama"}})").what(),
             Catch::Contains("save this one's text_config as a config.json of its own"));
  // A wrapper without its text_config names the key.
  CHECK_THAT(hf_error(R"({"model_type": "gemma3", "vision_config": {}})").what(),
             Catch::Contains("a gemma3 config gives its language model in text_config"));
}

TEST_CASE("which layers slide: layer_types, or the model class's pattern",
          "[config][hf_config][window]") {
  // gpt-oss: layer_types alternate, sliding first (the shipped configs), a 128-token window.
  const LlmSpec oss = read_hf_config(kHf + "/gpt-oss-120b.json");
  CHECK(oss.family == "gpt_oss");
  CHECK(oss.sliding_window == 128);
  CHECK(oss.full_attention_layers == 18);
  CHECK(oss.experts == 128);
  CHECK(oss.experts_per_token == 4);
  CHECK(oss.q_dim() == 4096);  // 64 heads of 64 on a width of 2880
  CHECK_FALSE(oss.tied_embeddings);
  CHECK(count_params(oss).total / 1e9 == Approx(116.83).epsilon(0.01));
  CHECK(count_params(read_hf_config(kHf + "/gpt-oss-20b.json")).total / 1e9 ==
        Approx(20.91).epsilon(0.01));

  const std::string base = R"("hidden_size": 1024, "intermediate_size": 4096,
      "num_hidden_layers": 12, "num_attention_heads": 16, "vocab_size": 32000,
      "sliding_window": 512, )";
  const auto parse = [&](const std::string& type, const std::string& extra) {
    return parse_hf_config("{\"model_type\": \"" + type + "\", " + base + extra + "}", "c.json");
  };
  // Gemma 3: every sixth layer attends fully, or every sliding_window_pattern-th.
  CHECK(parse("gemma3_text", R"("head_dim": 64)").full_attention_layers == 2);
  CHECK(parse("gemma3_text", R"("sliding_window_pattern": 4)").full_attention_layers == 3);
  // Qwen2 with the window on: its first max_window_layers layers attend fully.
  CHECK(parse("qwen2", R"("use_sliding_window": true, "max_window_layers": 8)")
            .full_attention_layers == 8);
  CHECK(parse("qwen2", R"("use_sliding_window": false, "max_window_layers": 8)").sliding_window ==
        0);
  // Mistral: every layer.
  CHECK(parse("mistral", R"("num_key_value_heads": 4)").full_attention_layers == 0);
  // layer_types that do not list every layer, or name a kind the reader does not know.
  const auto bad = [&](const std::string& types) {
    try {
      (void)parse("mistral", "\"layer_types\": " + types);
    } catch (const ConfigError& e) {
      CHECK(e.key_path() == "layer_types");
      return std::string(e.what());
    }
    FAIL("no error for " << types);
    return std::string();
  };
  CHECK_THAT(bad(R"(["full_attention"])"), Catch::Contains("a list of 12 layer kinds"));
  CHECK_THAT(bad(R"(["full_attention", "full_attention", "full_attention", "full_attention",
      "full_attention", "full_attention", "full_attention", "full_attention", "full_attention",
      "full_attention", "full_attention", "linear_attention"])"),
             Catch::Contains("unsupported layer kind 'linear_attention'"));
}

namespace {
// DeepSeek-V2 (deepseek-ai/DeepSeek-V2: 236B, 21B active), V2-Lite (15.7B, 2.4B active) and Kimi
// K2 (moonshotai/Kimi-K2-Instruct: 1.04T, 32B active), as their config.json files give the
// fields the reader uses; DeepSeek-V3 is shipped (scenarios/catalog/hf/deepseek-v3.json).
std::string deepseek_config(const std::string& type, int layers, int hidden, int heads, int experts,
                            int top_k, int shared, int moe_ffn, int dense_ffn, int dense_first,
                            const std::string& q_lora, int vocab) {
  return "{\"model_type\": \"" + type + "\", \"num_hidden_layers\": " + std::to_string(layers) +
         ", \"hidden_size\": " + std::to_string(hidden) +
         ", \"num_attention_heads\": " + std::to_string(heads) +
         ", \"num_key_value_heads\": " + std::to_string(heads) +
         ", \"n_routed_experts\": " + std::to_string(experts) +
         ", \"num_experts_per_tok\": " + std::to_string(top_k) +
         ", \"n_shared_experts\": " + std::to_string(shared) +
         ", \"moe_intermediate_size\": " + std::to_string(moe_ffn) +
         ", \"intermediate_size\": " + std::to_string(dense_ffn) +
         ", \"first_k_dense_replace\": " + std::to_string(dense_first) +
         ", \"moe_layer_freq\": 1, \"q_lora_rank\": " + q_lora +
         ", \"kv_lora_rank\": 512, \"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, "
         "\"v_head_dim\": 128, \"vocab_size\": " +
         std::to_string(vocab) + ", \"tie_word_embeddings\": false}";
}

// Active parameters a token touches as DeepSeek counts them: its layers' and the output head
// (V3's 36.6B "including 0.9B for the output Head"), not the input embedding's lookup.
double active_params(const LlmSpec& m) {
  return layer_active_params(m) * m.layers + count_params(m).lm_head;
}
}  // namespace

TEST_CASE("multi-head latent attention: DeepSeek-V2, V3 and Kimi K2 from their config.json",
          "[config][hf_config]") {
  const LlmSpec v3 = read_hf_config(kHf + "/deepseek-v3.json");
  CHECK(v3.mla());
  CHECK(v3.head_dim() == 192);  // qk_nope_head_dim + qk_rope_head_dim
  CHECK(v3.v_head_dim() == 128);
  CHECK(v3.latent_kv_dim() == 576);
  CHECK(v3.sources.at("head_dim") == "hf_config " + kHf +
                                         "/deepseek-v3.json: qk_nope_head_dim + hf_config " + kHf +
                                         "/deepseek-v3.json: qk_rope_head_dim");
  // The attention's matrices as DeepseekV3Attention builds them.
  const AttentionMatrices a = attention_matrices(v3);
  REQUIRE(a.count == 5);
  CHECK(std::string(a.items[0].name) == "q_a_proj");
  CHECK(a.items[0].elements == 7168.0 * 1536);
  CHECK(a.items[1].elements == 1536.0 * 128 * 192);
  CHECK(a.items[2].elements == 7168.0 * 576);
  CHECK(a.items[3].elements == 512.0 * 128 * (128 + 128));
  CHECK(a.items[4].elements == 128.0 * 128 * 7168);
  // Published: 671B in all, 37B active (README_WEIGHTS.md: 36.6B "including 0.9B for the
  // output Head").
  CHECK(count_params(v3).total / 1e9 == Approx(671).epsilon(0.01));
  CHECK(active_params(v3) / 1e9 == Approx(36.6).epsilon(0.01));

  const LlmSpec v2 = parse_hf_config(
      deepseek_config("deepseek_v2", 60, 5120, 128, 160, 6, 2, 1536, 12288, 1, "1536", 102400),
      "v2.json");
  CHECK(count_params(v2).total / 1e9 == Approx(236).epsilon(0.01));
  CHECK(active_params(v2) / 1e9 == Approx(21).epsilon(0.02));
  // V2-Lite projects the query directly (q_lora_rank null).
  const LlmSpec lite = parse_hf_config(
      deepseek_config("deepseek_v2", 27, 2048, 16, 64, 6, 2, 1408, 10944, 1, "null", 102400),
      "lite.json");
  CHECK(lite.q_lora_rank == 0);
  CHECK(parse_hf_config(
            deepseek_config("deepseek_v2", 27, 2048, 16, 64, 6, 2, 1408, 10944, 1, "0", 102400),
            "zero.json")
            .q_lora_rank == 0);
  // MLA's fields are checked as any count is.
  CHECK_THROWS_WITH(parse_hf_config(deepseek_config("deepseek_v2", 27, 2048, 16, 64, 6, 2, 1408,
                                                    10944, 1, "-5", 102400),
                                    "neg.json"),
                    Catch::Contains("q_lora_rank") && Catch::Contains("positive integer"));
  CHECK(std::string(attention_matrices(lite).items[0].name) == "q_proj");
  CHECK(count_params(lite).total / 1e9 == Approx(15.7).epsilon(0.01));
  CHECK(active_params(lite) / 1e9 == Approx(2.4).epsilon(0.025));  // published to 0.1B: 2.45
  const std::string k2_json =
      deepseek_config("kimi_k2", 61, 7168, 64, 384, 8, 1, 2048, 18432, 1, "1536", 163840);
  const LlmSpec k2 = parse_hf_config(k2_json, "k2.json");
  // The Kimi K2 report's 1.04T (the model card rounds to 1T): the config counts 1.026T.
  CHECK(count_params(k2).total / 1e12 == Approx(1.04).epsilon(0.015));
  CHECK(active_params(k2) / 1e9 == Approx(32).epsilon(0.02));
  // Kimi K2.5 (moonshotai/Kimi-K2.5, KimiK25ForConditionalGeneration) wraps K2's language model
  // in text_config beside its vision tower, which is not counted.
  const LlmSpec k25 = parse_hf_config(
      R"({"model_type": "kimi_k25", "vision_config": {"hidden_size": 1152}, "text_config": )" +
          k2_json + "}",
      "k25.json");
  CHECK(count_params(k25).total == count_params(k2).total);
  CHECK(k25.mla());

  // The cache: transformers keeps each head's widened keys and values (128 x (192 + 128) elements
  // a token and layer, split over tensor-parallel ranks by head); the latent stacks keep the
  // 576-element latent, whole on every rank.
  const KvCacheShape per_head = kv_cache_shape(v3, KvCacheForm::kPerHead, 2.0, 8);
  CHECK(per_head.bytes_per_token_layer == 128.0 * (192 + 128) * 2);
  CHECK(per_head.split == 8);
  CHECK_FALSE(per_head.latent);
  const KvCacheShape latent = kv_cache_shape(v3, KvCacheForm::kLatent, 2.0, 8);
  CHECK(latent.bytes_per_token_layer == 576.0 * 2);
  CHECK(latent.split == 1);
  CHECK(latent.latent);
  // A model without MLA keeps its per-head cache on any stack.
  const LlmSpec llama = read_hf_config(kHf + "/llama-3-8b.json");
  CHECK(kv_cache_shape(llama, KvCacheForm::kLatent, 2.0, 2).bytes_per_token_layer ==
        kv_bytes_per_token_layer(llama, 2.0));
  CHECK_FALSE(kv_cache_shape(llama, KvCacheForm::kLatent, 2.0, 2).latent);
  // Attention over the latent (absorbed): 128 heads x (576 + 512) multiply-adds per cached token;
  // over the widened heads: 128 x (192 + 128).
  CHECK(latent_attention_flops(v3, 1, 1) == 2.0 * 128 * (576 + 512));
  CHECK(attention_flops(v3, 1, 1) == 2.0 * 128 * (192 + 128));
  CHECK(latent_attention_flops(llama, 3, 5) == attention_flops(llama, 3, 5));
  // The layout holds every parameter once, with MLA's tensors by name.
  const std::vector<WeightModule> mods = weight_modules(v3, Policy{});
  double elements = 0;
  for (const auto& mod : mods) elements += mod.elements();
  CHECK(elements == Approx(count_params(v3).total).epsilon(1e-9));
  CHECK(std::string(mods[1].tensors[3].name) == "kv_b_proj");
  CHECK(std::string(mods[4].tensors[3].name) == "kv_b_proj");  // an expert layer's too
}

TEST_CASE("MLA scenarios: the stack must run it, the fields fit together", "[config][hf_config]") {
  const std::string yaml =
      "name: t\nhardware: {gpu: {model: H200}}\n"
      "workload: {kind: inference, batch: 4, prompt_tokens: 64, gen_tokens: 4}\n";
  const std::vector<std::string> eight = {"hardware.gpu.count=8"};
  const Scenario v3 =
      test::load_yaml(yaml +
                          "model: {name: deepseek-v3}\n"
                          "policy: {weight_bits: 8, stack: optimized, parallelism: {tensor: 8}}\n",
                      eight);
  CHECK(v3.model.mla());
  CHECK_THAT(v3.resolved_yaml,
             Catch::Contains("kv_lora_rank: 512") && Catch::Contains("v_head_dim: 128"));
  CHECK(load_scenario_text(v3.resolved_yaml, "resolved.yaml").hash == v3.hash);
  // A model without latent attention resolves as before: none of its keys are written.
  const Scenario llama = test::load_yaml(yaml + "model: {name: llama-3-8b}\n");
  CHECK_THAT(llama.resolved_yaml, !Catch::Contains("kv_lora_rank") &&
                                      !Catch::Contains("v_head_dim") &&
                                      !Catch::Contains("qk_rope_dim"));
  // TensorRT-LLM v0.5-v0.7 predate DeepSeek-V2.
  CHECK_THROWS_WITH(test::load_yaml(yaml + "model: {name: deepseek-v3}\n"
                                           "policy: {weight_bits: 8, stack: trtllm-v0.7, "
                                           "parallelism: {tensor: 8}}\n",
                                    eight),
                    Catch::Contains("policy.stack") && Catch::Contains("latent attention"));
  // ZeRO-Inference's host KV attention is the fork's OPT, BLOOM and Llama code.
  CHECK_THROWS_WITH(test::load_yaml(yaml + "model: {name: deepseek-v3}\n"
                                           "policy: {weights: cpu, kv_cache: cpu}\n"),
                    Catch::Contains("policy.kv_cache") && Catch::Contains("latent attention"));
  // The fields: the rotary part is part of the key head; the query's rank is MLA's.
  CHECK_THROWS_WITH(test::load_yaml(yaml + "model: {name: deepseek-v3, qk_rope_dim: 192}\n"
                                           "policy: {parallelism: {tensor: 8}}\n",
                                    eight),
                    Catch::Contains("model.qk_rope_dim") && Catch::Contains("narrower"));
  CHECK_THROWS_WITH(test::load_yaml(yaml + "model: {name: llama-3-8b, q_lora_rank: 64}\n"),
                    Catch::Contains("model.q_lora_rank") && Catch::Contains("kv_lora_rank"));
  // By hand: a Llama with a latent cache is an MLA model like any other.
  const Scenario by_hand =
      test::load_yaml(yaml + "model: {name: llama-3-8b, kv_lora_rank: 256, qk_rope_dim: 32}\n");
  CHECK(by_hand.model.latent_kv_dim() == 288);
}
}  // namespace config_hf_config_test
