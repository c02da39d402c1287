// FlexGen's own runtime (policy.schedule: flexgen), as FMInference/FlexiGen flexgen/flex_opt.py
// runs it on one GPU.
//
// Loop order (OptLM.generation_loop_overlap_multi_batch / _single_batch / _normal): tokens, then
// FlexGen's layers (input embedding, each transformer layer's attention and MLP as separate
// layers with sep_layer, the output embedding), then GPU batches. With overlap, each
// (layer j, GPU batch k) step issues load_weight(j+1) (work only when k == 0), load_cache(j, k+1),
// store_cache(j, k-1), load/store of hidden states and compute(j, k), then sync(): the disk copy
// threads' queue is drained and the whole device synchronised. So a step lasts as long as its
// slowest part, and the next layer's weight prefetch overlaps only step (j, 0). Without overlap
// every part runs in turn. Every part takes its own shared resource (GPU, PCIe each way, CPU,
// disk), so parts that need the same one queue.
#include <algorithm>
#include <cmath>
#include <vector>

#include "model/capacity.hpp"
#include "model/layout.hpp"
#include "model/power.hpp"
#include "model/units.hpp"
#include "model/weight_stream.hpp"
#include "sim/workloads/inference/flexgen.hpp"
#include "sim/workloads/inference/inference.hpp"
#include "sim/workloads/inference/metrics.hpp"

namespace tiersim::sim {
namespace {

using Kind = FlexGenSubLayer::Kind;

// Starts the process `part` makes (one that counts down the latch it is given) and waits for it to
// finish: for the parts of a step that run one after another.
template <typename Part>
Task in_turn(Engine& engine, Part part) {
  Latch l(engine, 1);
  engine.spawn(part(&l));
  co_await l.wait();
}

// generation_loop_debug_multi_batch: execute_num_batches = 20 layer iterations of the first
// decode token; the cost is the mean of iterations 10 onwards.
constexpr int kFewerBatchLayers = 20;
constexpr std::size_t kFewerBatchSkip = 10;

class FlexGenSim {
 public:
  FlexGenSim(const Scenario& s, const SimOptions& o)
      : s_(s), em_(o.exec), fg_(s.policy.flexgen), m_(s.model), w_(s.inference) {
    engine_.enable_trace(o.trace);
    engine_.keep_spans(o.breakdown);
    engine_.stop_when(o.stop);
  }
  RunResult run();

 private:
  Task step(int token, int j, int k, Latch* done);
  Task weight_from_disk(int token, int j, Latch* done);
  Task weight_from_cpu(int token, int j, Flag* pinned, Latch* done);
  Task cache_from_disk(int token, int j, Latch* done);
  Task cache_from_cpu(int token, int j, Flag* pinned, Latch* done);
  Task store_cache(int token, int j, Latch* done);
  Task move_hidden(int token, int j, bool to_gpu, Latch* done);
  Task compute(int token, int j, Latch* done);
  Task default_stream(int token, int j, bool hout, bool hin, Latch* done);
  Task run_all();
  double host_copy_s(double bytes) const;
  double unpinned_weight_bytes(int j) const;
  double prefix_elems(int token) const;
  // Seconds the disk takes to deliver `bytes` (0 when the page cache holds the disk's data) and
  // to take `bytes` written: one transfer at the array's sustained rate at its operating point
  // (model/weight_stream.hpp nvme_transfer_timing). Through the page cache, not O_DIRECT: the
  // kernel's readahead and writeback keep requests in flight, and a transfer waits only for the
  // first readahead window (a fraction of a millisecond), not for a first request of the
  // reader's block size at depth one as a direct read does (NvmeArrayTiming::read_s).
  double disk_read_s(double bytes) const {
    if (disk_cached_) return 0.0;
    return bytes / units::gbps_to_bytes_per_s(nvme_transfer_timing(s_, bytes).read_gbps);
  }
  double disk_write_s(double bytes) const {
    return bytes / units::gbps_to_bytes_per_s(nvme_transfer_timing(s_, bytes).write_gbps);
  }
  // `tag` for the drives' part of a disk transfer of `bytes` taking `s`: its load on them, the
  // rate it achieves over their rated rate that way (model/power.hpp nvme_load).
  Tag disk_tag(Tag tag, IoDirection dir, double bytes, double s) const {
    tag.load = nvme_load(s_.hardware.nvme, dir, bytes, s);
    return tag;
  }

