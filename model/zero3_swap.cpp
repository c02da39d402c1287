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
      throw ModelError("zero3_v07_swap_schedule: the hooks must fetch parameters 0, 1, 2 ... in order");
  }
  Zero3SwapCoordinator c(param_elements, swap_buffers);
  for (int p : hook_params) c.hook(p, z);
  return c.take();
}

std::optional<std::vector<std::vector<int>>> zero3_hook_steps(const LlmSpec& m,
                                                              const WeightModule& mod) {
  using Hooks = std::vector<std::vector<int>>;
  // The module's tensors by name (model/layout.cpp weight_modules); a name missing: unknown.
  const auto at = [&](const char* name) {
    for (std::size_t i = 0; i < mod.tensors.size(); ++i)
      if (std::strcmp(mod.tensors[i].name, name) == 0) return static_cast<int>(i);
    return -1;
  };
  switch (mod.kind) {
    case WeightModule::Kind::kEmbedding:  // the embedding's own hook
      if (at("embedding") < 0) return std::nullopt;
      return Hooks{{at("embedding")}};
    case WeightModule::Kind::kHead:  // the final layer norm's hook (persistent), then lm_head's
      if (at("lm_head") < 0) return std::nullopt;
      return Hooks{{}, {at("lm_head")}};
    case WeightModule::Kind::kLayer: break;
  }
  const int q = at("q_proj"), k = at("k_proj"), v = at("v_proj"), o = at("o_proj"),
            up = at("ffn_up"), down = at("ffn_down");
  if (q < 0 || k < 0 || v < 0 || o < 0 || up < 0 || down < 0 || m.experts > 1 ||
      at("ffn_gate") >= 0)
    return std::nullopt;
  if (m.family == "opt")
    // transformers OPTDecoderLayer.forward (pre-LN, the 30B and 175B configs): the layer, its
    // self_attn_layer_norm, self_attn (OPTAttention: q_proj, k_proj, v_proj, out_proj in that
    // order), final_layer_norm, fc1, activation_fn (an nn.Module from ACT2FN), fc2.
    return Hooks{{}, {}, {}, {q}, {k}, {v}, {o}, {}, {up}, {}, {down}};
  if (m.family == "bloom")
    // transformers BloomBlock.forward: the block, input_layernorm, self_attention
    // (BloomAttention: query_key_value, one parameter for q, k and v; attention_dropout, an
    // nn.Dropout; dense), post_attention_layernorm, mlp (BloomMLP: dense_h_to_4h, gelu_impl, a
    // BloomGelu module, dense_4h_to_h).
    return Hooks{{}, {}, {}, {q, k, v}, {}, {o}, {}, {}, {up}, {}, {down}};
  return std::nullopt;
}

}  // namespace tiersim
