#include "model/zero3_swap.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "model/errors.hpp"

namespace tiersim {
namespace {

// The coordinator's state over one pass (the names follow partitioned_param_coordinator.py and
// partitioned_param_swapper.py, v0.7.2).
class Zero3SwapCoordinator {
 public:
  Zero3SwapCoordinator(std::span<const double> elements, int swap_buffers)
      : elements_(elements),
        state_(elements.size(), State::kOnNvme),
        gathered_ahead_(elements.size(), false),
        buffers_(std::max(1, swap_buffers)) {}

  // fetch_sub_module for one hook (`param` -1: none of its own), then its release.
  void hook(int param, const Zero3Settings& z) {
    const std::size_t n = elements_.size();
    if (param >= 0) {
      const auto p = static_cast<std::size_t>(param);
      if (state_[p] != State::kGathered) gather(p);
      gathered_ahead_[p] = false;
      next_ = std::max(next_, p + 1);  // the hook pops its own parameter off the trace's queue
    }
    if (z.prefetch_bucket_size > 0) {
      // The gather prefetch: what max_live leaves beside the gathered parameters, at most a bucket.
      const double room = std::min(z.max_live_parameters - live_elements_, z.prefetch_bucket_size);
      double prefetching = 0;
      while (next_ < n && prefetching < room) {
        if (state_[next_] == State::kOnNvme) break;  // nvme prefetch is handled elsewhere
        if (state_[next_] != State::kGathered) {
          gather(next_);
          gathered_ahead_[next_] = true;
          prefetching += elements_[next_];
        }
        ++next_;
      }
      // __prefetch_nvme_param_partitions: numel_in_flight is what is gathered and not yet used.
      double in_flight = 0;
      for (std::size_t j = 0; j < n; ++j)
        if (gathered_ahead_[j]) in_flight += elements_[j];
      double considered = 0;
      std::vector<std::size_t> swap_in;
      const int free_buffers = buffers_ - held_;
      for (std::size_t j = next_; j < n; ++j) {
        if (considered > 2 * in_flight || static_cast<int>(swap_in.size()) >= free_buffers) break;
        if (state_[j] == State::kOnNvme) swap_in.push_back(j);
        considered += elements_[j];
      }
      for (std::size_t j : swap_in) issue(j);
    }
    if (param >= 0) {  // release_sub_module: the partition and its swap buffer go
      --held_;
      live_elements_ -= elements_[static_cast<std::size_t>(param)];
    }
  }

  std::vector<Zero3SwapAction> take() { return std::move(actions_); }

 private:
  enum class State { kOnNvme, kReading, kInBuffer, kGathered };

  void issue(std::size_t p) {
    actions_.push_back({Zero3SwapAction::Kind::kIssue, static_cast<int>(p)});
    state_[p] = State::kReading;
    pending_.push_back(p);
    ++held_;
  }
  void wait_reads() {
    if (pending_.empty()) return;
    actions_.push_back({Zero3SwapAction::Kind::kWait, -1});
    for (std::size_t p : pending_) state_[p] = State::kInBuffer;
    pending_.clear();
  }
  // all_gather_coalesced: _ensure_availability_of_partitioned_params (a synchronous swap-in, or a
  // wait for the reads in flight), then the copy to the GPU.
  void gather(std::size_t p) {
    if (state_[p] == State::kOnNvme) issue(p);
    if (state_[p] == State::kReading) wait_reads();
    actions_.push_back({Zero3SwapAction::Kind::kGather, static_cast<int>(p)});
    state_[p] = State::kGathered;
    live_elements_ += elements_[p];
  }

