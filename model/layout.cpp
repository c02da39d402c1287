#include "model/layout.hpp"

#include <algorithm>

namespace tiersim {

double WeightModule::bytes() const {
  double sum = 0;
  for (const auto& t : tensors) sum += t.bytes;
  return sum;
}

double WeightModule::elements() const {
  double sum = 0;
  for (const auto& t : tensors) sum += t.elements;
  return sum;
}

double matrix_bytes_per_weight(const Policy& p) {
  if (p.weight_bits == 8 && p.stack.per_channel_8bit_scales) return 1.0;
  return bytes_per_weight(p.weight_bits, p.quant_group_size);
}

std::vector<WeightModule> weight_modules(const LlmSpec& m, const Policy& p) {
  const double qbytes = matrix_bytes_per_weight(p);
  auto matrix = [&](const char* name, double elements) {
    return WeightTensor{name, elements, elements * qbytes, p.weight_bits < 16};
  };
  auto plain = [](const char* name, double elements) {
    return WeightTensor{name, elements, elements * 2.0, false};
  };
  const ParamCounts counts = count_params(m);
  const double h = m.hidden, kv = m.kv_dim(), f = m.ffn;

  std::vector<WeightModule> modules;
  modules.reserve(static_cast<std::size_t>(m.layers) + 2);
  WeightModule emb;
  emb.kind = WeightModule::Kind::kEmbedding;
  emb.tensors.push_back(plain("embedding", counts.embedding));
  modules.push_back(emb);

  WeightModule layer;
  layer.kind = WeightModule::Kind::kLayer;
  layer.tensors.push_back(matrix("q_proj", h * h));
  layer.tensors.push_back(matrix("k_proj", h * kv));
  layer.tensors.push_back(matrix("v_proj", h * kv));
  layer.tensors.push_back(matrix("o_proj", h * h));
  const int matrices = m.ffn_kind == FfnKind::kGated ? 3 : 2;
  static const char* const kFfnNames[] = {"ffn_up", "ffn_down", "ffn_gate"};
  for (int e = 0; e < m.experts; ++e)
    for (int k = 0; k < matrices; ++k) layer.tensors.push_back(matrix(kFfnNames[k], h * f));
  // Biases, norms and the router are small fp16 tensors; they travel together.
  const double small = counts.per_layer - (2 * h * h + 2 * h * kv) - matrices * h * f * m.experts;
  if (small > 0) layer.tensors.push_back(plain("norms_biases", small));
  for (int l = 0; l < m.layers; ++l) {
    layer.layer = l;
    modules.push_back(layer);
  }

  WeightModule head;
  head.kind = WeightModule::Kind::kHead;
  head.tensors.push_back(plain("lm_head", static_cast<double>(m.vocab) * h));
  head.tensors.push_back(plain("final_norm", h));
  modules.push_back(head);
  return modules;
}

double resident_param_limit_bytes(const ExecutionModel& em, const AioConfig& aio) {
  return std::max(em.small_param_bytes, aio.block_size_bytes);
}

TensorSource tensor_source(double tensor_bytes, const Placement& weights, double limit_bytes) {
  TensorSource src{tensor_bytes * weights.nvme, tensor_bytes * weights.cpu};
  if (src.nvme_bytes > 0 && tensor_bytes < limit_bytes) {
    src.cpu_bytes += src.nvme_bytes;
    src.nvme_bytes = 0;
  }
  return src;
}

}  // namespace tiersim
