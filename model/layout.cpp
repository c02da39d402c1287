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
  const double h = m.hidden, f = m.ffn;

  std::vector<WeightModule> modules;
  modules.reserve(static_cast<std::size_t>(m.layers) + 2);
  WeightModule emb;
  emb.kind = WeightModule::Kind::kEmbedding;
  emb.tensors.push_back(plain("embedding", counts.embedding));
  modules.push_back(emb);

  WeightModule layer;
  layer.kind = WeightModule::Kind::kLayer;
  const AttentionMatrices attention = attention_matrices(m);
  for (int i = 0; i < attention.count; ++i)
    layer.tensors.push_back(matrix(attention.items[i].name, attention.items[i].elements));
  const int matrices = m.ffn_kind == FfnKind::kGated ? 3 : 2;
  static const char* const kFfnNames[] = {"ffn_up", "ffn_down", "ffn_gate"};
  for (int e = 0; e < m.experts; ++e)
    for (int k = 0; k < matrices; ++k) {
      layer.tensors.push_back(matrix(kFfnNames[k], h * f));
      if (m.experts > 1) layer.tensors.back().expert = e;
    }
  // The shared experts run for every token: fetched with the layer whatever the routing.
  static const char* const kSharedNames[] = {"shared_up", "shared_down", "shared_gate"};
  if (m.shared_ffn > 0)
    for (int k = 0; k < matrices; ++k)
      layer.tensors.push_back(matrix(kSharedNames[k], h * m.shared_ffn));
  // Biases, norms and the router are small fp16 tensors; they travel together.
  const double small =
      counts.expert_layer - attention.elements() - matrices * h * f * m.experts - counts.ffn_shared;
  if (small > 0) {
    layer.tensors.push_back(plain("norms_biases", small));
    layer.tensors.back().largest_part_elements = counts.largest_small_param;
  }
  // An MoE's layers without the experts: the same attention and one dense MLP.
  const bool mixed = m.mixed_layers();
  WeightModule dense;
  if (mixed) {
    dense.kind = WeightModule::Kind::kLayer;
    dense.tensors.assign(layer.tensors.begin(), layer.tensors.begin() + attention.count);
    for (int k = 0; k < matrices; ++k)
      dense.tensors.push_back(matrix(kFfnNames[k], h * m.dense_mlp_width()));
    const double dense_small =
        counts.dense_layer - attention.elements() - matrices * h * m.dense_mlp_width();
    if (dense_small > 0) {
      dense.tensors.push_back(plain("norms_biases", dense_small));
      dense.tensors.back().largest_part_elements = counts.largest_small_param;
    }
  }
  for (int l = 0; l < m.layers; ++l) {
    WeightModule& kind = mixed && !m.layer_has_experts(l) ? dense : layer;
    kind.layer = l;
    modules.push_back(kind);
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

bool zero3_persistent(const WeightTensor& t, const Zero3Settings& z) {
  const double largest = t.largest_part_elements > 0 ? t.largest_part_elements : t.elements;
  return largest <= z.param_persistence_threshold;
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

namespace tiersim {

std::vector<Tier> flexgen_tensor_homes(const std::vector<double>& elements, double disk_percent,
                                       double cpu_percent, double gpu_percent) {
  // get_choice: np.cumsum of [disk, cpu, gpu]; the first device whose cumulative share is above
  // the midpoint, else the last (GPU).
  const double cumulative[3] = {disk_percent, disk_percent + cpu_percent,
                                disk_percent + cpu_percent + gpu_percent};
  const Tier devices[3] = {Tier::kNvme, Tier::kCpu, Tier::kGpu};
  double total = 0;
  for (double e : elements) total += e;
  std::vector<Tier> homes;
  homes.reserve(elements.size());
  double sum = 0;
  for (double e : elements) {
    sum += e;
    const double mid_percent = total > 0 ? (sum - e / 2) / total * 100 : 0;
    Tier home = devices[2];
    for (int d = 0; d < 3; ++d)
      if (mid_percent < cumulative[d]) {
        home = devices[d];
        break;
      }
    homes.push_back(home);
  }
  return homes;
}

double FlexGenSubLayer::bytes_on(Tier t) const {
  double sum = 0;
  for (const auto& x : tensors)
    if (x.home == t) sum += x.bytes;
  return sum;
}

double FlexGenSubLayer::elements() const {
  double sum = 0;
  for (const auto& x : tensors) sum += x.elements;
  return sum;
}

double FlexGenSubLayer::matrix_elements() const {
  double sum = 0;
  for (const auto& x : tensors)
    if (x.matrix) sum += x.elements;
  return sum;
}

std::vector<FlexGenSubLayer> flexgen_sublayers(const LlmSpec& m, const FlexGenPolicy& fg) {
  const double h = m.hidden, f = m.ffn, v = m.vocab;
  auto place = [&](FlexGenSubLayer::Kind kind, int layer, std::vector<FlexGenTensor> tensors) {
    std::vector<double> elements;
    for (const auto& t : tensors) elements.push_back(t.elements);
    const auto homes =
        flexgen_tensor_homes(elements, fg.w_disk_percent(), fg.w_cpu_percent, fg.w_gpu_percent);
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      auto& t = tensors[i];
      t.home = homes[i];
      // Only matrices are compressed (init_weight_list: tensors with fewer than 2 dims never are);
      // compression pads the grouped dimension to a multiple of 64, negligible for OPT's shapes.
      t.bytes =
          t.elements * (t.matrix && fg.compress_weight ? kFlexGenCompressedBytesPerElem : 2.0);
    }
    return FlexGenSubLayer{kind, layer, std::move(tensors)};
  };
  auto matrix = [](const char* name, double e) {
    return FlexGenTensor{name, e, true, 0, Tier::kGpu};
  };
  auto vector = [](const char* name, double e) {
    return FlexGenTensor{name, e, false, 0, Tier::kGpu};
  };

  std::vector<FlexGenSubLayer> out;
  out.reserve(2 * static_cast<std::size_t>(m.layers) + 2);
  // InputEmbed.init_weight: token embedding (v, h), learned positions (max_seq_len + 2, h).
  out.push_back(place(
      FlexGenSubLayer::Kind::kInputEmbed, -1,
      {matrix("embed_tokens", v * h), matrix("embed_positions", (m.max_positions + 2.0) * h)}));
  for (int l = 0; l < m.layers; ++l) {
    // SelfAttention.init_weight: q, k, v, out projections with their biases, then the layer norm.
    out.push_back(place(
        FlexGenSubLayer::Kind::kAttention, l,
        {matrix("q_proj", h * h), vector("q_bias", h), matrix("k_proj", h * h), vector("k_bias", h),
         matrix("v_proj", h * h), vector("v_bias", h), matrix("out_proj", h * h),
         vector("out_bias", h), vector("ln_weight", h), vector("ln_bias", h)}));
    // MLP.init_weight: fc1 (ffn x h), its bias, fc2 (h x ffn), its bias, the layer norm.
    out.push_back(place(FlexGenSubLayer::Kind::kMlp, l,
                        {matrix("fc1", f * h), vector("fc1_bias", f), matrix("fc2", h * f),
                         vector("fc2_bias", h), vector("ln_weight", h), vector("ln_bias", h)}));
  }
  // OutputEmbed.init_weight: the final layer norm, then its own copy of the token embedding.
  out.push_back(place(
      FlexGenSubLayer::Kind::kOutputEmbed, -1,
      {vector("final_ln_weight", h), vector("final_ln_bias", h), matrix("embed_tokens", v * h)}));
  return out;
}

Placement flexgen_weight_placement(const std::vector<FlexGenSubLayer>& sublayers) {
  double gpu = 0, cpu = 0, disk = 0;
  for (const auto& s : sublayers) {
    gpu += s.bytes_on(Tier::kGpu);
    cpu += s.bytes_on(Tier::kCpu);
    disk += s.bytes_on(Tier::kNvme);
  }
  const double total = gpu + cpu + disk;
  Placement p;
  if (total <= 0) return p;
  p.gpu = gpu / total;
  p.cpu = cpu / total;
  p.nvme = disk / total;
  return p;
}

FlexGenCacheSplit flexgen_cache_split(const FlexGenPolicy& fg, int heads) {
  FlexGenCacheSplit s;
  const int gbs = fg.gpu_batch_size;
  if (fg.cache_gpu_percent >= 100) {
    s.gpu_seqs = gbs;
  } else if (fg.cache_cpu_percent >= 100) {
    s.cpu_seqs = gbs;
  } else if (fg.cache_disk_percent() >= 100) {
    s.disk_seqs = gbs;
  } else {
    // Lengths along dimension 1 (batch x heads), floored to multiples of n_head.
    const double total = double(gbs) * heads;
    auto segment = [&](double pct) {
      const auto len = static_cast<long long>(total * pct / 100);
      return static_cast<int>(len / heads);
    };
    // With no disk share the CPU takes the rest of the GPU's cut.
    s.gpu_seqs = segment(fg.cache_gpu_percent);
    s.cpu_seqs = fg.cache_disk_percent() <= 0 ? gbs - s.gpu_seqs : segment(fg.cache_cpu_percent);
    s.disk_seqs = gbs - s.gpu_seqs - s.cpu_seqs;
  }
  return s;
}

}  // namespace tiersim
