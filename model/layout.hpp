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
  int expert = -1;  // MoE expert the matrix belongs to; -1 for everything else (and dense FFNs)
  // Elements of the largest model parameter among those the tensor stands for (the layer's
  // biases, norms and router travel as one "norms_biases" tensor); 0 = the tensor is one
  // parameter. ZeRO-3's persistence threshold applies to parameters (zero3_persistent).
  double largest_part_elements = 0;
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

// ZeRO-3's persistence rule (deepspeed/runtime/zero/partition_parameters.py,
// Init._convert_to_deepspeed_param): a parameter of at most param_persistence_threshold elements
// is kept whole on every GPU, neither partitioned nor offloaded, and never gathered. A tensor
// that stands for several parameters (WeightTensor::largest_part_elements) persists when its
// largest one does; a threshold between its parameters' sizes, which would keep only some, is
// taken as keeping none.
bool zero3_persistent(const WeightTensor& t, const Zero3Settings& z);

}  // namespace tiersim

namespace tiersim {

// FlexGen's weight placement (FMInference/FlexiGen flexgen/flex_opt.py, init_weight_list and
// get_choice). Within one sub-layer's list of tensors, each whole tensor goes to the first device,
// in the order disk, CPU, GPU, whose cumulative percentage is strictly above the tensor's midpoint
// in the cumulative element count of the list. No tensor is split, so the effective shares can be
// far from the requested ones (--percent 20 80 puts ~8% of OPT's weights on the GPU).
// `elements` are the tensors' sizes in list order; returns each tensor's home.
std::vector<Tier> flexgen_tensor_homes(const std::vector<double>& elements, double disk_percent,
                                       double cpu_percent, double gpu_percent);

// One of FlexGen's layers as OptLM builds them with sep_layer (its default): the input embedding,
// each transformer layer's attention block and MLP block, the output embedding.
struct FlexGenTensor {
  const char* name;  // static
  double elements = 0;
  bool matrix = false;  // 2-D: pinned per --pin-weight and compressed per --compress-weight
  double bytes = 0;     // as stored (4-bit group-wise when compressed)
  Tier home = Tier::kGpu;
};
struct FlexGenSubLayer {
  enum class Kind { kInputEmbed, kAttention, kMlp, kOutputEmbed } kind = Kind::kAttention;
  int layer = -1;  // transformer layer for kAttention and kMlp
  std::vector<FlexGenTensor> tensors;
  double bytes_on(Tier t) const;
  double elements() const;
  double matrix_elements() const;  // what decompression touches when weights are compressed
};
// FlexGen's weight_specs of each OPT sub-layer (InputEmbed, SelfAttention, MLP, OutputEmbed
// .init_weight, in their order), each tensor placed by flexgen_tensor_homes. OutputEmbed holds
// its own copy of the token embedding.
std::vector<FlexGenSubLayer> flexgen_sublayers(const LlmSpec& m, const FlexGenPolicy& fg);
// The effective shares of the weight bytes on each tier under that rule.
Placement flexgen_weight_placement(const std::vector<FlexGenSubLayer>& sublayers);

// FlexGen's KV-cache split of one GPU batch, in sequences (TorchMixedDevice.
// init_cache_one_gpu_batch in flexgen/pytorch_backend.py): a device holding 100% takes it all;
// otherwise the GPU and CPU segments are int(gbs * n_head * pct / 100) rounded down to whole
// sequences (multiples of n_head) and disk takes the rest. The same split in every layer.
struct FlexGenCacheSplit {
  int gpu_seqs = 0;
  int cpu_seqs = 0;
  int disk_seqs = 0;
};
FlexGenCacheSplit flexgen_cache_split(const FlexGenPolicy& fg, int heads);

// Bytes per element of FlexGen's 4-bit group-wise compression (flexgen/compression.py:
// num_bits 4, group_size 64, an fp16 scale and an fp16 minimum per group): 0.5 + 4/64 = 0.5625.
inline constexpr double kFlexGenCompressedBytesPerElem = 0.5625;

}  // namespace tiersim
