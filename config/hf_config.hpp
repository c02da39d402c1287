#pragma once
// Models from a Hugging Face config.json, the file every checkpoint on the Hub carries and the
// one Vidur, GenZ, LLM-Viewer and vLLM read: `model: {hf_config: path/config.json}` in a scenario,
// or `hf_config:` in a catalog entry (scenarios/catalog/hf/). The fields that decide bytes and
// FLOPs are read; anything that would change them in a way the simulator does not model (shared
// experts, dense layers between MoE layers, active sliding-window attention, a projected word
// embedding) is an error naming the file and the field, never silently ignored.
#include <string>

#include "model/llm.hpp"

namespace tiersim::config {

// The architecture in `path`: family (model_type), layers, hidden, heads, KV heads, head_dim,
// FFN width (per expert for MoE), vocabulary, tied embeddings, learned positions, experts and
// top-k, maximum positions and torch_dtype. The name is left empty (the caller names the model);
// every field's source names the file and the key it came from. Throws ConfigError(path, 0, key,
// ...) for unreadable JSON, a missing or mistyped field, or an unsupported feature.
LlmSpec read_hf_config(const std::string& path);
// The same from text already read; `path` names it in errors and sources.
LlmSpec parse_hf_config(const std::string& text, const std::string& path);

// The model_type values the reader knows (their layer structure is that of a catalog family).
const std::vector<std::string>& hf_model_types();

}  // namespace tiersim::config
