#pragma once
// The cost of one serving iteration (one forward pass over every request the scheduler put in
// it), from the same per-layer rules as the inference workload (model/perf.hpp): each layer's
// weights come from their tier (GPU memory, or streamed from host DRAM or NVMe once per iteration
// and shared by every request in it) while the previous layer computes; each layer's kernels run
// at the roofline for the iteration's tokens plus attention over the requests' KV cache.
#include <optional>
#include <vector>

#include "model/perf.hpp"
#include "model/scenario.hpp"
#include "model/weight_stream.hpp"

namespace tiersim::sim {

// What an iteration processes. Prefill chunks are kept one by one (their attention's rate depends
// on each chunk's length, model/perf.hpp prefill_attention_s) and counted by their tokens and the
// earlier chunks' KV they read; decodes by their count and the sum of their context lengths.
struct IterationShape {
  std::vector<PrefillChunk> prefill_chunks;  // added with add_prefill
  double prefill_tokens = 0;                 // sum over chunks of queries x sequences
  double prefill_kv_read_tokens = 0;         // sum over chunks of offset x sequences
  // A chunk of `queries` new tokens after `offset` cached ones, for each of `sequences` sequences.
  void add_prefill(double queries, double offset, double sequences = 1) {
    prefill_chunks.push_back({queries, offset, sequences});
    prefill_tokens += queries * sequences;
    prefill_kv_read_tokens += offset * sequences;
  }
  double decodes = 0;
  // Sum over the decodes of the keys each attends to: its context length, the new token
  // included (IterationModel::window_context on a sliding-window model).
  double decode_context_tokens = 0;
  double sampled = 0;                // requests that produce a token (the head's rows)
  // KV cache copied for swap preemption (workload.preemption: swap), in tokens of whole blocks:
  // out to host DRAM and back in before the forward pass.
  double swap_out_tokens = 0;
  double swap_in_tokens = 0;
  // Prefix caching with host DRAM and NVMe tiers (kv_tiers.hpp), in tokens of whole blocks: cached
  // prefixes loaded to the GPU before the forward pass, and blocks copied down to the tiers.
  double kv_load_host_tokens = 0;
  double kv_load_nvme_tokens = 0;
  double kv_store_host_tokens = 0;
  double kv_store_nvme_tokens = 0;
  double tokens() const { return prefill_tokens + decodes; }
};

struct IterationCost {
  double time_s = 0;  // wall time of the iteration
  double gpu_s = 0;   // kernel time on each GPU of the replica
  // Share of the GPU's dynamic power range its kernels draw over gpu_s: each module's
  // (embedding, layers, head) under the board's power limit (model/power.hpp gpu_power_limited),
  // weighted by its time; gpu_s is already at the clock that limit allows.
  double gpu_load = 1;
  double peer_s = 0;  // tensor-parallel all-reduce time
  double h2d_s = 0;   // PCIe host-to-device time of the streamed weights and swapped-in KV
  double d2h_s = 0;   // PCIe device-to-host time of swapped-out KV
  double nvme_s = 0;  // NVMe array time of the streamed weights and the KV tier's reads and writes
  // Share of the array's dynamic power range drawn over nvme_s (model/power.hpp nvme_load of each
  // transfer, weighted by its time).
  double nvme_load = 1;
  double cpu_s = 0;   // CPU time staging pageable copies
  // Share of the host's cores busy over cpu_s (model/power.hpp cpu_core_load): the driver's
  // staging memcpy runs on the calling thread, one core.
  double cpu_load = 1;
  double kv_load_s = 0;  // of time_s: loading cached KV prefixes from host DRAM and NVMe
  // The KV tiers' traffic (prefix caching), each part its own work in the run's breakdown
  // (sim/workloads/serving/names.hpp):
  double weights_h2d_s = 0;    // of h2d_s: the streamed weights and swapped-in KV
  double swap_out_d2h_s = 0;   // of d2h_s: swapped-out KV
  double weights_nvme_s = 0;   // of nvme_s: the streamed weights
  double kv_host_load_s = 0;   // of h2d_s: cached blocks copied from host DRAM to the GPUs
  double kv_nvme_copy_s = 0;   // of h2d_s: blocks read from NVMe, copied on to the GPUs
  double kv_host_store_s = 0;  // of d2h_s: computed blocks copied down to host DRAM
  double kv_nvme_read_s = 0;   // of nvme_s: cached blocks read from the drives
  double kv_nvme_write_s = 0;  // of nvme_s: blocks written to the drives
  // Shares of the array's dynamic power range (model/power.hpp nvme_load) of its three parts:
  // the weights' reads (nvme_s less the KV tier's), the KV tier's reads and its writes.
  double weights_nvme_load = 1, kv_nvme_read_load = 1, kv_nvme_write_load = 1;
};

class IterationModel {
 public:
  IterationModel(const Scenario& s, const ExecutionModel& em);
  IterationCost cost(const IterationShape& shape) const;
  // The keys a decode of a sequence at `context` tokens attends to, on average over the layers
  // (IterationShape::decode_context_tokens adds these up): the context, or on a sliding-window
  // model whose stack reads only the window, the window (or a chunked layer's own chunk) on the
  // sliding layers (model/stack.hpp stack_window_context; window_reads_ is its
  // stack_reads_window, worked out once).
  // Whether window_context is ever other than the context itself.
  bool windows() const { return window_reads_; }
  double window_context(double context) const {
    return window_reads_ ? mean_attended_context(s_.model, context) : context;
  }
  // The tokens of that sequence each layer holds in the block pool, on average: at most the window
  // on the sliding layers where the stack keeps only the window, or the context itself where the
  // run's KV tiers or the model's full-attention layers turn that off (model/stack.hpp
  // stack_cached_context; window_blocks_ is its stack_caches_window, worked out once).
  double cached_context(double context) const {
    return window_blocks_ ? mean_window_context(s_.model, context) : context;
  }
  // Weight bytes streamed per iteration to each GPU, and the NVMe model's read rate (0 without
  // NVMe), for the metrics.
  double streamed_bytes_per_gpu() const { return streamed_bytes_; }
  double nvme_read_gbps() const { return nvme_read_gbps_; }

