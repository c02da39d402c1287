#pragma once
// The model as the offload runtime sees it: modules (embedding, each transformer layer, the output
// head) made of parameter tensors, each with its size at the policy's precision. ZeRO-3 fetches and
// releases weights at this granularity.
#include <string>
#include <vector>

#include "model/llm.hpp"
#include "model/perf.hpp"
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

// Bytes per element of a quantised weight matrix as the stack stores it: group-wise scale and
// minimum per quant_group_size elements (bytes_per_weight), or, for stacks with per-tensor or
// per-channel 8-bit scales, one byte (a scale per row of thousands of elements is left out).
double matrix_bytes_per_weight(const Policy& p);

// Embedding, layers 0..L-1, head. A tied head re-fetches the embedding matrix, as ZeRO-3 does when
// the output projection runs.
std::vector<WeightModule> weight_modules(const LlmSpec& m, const Policy& p);

// Where one streamed tensor is fetched from, in bytes of the tensor's full size.
struct TensorSource {
  double nvme_bytes = 0;  // read from the NVMe array [bytes]
  double cpu_bytes = 0;   // copied from host DRAM [bytes]
};

// DeepSpeed's small-tensor rule: a parameter below max(1 MiB, AIO block size) is not swapped to
// NVMe but kept in host memory (deepspeed/runtime/swap_tensor/partitioned_param_swapper.py:
// min_aio_bytes = max(MIN_AIO_BYTES = 1024**2, aio block_size); tensors under it are not
// swappable). The limit in bytes; em.small_param_bytes is the 1 MiB.
double resident_param_limit_bytes(const ExecutionModel& em, const AioConfig& aio);
// The tensor's NVMe and host-DRAM shares under the policy's weight placement and that rule.
TensorSource tensor_source(double tensor_bytes, const Placement& weights, double limit_bytes);

}  // namespace tiersim