  const Scenario& s_;
  ExecutionModel em_;
  const FlexGenPolicy& fg_;
  const LlmSpec& m_;
  const InferenceWorkload& w_;
  Engine engine_;
  Resource* gpu_ = nullptr;
  Resource* h2d_ = nullptr;
  Resource* d2h_ = nullptr;
  Resource* cpu_ = nullptr;
  Resource* disk_ = nullptr;
  std::vector<FlexGenSubLayer> subs_;
  FlexGenCacheSplit split_;
  bool disk_cached_ = false;
  bool cpu_attention_ = false;     // decode attention over the off-GPU cache runs on the CPU
  double cache_elem_bytes_ = 2.0;  // as stored (4-bit group-wise when compressed)
  // The GPU as decode's GEMMs see it: one GPU batch of tokens (M = gpu_batch_size) runs at the
  // board's small-M rate where the catalog gives one (GpuSpec::fp16_decode_achieved_tflops).
  GpuSpec decode_gpu_;
  double prefill_end_s_ = 0;
  std::vector<double> first_decode_layer_s_;  // each layer's time in the first decode token
  double cpu_attention_s_ = 0;
  double page_cache_bytes_ = 0;
};

// How FlexGen moves weights and cache (smart_copy -> general_copy in flexgen/pytorch_backend.py):
// - a pinned CPU tensor goes to the GPU by an async H2D copy on a side stream;
// - an unpinned CPU tensor is first copied into fresh pinned memory by src.pin_memory(), on the
//   main Python thread, before the async copy is issued: that host copy does not overlap the
//   step's compute, which the same thread launches afterwards;
// - a disk tensor (an mmap'd .npy file, TorchDisk) is handled by one of the 4 copy threads
//   (copy_worker_func): read through the page cache, copied into the thread's pinned relay, then
//   sent to the GPU; sync() waits for the threads' queue;
// - with --cpu-cache-compute the cache goes into the CPU fp32 workspace instead of the GPU: a
//   plain copy_ with dtype conversion, on the main thread for a CPU cache and in a copy thread
//   for a disk cache.

// A host memory copy of `bytes` (read and written once) on the CPUs.
double FlexGenSim::host_copy_s(double bytes) const {
  return flexgen_cpu_s(s_.hardware.host, em_, 0, 2.0 * bytes);
}

double FlexGenSim::unpinned_weight_bytes(int j) const {
  double unpinned = 0;
  if (!fg_.pin_weight)
    for (const auto& t : subs_[static_cast<std::size_t>(j)].tensors)
      if (t.home == Tier::kCpu && t.matrix) unpinned += t.bytes;
  return unpinned;
}

// The copy threads' share of load_weight: the disk-homed weights of sub-layer j.
Task FlexGenSim::weight_from_disk(int token, int j, Latch* done) {
  const double bytes = subs_[static_cast<std::size_t>(j)].bytes_on(Tier::kNvme);
  const Tag tag = pass_tag(activity::kWeightsNvme, token, j);
  const double read_s = disk_read_s(bytes);
  co_await disk_->use(read_s, disk_tag(tag, IoDirection::kRead, bytes, read_s));
  co_await cpu_->use(host_copy_s(bytes), tag);
  co_await h2d_->use(bytes, pass_tag(activity::kWeightsBounce, token, j));
  done->count_down();
}

// The async H2D copy of the CPU-homed weights of sub-layer j, once the main thread has pinned
// the unpinned ones.
Task FlexGenSim::weight_from_cpu(int token, int j, Flag* pinned, Latch* done) {
  co_await pinned->wait();
  co_await h2d_->use(subs_[static_cast<std::size_t>(j)].bytes_on(Tier::kCpu),
                     pass_tag(activity::kWeightsCpu, token, j));
  done->count_down();
}

// The K/V prefix read by decode step `token` (>= 1), per sequence: K and V elements.
double FlexGenSim::prefix_elems(int token) const {
  return double(w_.prompt_tokens + token - 1) * 2.0 * m_.hidden;
}

// The copy threads' share of load_cache: the disk-homed sequences of one GPU batch.
Task FlexGenSim::cache_from_disk(int token, int j, Latch* done) {
  const double elems = split_.disk_seqs * prefix_elems(token);
  const Tag tag = pass_tag(activity::kKvToHost, token, j);
  const double read_s = disk_read_s(elems * cache_elem_bytes_);
  co_await disk_->use(read_s,
                      disk_tag(tag, IoDirection::kRead, elems * cache_elem_bytes_, read_s));
  if (cpu_attention_) {
    co_await cpu_->use(
        flexgen_cpu_s(s_.hardware.host, em_, 0, elems * kFlexGenCpuConvertBytesPerElem), tag);
  } else {
    co_await cpu_->use(host_copy_s(elems * cache_elem_bytes_), tag);
    co_await h2d_->use(elems * cache_elem_bytes_, tag);
  }
  done->count_down();
}

// Path 0: the async H2D copy of the CPU-homed sequences' prefix, once pinned by the main thread.
Task FlexGenSim::cache_from_cpu(int token, int j, Flag* pinned, Latch* done) {
  co_await pinned->wait();
  co_await h2d_->use(split_.cpu_seqs * prefix_elems(token) * cache_elem_bytes_,
                     pass_tag(activity::kKvToHost, token, j));
  done->count_down();
}

// SelfAttention.store_cache: the prompt's K/V after prefill, one new row per decode step, to the
// cache's home (the CPU cache is unpinned: prefill rows go through a copy thread's pinned relay).
Task FlexGenSim::store_cache(int token, int j, Latch* done) {
  const double rows = token == 0 ? double(w_.prompt_tokens) : 1.0;
  const double per_seq = rows * 2.0 * m_.hidden * cache_elem_bytes_;
  const double off = (split_.cpu_seqs + split_.disk_seqs) * per_seq;
  const Tag tag = pass_tag(activity::kKvOffload, token, j);
  if (off > 0) {
    co_await d2h_->use(off, tag);
    if (token == 0) co_await cpu_->use(host_copy_s(off), tag);
  }
  const double disk = split_.disk_seqs * per_seq;
  if (disk > 0) {
    const double write_s = disk_write_s(disk);
    co_await disk_->use(write_s, disk_tag(tag, IoDirection::kWrite, disk, write_s));
  }
  done->count_down();
}

// load_hidden / store_hidden with activations homed on the CPU: one GPU batch's hidden states.
Task FlexGenSim::move_hidden(int token, int j, bool to_gpu, Latch* done) {
  const double tokens = token == 0 ? double(w_.prompt_tokens) : 1.0;
  const double bytes = fg_.gpu_batch_size * tokens * m_.hidden * 2.0;
  co_await (to_gpu ? h2d_ : d2h_)->use(bytes, pass_tag(activity::kActivations, token, j));
  done->count_down();
}

Task FlexGenSim::compute(int token, int j, Latch* done) {
  const FlexGenSubLayer& sub = subs_[static_cast<std::size_t>(j)];
  const bool prefill = token == 0;
  const GpuSpec& gpu = prefill ? s_.hardware.gpu : decode_gpu_;
  const double gbs = fg_.gpu_batch_size;
  const double s = w_.prompt_tokens;
  const double tokens = prefill ? gbs * s : gbs;
  const double h = m_.hidden;
  // Compressed weights are decompressed inside every mha / mha_gen / mlp call: once per GPU batch,
  // one decompress call per weight matrix.
  KernelTime gpu_k;  // the step's kernels: their time and what bound it (power by activity)
  if (fg_.compress_weight) {
    const auto matrices = std::count_if(sub.tensors.begin(), sub.tensors.end(),
                                        [](const auto& t) { return t.matrix; });
    gpu_k += flexgen_codec(gpu, em_, sub.matrix_elements(), kFlexGenWeightDecompressBytesPerElem,
                             double(matrices), kFlexGenDecompressKernels);
  }
  double cpu_s = 0;
  switch (sub.kind) {
    case Kind::kInputEmbed:
      gpu_k += gpu_kernel(gpu, em_, 0, tokens * h * 2.0 * 2.0);
      break;
    case Kind::kOutputEmbed: {
      // opt_output_embed: logits for every position of the prompt in prefill, one in decode.
      const double flops = 2.0 * tokens * m_.vocab * h;
      gpu_k += gpu_kernel(gpu, em_, flops, m_.vocab * h * 2.0 + tokens * m_.vocab * 2.0);
      // The step's host work waits on the sampled tokens of this GPU batch (model/perf.hpp).
      gpu_k = gpu_k.plus_gap(step_host_s(em_, gbs));
      break;
    }
    case Kind::kMlp:
      gpu_k += gpu_kernel(gpu, em_, 2.0 * tokens * 2.0 * h * m_.ffn,
                            2.0 * h * m_.ffn * 2.0 + tokens * (2.0 * m_.ffn + 4.0 * h) * 2.0);
      break;
    case Kind::kAttention: {
      const double proj_flops = 2.0 * tokens * 4.0 * h * h;
      const double proj_bytes = 4.0 * h * h * 2.0 + tokens * 10.0 * h * 2.0;
      // mha / mha_gen compress the new K and V (the prompt's in prefill, one row per sequence in
      // decode) before store_cache moves them home: TorchDevice.mha's compress_cache branch.
      if (fg_.compress_cache)
        gpu_k += flexgen_codec(gpu, em_, tokens * 2.0 * h, kFlexGenCompressBytesPerElem, 2.0,
                                 kFlexGenCompressKernels);
      if (prefill) {
        // TorchDevice.mha: q k^T and the weighted sum over the full s x s score matrix (no causal
        // skipping), the scores written, masked, softmaxed and read in fp16.
        const double attn_flops = 4.0 * gbs * s * s * h;
        const double score_bytes = gbs * m_.heads * s * s * 2.0 * 6.0;
        gpu_k += gpu_kernel(gpu, em_, proj_flops + attn_flops, proj_bytes + score_bytes);
      } else {
        const double context = s + token;
        const double elems_per_seq = context * 2.0 * h;
        const double gpu_seqs = cpu_attention_ ? split_.gpu_seqs : gbs;
        const double attn_bytes = gpu_seqs * elems_per_seq * kFlexGenGpuAttendBytesPerElem;
        if (fg_.compress_cache) {
          // mha_gen decompresses the whole cache tensor and then slices it
          // (k_cache.device.decompress(k_cache)[:src_s]): the GPU-homed cache at its full
          // allocated length, a copied-in prefix at the prefix's length.
          const double full = double(w_.prompt_tokens + w_.gen_tokens - 1) * 2.0 * h;
          const double homed = split_.gpu_seqs * full;
          const double shipped = (gpu_seqs - split_.gpu_seqs) * elems_per_seq;
          gpu_k += flexgen_codec(gpu, em_, homed + shipped, kFlexGenCacheDecompressBytesPerElem,
                                   2.0, kFlexGenDecompressKernels);
        }
        gpu_k += gpu_kernel(gpu, em_, proj_flops + 2.0 * gpu_seqs * elems_per_seq,
                              proj_bytes + attn_bytes);
        if (cpu_attention_) {
          const double cpu_seqs = split_.cpu_seqs + split_.disk_seqs;
          // mha_gen on the CPU: fp32 q k^T and weighted sum (2 FLOPs per cached K or V element)
          // over the workspace.
          cpu_s = flexgen_cpu_s(s_.hardware.host, em_, 2.0 * cpu_seqs * elems_per_seq,
                                cpu_seqs * elems_per_seq * kFlexGenCpuAttendBytesPerElem);
        }
      }
      break;
    }
  }
  // Kernel launches and Python dispatch: half a transformer layer's per sub-layer.
  gpu_k = gpu_k.plus_gap(em_.layer_overhead_s / 2);
  // As the board runs them under its power limit (model/power.hpp).
  const LimitedKernels gpu_run = gpu_power_limited(gpu, gpu_k);
  const double gpu_s = gpu_run.s;
  const Tag tag = pass_tag(activity::kCompute, token, j, gpu_run.load);
  if (cpu_s > 0) {
    // Projections on the GPU, then the CPU attention (q goes over as fp32 and the output comes
    // back: O(gbs x h) bytes), then the output projection: in turn, on the main thread.
    co_await gpu_->use(gpu_s * 0.75, tag);
    co_await d2h_->use(gbs * h * (4.0 + 2.0 * 2.0), pass_tag(activity::kKvToHost, token, j));
    cpu_attention_s_ += cpu_s;
    co_await cpu_->use(cpu_s, pass_tag(activity::kAttentionCpu, token, j));
    co_await h2d_->use(gbs * h * 4.0, pass_tag(activity::kAttentionOut, token, j));
    co_await gpu_->use(gpu_s * 0.25, tag);
  } else {
    co_await gpu_->use(gpu_s, tag);
  }
  done->count_down();
}

// The default CUDA stream of one overlapped step. store_hidden and load_hidden run outside the
// side streams' `with torch.cuda.stream(...)` blocks (flex_opt.py: only load_weight, load_cache
// and store_cache take one), so their copies are queued on the default stream ahead of
// compute_layer's kernels, which the main thread issues next: the three run in turn.
Task FlexGenSim::default_stream(int token, int j, bool hout, bool hin, Latch* done) {
  if (hout) co_await in_turn(engine_, [&](Latch* l) { return move_hidden(token, j, false, l); });
  if (hin) co_await in_turn(engine_, [&](Latch* l) { return move_hidden(token, j, true, l); });
  co_await in_turn(engine_, [&](Latch* l) { return compute(token, j, l); });
  done->count_down();
}

Task FlexGenSim::step(int token, int j, int k, Latch* done) {
  const int n_sub = static_cast<int>(subs_.size());
  const int nb = fg_.num_gpu_batches;
  const bool act_cpu = fg_.act_gpu_percent < 100;
  const bool decode = token > 0;
  const bool cache_off = split_.cpu_seqs + split_.disk_seqs > 0;
  // Which weights this step loads: with overlap the next sub-layer's (issued at k == 0; after
  // the last sub-layer, the first one of the next token), without it this sub-layer's.
  int wj = j, wtoken = token;
  bool wload = k == 0;
  if (fg_.overlap) {
    wj = j + 1 < n_sub ? j + 1 : 0;
    wtoken = j + 1 < n_sub ? token : token + 1;
    wload = k == 0 && wtoken < w_.gen_tokens;
  }
  const auto& wsub = subs_[static_cast<std::size_t>(wj)];
  const bool wdisk = wload && wsub.bytes_on(Tier::kNvme) > 0;
  const bool wcpu = wload && wsub.bytes_on(Tier::kCpu) > 0;
  // The cache this step loads and stores (OptLM.load_cache / store_cache with their corner
  // cases): with overlap, GPU batch k+1's, which after the last batch is the next layer's batch 0,
  // and GPU batch k-1's, which before the first is the previous layer's last batch. Only
  // attention layers have a cache.
  auto is_attention = [&](int jj) {
    return jj >= 0 && jj < n_sub && subs_[static_cast<std::size_t>(jj)].kind == Kind::kAttention;
  };
  int load_j = j, store_j = j;
  if (fg_.overlap) {
    load_j = k + 1 < nb ? j : j + 1;
    store_j = k >= 1 ? j : j - 1;
  }
  const bool cload = decode && cache_off && is_attention(load_j);
  const bool cdisk = cload && split_.disk_seqs > 0;
  const bool ccpu = cload && split_.cpu_seqs > 0;
  const bool cstore = cache_off && is_attention(store_j);
  // Hidden states move every step (load_hidden of the next GPU batch, store_hidden of the
  // previous one).
  const bool hin = act_cpu;
  const bool hout = act_cpu;
  const bool cpu_cache_pinned_h2d = ccpu && !cpu_attention_;

  // The main Python thread: pin copies of unpinned weights, then the CPU cache's pin copy
  // (path 0) or fp32 conversion (CPU attention), then compute_layer.
  Flag weights_pinned(engine_), cache_pinned(engine_);
  if (fg_.overlap) {
    const int count =
        1 + int(wdisk) + int(wcpu) + int(cdisk) + int(cpu_cache_pinned_h2d) + int(cstore);
    Latch parts(engine_, count);
    if (wdisk) engine_.spawn(weight_from_disk(wtoken, wj, &parts));
    if (wcpu) engine_.spawn(weight_from_cpu(wtoken, wj, &weights_pinned, &parts));
    if (cdisk) engine_.spawn(cache_from_disk(token, load_j, &parts));
    if (cpu_cache_pinned_h2d) engine_.spawn(cache_from_cpu(token, load_j, &cache_pinned, &parts));
    if (cstore) engine_.spawn(store_cache(token, store_j, &parts));
    const Tag tag = pass_tag(activity::kWeightsCpu, wtoken, wj);
    if (wcpu && unpinned_weight_bytes(wj) > 0)
      co_await cpu_->use(host_copy_s(unpinned_weight_bytes(wj)), tag);
    weights_pinned.set();
    if (ccpu) {
      const double elems = split_.cpu_seqs * prefix_elems(token);
      const Tag ctag = pass_tag(activity::kKvToHost, token, j);
      co_await cpu_->use(cpu_attention_ ? flexgen_cpu_s(s_.hardware.host, em_, 0,
                                                        elems * kFlexGenCpuConvertBytesPerElem)
                                        : host_copy_s(elems * cache_elem_bytes_),
                         ctag);
    }
    cache_pinned.set();
    engine_.spawn(default_stream(token, j, hout, hin, &parts));
    co_await parts.wait();
  } else {
    // generation_loop_normal: load_weight, then per GPU batch load_cache, load_hidden,
    // compute, store_hidden, store_cache, one after another.
    weights_pinned.set();
    cache_pinned.set();
    if (wcpu) {
      if (unpinned_weight_bytes(wj) > 0)
        co_await cpu_->use(host_copy_s(unpinned_weight_bytes(wj)),
                           pass_tag(activity::kWeightsCpu, token, wj));
      co_await in_turn(engine_,
                       [&](Latch* l) { return weight_from_cpu(token, wj, &weights_pinned, l); });
    }
    if (wdisk) {
      co_await in_turn(engine_, [&](Latch* l) { return weight_from_disk(token, wj, l); });
    }
    if (ccpu) {
      const double elems = split_.cpu_seqs * prefix_elems(token);
      co_await cpu_->use(cpu_attention_ ? flexgen_cpu_s(s_.hardware.host, em_, 0,
                                                        elems * kFlexGenCpuConvertBytesPerElem)
                                        : host_copy_s(elems * cache_elem_bytes_),
                         pass_tag(activity::kKvToHost, token, j));
      if (!cpu_attention_) {
        co_await in_turn(engine_,
                         [&](Latch* l) { return cache_from_cpu(token, j, &cache_pinned, l); });
      }
    }
    if (cdisk) {
      co_await in_turn(engine_, [&](Latch* l) { return cache_from_disk(token, j, l); });
    }
    if (hin) {
      co_await in_turn(engine_, [&](Latch* l) { return move_hidden(token, j, true, l); });
    }
    co_await in_turn(engine_, [&](Latch* l) { return compute(token, j, l); });
    if (hout) {
      co_await in_turn(engine_, [&](Latch* l) { return move_hidden(token, j, false, l); });
    }
    if (cstore) {
      co_await in_turn(engine_, [&](Latch* l) { return store_cache(token, j, l); });
    }
  }
  done->count_down();
}

Task FlexGenSim::run_all() {
  const int n_sub = static_cast<int>(subs_.size());
  // The first layer's weights are loaded before the loop (load_weight(0, 0, 0) then sync()).
  if (fg_.overlap) {
    const auto& first = subs_.front();
    const int count = int(first.bytes_on(Tier::kNvme) > 0) + int(first.bytes_on(Tier::kCpu) > 0);
    Latch l(engine_, count);
    Flag pinned(engine_);
    if (unpinned_weight_bytes(0) > 0)
      co_await cpu_->use(host_copy_s(unpinned_weight_bytes(0)),
                         pass_tag(activity::kWeightsCpu, 0, 0));
    pinned.set();
    if (first.bytes_on(Tier::kNvme) > 0) engine_.spawn(weight_from_disk(0, 0, &l));
    if (first.bytes_on(Tier::kCpu) > 0) engine_.spawn(weight_from_cpu(0, 0, &pinned, &l));
    co_await l.wait();
  }
  // --debug-mode fewer_batch (generation_loop_debug_multi_batch): the prefill in full, then the
  // first decode token's layers 0..19 only.
  const int tokens = fg_.debug_fewer_batch ? std::min(2, w_.gen_tokens) : w_.gen_tokens;
  for (int token = 0; token < tokens; ++token) {
    for (int j = 0; j < n_sub; ++j) {
      const double start = engine_.now();
      for (int k = 0; k < fg_.num_gpu_batches; ++k) {
        co_await in_turn(engine_, [&](Latch* l) { return step(token, j, k, l); });
      }
      if (token == 1) first_decode_layer_s_.push_back(engine_.now() - start);
      if (token == 1 && fg_.debug_fewer_batch && j + 1 >= kFewerBatchLayers) break;
    }
    if (token == 0) prefill_end_s_ = engine_.now();
  }
}

RunResult FlexGenSim::run() {
  RunResult result;
  result.workload = "inference";
  const CapacityReport cap = flexgen_capacity(s_, em_);
  result.memory = cap.tiers;
  result.fits = cap.fits;
  result.shortfall = cap.shortfall;
  if (!cap.fits) return result;

  subs_ = flexgen_sublayers(m_, fg_);
  split_ = flexgen_cache_split(fg_, m_.heads);
  // SelfAttention.load_cache: a compressed cache always takes path 0 (to the GPU).
  cpu_attention_ = fg_.cpu_cache_compute && !fg_.compress_cache;
  cache_elem_bytes_ = fg_.compress_cache ? kFlexGenCompressedBytesPerElem : 2.0;
  const HostSpec& host = s_.hardware.host;
  const GpuSpec& gpu = s_.hardware.gpu;
  decode_gpu_ = gpu;
  if (gpu.fp16_decode_achieved_tflops > 0)
    decode_gpu_.fp16_achieved_tflops = gpu.fp16_decode_achieved_tflops;
  gpu_ = &engine_.add_resource(resource::kGpu.at(), WorkUnit::kSeconds, 1.0);
  h2d_ = &engine_.add_resource(resource::kPcieH2d.at(), WorkUnit::kBytes,
                               units::gbps_to_bytes_per_s(h2d_gbps(gpu, host)));
  d2h_ = &engine_.add_resource(resource::kPcieD2h.at(), WorkUnit::kBytes,
                               units::gbps_to_bytes_per_s(d2h_gbps(gpu, host)));
  cpu_ = &engine_.add_resource(resource::kCpu.at(), WorkUnit::kSeconds, 1.0);
  const auto& nvme = s_.hardware.nvme;
  if (nvme.count > 0) {
    disk_ = &engine_.add_resource(resource::kNvme.at(), WorkUnit::kSeconds, 1.0);
    // FlexGen reads and writes its .npy files through mmap and the page cache (TorchDisk,
    // map_to_torch_tensor), each tensor a large sequential transfer by one of its copy threads.
    // The drives serve them as every other streamed NVMe transfer (model/weight_stream.hpp
    // nvme_transfer_timing): the array of hardware.nvme.model's device model (the datasheet's,
    // or a calibrated profile's), at the reader's operating point (policy.aio: block size and
    // threads x queue depth, bounded by the transfer's requests), through the host's I/O path,
    // at the sustained rate (disk_read_s). The shipped FlexGen scenarios keep policy.aio's deep
    // sequential default, which puts large reads within a few percent of the drives' sequential
    // rating.
    // The page cache is the DRAM nothing else holds. Each decode step reads every disk-resident
    // tensor once, in the same order: a cyclic scan, which an LRU page cache either holds whole
    // (every read a hit after the first) or not at all (every page evicted before its reuse).
    const TierMemory& cpu_tier = cap.tiers[1];
    page_cache_bytes_ = std::max(0.0, cpu_tier.capacity_bytes - cpu_tier.required_bytes);
    disk_cached_ = cap.tiers[2].required_bytes <= page_cache_bytes_;
  }
  engine_.spawn(run_all());
  engine_.run();

  const double prefill_s = prefill_end_s_;
  double decode_s = engine_.now() - prefill_s;
  if (fg_.debug_fewer_batch && w_.gen_tokens > 1) {
    // FlexGen's projection: the mean of layers 10..19 of the first decode token, times the
    // number of layers, for every decode token (generation_loop_debug_multi_batch:
    // np.mean(costs[10:]) x num_layers). The published --debug fewer_batch figures are this.
    const auto& t = first_decode_layer_s_;
    const std::size_t from = std::min<std::size_t>(kFewerBatchSkip, t.size() - 1);
    double sum = 0;
    for (std::size_t i = from; i < t.size(); ++i) sum += t[i];
    decode_s = (w_.gen_tokens - 1) * double(subs_.size()) * sum / double(t.size() - from);
  }
  // FlexGen's run_flexgen: num_prompts * gen_len / (prefill_latency + decode_latency).
  set_generation_metrics(result, w_, {prefill_s, decode_s, prefill_s + decode_s});
  result.set(metric::kCpuAttentionS, cpu_attention_s_);
  double weight_bytes = 0;
  for (const auto& sub : subs_)
    weight_bytes += sub.bytes_on(Tier::kGpu) + sub.bytes_on(Tier::kCpu) + sub.bytes_on(Tier::kNvme);
  result.set(metric::kWeightsBytes, weight_bytes);
  const Placement eff = flexgen_weight_placement(subs_);
  result.set(metric::kWeightsGpuFraction, eff.gpu);
  result.set(metric::kWeightsCpuFraction, eff.cpu);
  result.set(metric::kWeightsNvmeFraction, eff.nvme);
  if (disk_) result.set(metric::kPageCacheBytes, page_cache_bytes_);
  // Resource usage covers the simulated span (with debug_fewer_batch: the prefill and the
  // first decode token's timed layers).
  collect_usage(engine_, engine_.now(), result);
  return result;
}

}  // namespace

RunResult simulate_flexgen(const Scenario& scenario, const SimOptions& options) {
  FlexGenSim sim(scenario, options);
  return sim.run();
}

}  // namespace tiersim::sim