 private:
  // Seconds one GPU spends copying `tokens` (whole KV tier blocks) of the KV cache between host
  // DRAM and the GPU at `bytes_per_s`: one pinned copy per block (model/perf.hpp pinned_copies_s).
  double kv_copies_s(double tokens, double bytes_per_s) const;
  const Scenario& s_;
  ExecutionModel em_;
  double tp_ = 1;
  double kv_token_layer_bytes_ = 0;  // per GPU
  // The GPUs of a replica that share one token's cache entry (KvCacheShape::split): the
  // tensor-parallel degree, or 1 where every GPU keeps MLA's latent whole.
  double kv_entry_split_ = 1;
  bool latent_kv_ = false;            // MLA's latent cache, attended to in the absorbed form
  bool window_reads_ = false;         // sliding layers whose stack reads only the window
  bool window_blocks_ = false;        // ... and keeps only the window in the block pool
  double h2d_bps_ = 0, d2h_bps_ = 0;  // pinned copies over each GPU's PCIe link
  double embedding_elements_ = 0, head_elements_ = 0, layer_elements_ = 0;
  double dequant_s_ = 0;
  double peer_bps_ = 0;
  // Each module's fetch by the fetch process alone (model/weight_stream.hpp module_stream_time).
  // layer_: a layer with the experts (any layer of a model whose layers are alike);
  // dense_layer_: one of an MoE's dense layers, when it has them.
  ModuleStreamTime embedding_, layer_, head_, dense_layer_;
  // An MoE's layers of each kind (0 dense: the layers are alike), the first and last layer's
  // kind, each kind's model (model/llm.hpp layer_model: 0 dense, 1 with the experts) and
  // dequantisation, and how often a layer of kind a is followed by one of kind b.
  double expert_layers_ = 0, dense_layers_ = 0;
  bool first_layer_dense_ = false, last_layer_dense_ = false;
  std::optional<LlmSpec> kind_model_[2];
  double kind_dequant_s_[2] = {0, 0};
  double pairs_[2][2] = {{0, 0}, {0, 0}};
  double dense_layer_nvme_bytes_ = 0;
  // A per-layer figure summed over the layers, each kind its own (a layer with the experts, a
  // dense one: the latter unused when the layers are alike); or one part of every layer's fetch.
  double layers_sum(double with_experts, double dense) const;
  double layers_sum(double ModuleStreamTime::*part) const;
  double streamed_bytes_ = 0;
  // [bytes] each module's weights read from the NVMe array (all tensor-parallel shares)
  double embedding_nvme_bytes_ = 0, layer_nvme_bytes_ = 0, head_nvme_bytes_ = 0;
  double nvme_read_gbps_ = 0;
  NvmeArrayTiming kv_nvme_;  // the array at the KV tier's transfer size (one block, one layer)
};

}  // namespace tiersim::sim