  std::span<const double> elements_;
  std::vector<State> state_;
  std::vector<bool> gathered_ahead_;  // in __inflight_param_registry: gathered, not yet used
  std::vector<std::size_t> pending_;  // reads issued and not yet waited for
  std::vector<Zero3SwapAction> actions_;
  std::size_t next_ = 0;      // the head of the trace's parameter queue
  double live_elements_ = 0;  // __n_available_params
  int buffers_ = 1, held_ = 0;
};

}  // namespace

std::vector<Zero3SwapAction> zero3_v07_swap_schedule(std::span<const double> param_elements,
                                                     std::span<const int> hook_params,
                                                     const Zero3Settings& z, int swap_buffers) {
  const auto n = static_cast<int>(param_elements.size());
  int expected = 0;  // parameters are numbered in the order of their hooks
  for (int p : hook_params) {
    if (p < 0) continue;
    if (p != expected++ || p >= n)
      throw ModelError(
          "zero3_v07_swap_schedule: the hooks must fetch parameters 0, 1, 2 ... in order");
  }
  Zero3SwapCoordinator c(param_elements, swap_buffers);
  for (int p : hook_params) c.hook(p, z);
  return c.take();
}

namespace {

// The module's tensor index by name (model/layout.cpp weight_modules); -1: missing.
int tensor_index(const WeightModule& mod, const char* name) {
  for (std::size_t i = 0; i < mod.tensors.size(); ++i)
    if (std::strcmp(mod.tensors[i].name, name) == 0) return static_cast<int>(i);
  return -1;
}

// A layer of OPT or BLOOM as its forward pre-hooks fire under Hugging Face transformers, each
// hook with the parameters of its submodule (weight, then bias), the layer norms' too; nullopt
// for any other layer (another family, MoE, a gated FFN).
std::optional<std::vector<std::vector<Zero3Param>>> hf_layer_params(const LlmSpec& m,
                                                                    const WeightModule& mod) {
  const auto at = [&](const char* name) { return tensor_index(mod, name); };
  const int q = at("q_proj"), k = at("k_proj"), v = at("v_proj"), o = at("o_proj"),
            up = at("ffn_up"), down = at("ffn_down");
  if (mod.kind != WeightModule::Kind::kLayer || q < 0 || k < 0 || v < 0 || o < 0 || up < 0 ||
      down < 0 || m.experts > 1 || at("ffn_gate") >= 0 ||
      (m.family != "opt" && m.family != "bloom"))
    return std::nullopt;
  const auto elements = [&](int i) { return mod.tensors[static_cast<std::size_t>(i)].elements; };
  // The biases and the layer norms' parameters are the layer's "norms_biases".
  const int small = at("norms_biases");
  const std::vector<int> small_of = small < 0 ? std::vector<int>{} : std::vector<int>{small};
  const double h = m.hidden;
  const auto bias = [&](double n) { return Zero3Param{n, small_of}; };
  const auto weight = [&](int i) { return Zero3Param{elements(i), {i}}; };
  const std::vector<Zero3Param> norm = {bias(h), bias(h)};
  if (m.family == "opt")
    // transformers OPTDecoderLayer.forward (pre-LN, the 6.7B, 30B and 175B configs): the layer,
    // its self_attn_layer_norm, self_attn (OPTAttention: q_proj, k_proj, v_proj, out_proj in that
    // order), final_layer_norm, fc1, activation_fn (an nn.Module from ACT2FN), fc2.
    return std::vector<std::vector<Zero3Param>>{{},
                                                norm,
                                                {},
                                                {weight(q), bias(m.q_dim())},
                                                {weight(k), bias(m.kv_dim())},
                                                {weight(v), bias(m.kv_dim())},
                                                {weight(o), bias(h)},
                                                norm,
                                                {weight(up), bias(m.ffn)},
                                                {},
                                                {weight(down), bias(h)}};
  // transformers BloomBlock.forward: the block, input_layernorm, self_attention (BloomAttention:
  // query_key_value, one parameter for q, k and v; attention_dropout, an nn.Dropout; dense),
  // post_attention_layernorm, mlp (BloomMLP: dense_h_to_4h, gelu_impl, a BloomGelu module,
  // dense_4h_to_h).
  const Zero3Param qkv{elements(q) + elements(k) + elements(v), {q, k, v}};
  return std::vector<std::vector<Zero3Param>>{{},
                                              norm,
                                              {},
                                              {qkv, bias(m.q_dim() + 2 * m.kv_dim())},
                                              {},
                                              {weight(o), bias(h)},
                                              norm,
                                              {},
                                              {weight(up), bias(m.ffn)},
                                              {},
                                              {weight(down), bias(h)}};
}

}  // namespace

std::optional<std::vector<std::vector<int>>> zero3_hook_steps(const LlmSpec& m,
                                                              const WeightModule& mod,
                                                              const Zero3Settings& z) {
  using Hooks = std::vector<std::vector<int>>;
  const auto at = [&](const char* name) { return tensor_index(mod, name); };
  switch (mod.kind) {
    case WeightModule::Kind::kEmbedding:  // the embedding's own hook
      if (at("embedding") < 0) return std::nullopt;
      return Hooks{{at("embedding")}};
    case WeightModule::Kind::kHead:  // the final layer norm's hook (persistent), then lm_head's
      if (at("lm_head") < 0) return std::nullopt;
      return Hooks{{}, {at("lm_head")}};
    case WeightModule::Kind::kLayer:
      break;
  }
  // The layer's hooks, each with the parameters it fetches: the biases and norms
  // ("norms_biases") only where they do not persist.
  const auto params = hf_layer_params(m, mod);
  if (!params) return std::nullopt;
  int small = at("norms_biases");
  if (small >= 0 && !zero3_persistent(mod.tensors[static_cast<std::size_t>(small)], z)) small = -1;
  Hooks hooks;
  for (const auto& hook : *params) {
    hooks.emplace_back();
    // A norm's weight and bias are two parameters of the one "norms_biases" tensor.
    for (const Zero3Param& p : hook)
      for (int t : p.tensors)
        if (t != small &&
            std::find(hooks.back().begin(), hooks.back().end(), t) == hooks.back().end())
          hooks.back().push_back(t);
  }
  return hooks;
}

std::vector<std::vector<Zero3Param>> zero3_module_params(const LlmSpec& m,
                                                         const WeightModule& mod) {
  using Hooks = std::vector<std::vector<Zero3Param>>;
  const auto of = [&](const char* name) {
    const int i = tensor_index(mod, name);
    return i < 0 ? std::vector<int>{} : std::vector<int>{i};
  };
  const auto elements = [&](const char* name) {
    const int i = tensor_index(mod, name);
    return i < 0 ? 0.0 : mod.tensors[static_cast<std::size_t>(i)].elements;
  };
  const bool opt = m.family == "opt", bloom = m.family == "bloom";
  const double h = m.hidden;
  if (opt || bloom) switch (mod.kind) {
      case WeightModule::Kind::kEmbedding: {
        if (tensor_index(mod, "embedding") < 0) break;
        const double positions = m.learned_positions ? m.max_positions * h : 0.0;
        const Zero3Param tokens{elements("embedding") - positions, of("embedding")};
        if (opt)  // OPTForCausalLM, OPTModel, OPTDecoder, embed_tokens, embed_positions
          return Hooks{{}, {}, {}, {tokens}, {Zero3Param{positions, of("embedding")}}};
        // BloomForCausalLM, BloomModel, word_embeddings, word_embeddings_layernorm (not among
        // weight_modules' tensors)
        return Hooks{{}, {}, {tokens}, {Zero3Param{h, {}}, Zero3Param{h, {}}}};
      }
      case WeightModule::Kind::kHead: {
        if (tensor_index(mod, "lm_head") < 0) break;
        // The final layer norm (OPTDecoder final_layer_norm, Bloom ln_f), then lm_head (no bias).
        const Zero3Param norm{h, of("final_norm")};
        return Hooks{{norm, norm}, {Zero3Param{elements("lm_head"), of("lm_head")}}};
      }
      case WeightModule::Kind::kLayer:
        if (auto layer = hf_layer_params(m, mod)) return *layer;
        break;
    }
  // Any module not described: one hook per tensor, the tensor one parameter.
  Hooks hooks;
  for (std::size_t i = 0; i < mod.tensors.size(); ++i)
    hooks.push_back({Zero3Param{mod.tensors[i].elements, {static_cast<int>(i)}}});
  return hooks;
}

std::vector<int> zero3_v07_gather_call_sizes(const std::vector<std::vector<double>>& hooks,
                                             const Zero3Settings& z) {
  std::vector<double> elements;
  std::vector<std::size_t> hook_end;  // one past each hook's last parameter
  for (const auto& hook : hooks) {
    elements.insert(elements.end(), hook.begin(), hook.end());
    hook_end.push_back(elements.size());
  }
  const std::size_t n = elements.size();
  std::vector<bool> persistent(n), gathered(n);
  for (std::size_t i = 0; i < n; ++i) {
    WeightTensor t{};
    t.elements = elements[i];
    persistent[i] = zero3_persistent(t, z);
    gathered[i] = persistent[i];  // on the GPU since their first gather
  }
  std::vector<int> sizes(n, 0);
  double live = 0;       // __n_available_params
  std::size_t next = 0;  // the head of the trace's parameter queue
  const auto call = [&](const std::vector<std::size_t>& params) {
    for (std::size_t p : params) {
      sizes[p] = static_cast<int>(params.size());
      gathered[p] = true;
      live += elements[p];
    }
  };
  std::size_t begin = 0;
  for (std::size_t h = 0; h < hooks.size(); ++h) {
    const std::size_t end = hook_end[h];
    std::vector<std::size_t> own;
    for (std::size_t p = begin; p < end; ++p)
      if (!gathered[p]) own.push_back(p);
    if (!own.empty()) call(own);
    next = std::max(next, end);  // the hook's own parameters leave the queue
    if (z.prefetch_bucket_size > 0) {
      const double room = std::min(z.max_live_parameters - live, z.prefetch_bucket_size);
      double taken = 0;
      std::vector<std::size_t> prefetch;
      while (next < n && taken < room) {
        if (!gathered[next]) {
          prefetch.push_back(next);
          taken += elements[next];
        }
        ++next;
      }
      if (!prefetch.empty()) call(prefetch);
    }
    for (std::size_t p = begin; p < end; ++p)  // release_sub_module
      if (!persistent[p]) {
        gathered[p] = false;
        live -= elements[p];
      }
    begin = end;
  }
  return sizes;
}

double zero3_v07_gather_copies(int call_params, int ranks) {
  const double r = std::max(1, ranks);
  if (call_params <= 0) return 0;
  if (call_params == 1) return r == 1 ? 1.0 : 0.0;
  return 1.0 + 1.0 / r;
}

std::array<std::vector<double>, 3> zero3_v07_tensor_gather_copies(
    const LlmSpec& m, const std::vector<WeightModule>& modules, const Zero3Settings& z, int ranks) {
  // The pass's hooks, module after module (the prefetch crosses module boundaries), and where
  // each parameter's elements go.
  std::vector<std::vector<double>> hooks;
  struct Owner {
    std::size_t module;
    std::vector<int> tensors;
    double elements;
  };
  std::vector<Owner> owners;
  for (std::size_t mi = 0; mi < modules.size(); ++mi)
    for (const auto& hook : zero3_module_params(m, modules[mi])) {
      hooks.emplace_back();
      for (const Zero3Param& p : hook) {
        hooks.back().push_back(p.elements);
        owners.push_back({mi, p.tensors, p.elements});
      }
    }
  const std::vector<int> sizes = zero3_v07_gather_call_sizes(hooks, z);
  // Elements-weighted copies of each tensor, summed over the modules of its kind.
  std::array<std::vector<double>, 3> copies, weight;
  for (const auto& mod : modules) {
    const auto k = static_cast<std::size_t>(mod.kind);
    copies[k].resize(std::max(copies[k].size(), mod.tensors.size()), 0.0);
    weight[k].resize(copies[k].size(), 0.0);
  }
  for (std::size_t i = 0; i < owners.size(); ++i) {
    const auto k = static_cast<std::size_t>(modules[owners[i].module].kind);
    for (int t : owners[i].tensors) {
      if (t < 0) continue;
      const auto ti = static_cast<std::size_t>(t);
      copies[k][ti] += owners[i].elements * zero3_v07_gather_copies(sizes[i], ranks);
      weight[k][ti] += owners[i].elements;
    }
  }
  for (std::size_t k = 0; k < 3; ++k)
    for (std::size_t t = 0; t < copies[k].size(); ++t)
      copies[k][t] = weight[k][t] > 0 ? copies[k][t] / weight[k][t] : 0.0;
  return copies;
}

}  // namespace tiersim
