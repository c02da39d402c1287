#pragma once
// The model as the offload runtime sees it: modules (embedding, each transformer layer, the output
// head) made of parameter tensors, each with its size at the policy's precision. ZeRO-3 fetches and
// releases weights at this granularity.
#include <string>
#include <vector>

#include "model/llm.hpp"
#include "model/scenario.hpp"

namespace tiersim {

struct WeightTensor {
  const char* name;     // static: "q_proj", "ffn_up", ...
  double elements = 0;
  double bytes = 0;     // at the policy's precision (quantised matrices carry their metadata)
  bool quantized = false;
};

struct WeightModule {
  enum class Kind { kEmbedding, kLayer, kHead } kind = Kind::kLayer;
  int layer = -1;  // transformer layer index for kLayer
  std::vector<WeightTensor> tensors;
  double bytes() const;
  double elements() const;
};

// Embedding, layers 0..L-1, head. A tied head re-fetches the embedding matrix, as ZeRO-3 does when
// the output projection runs.
std::vector<WeightModule> weight_modules(const LlmSpec& m, const Policy& p);

// Where one fetch of tensor `t` reads its bytes from under the policy's weight placement. Tensors
// smaller than `small_limit_bytes` (small_param_limit_bytes in model/perf.hpp) stay in host memory
// even when offloaded to NVMe, as DeepSpeed keeps them.
struct TensorSource {
  double nvme_bytes = 0;
  double cpu_bytes = 0;
};
TensorSource tensor_source(const WeightTensor& t, const Placement& weights,
                           double small_limit_bytes);

}  // namespace tiersim
