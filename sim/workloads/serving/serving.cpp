// Online serving: requests arrive over time (a seeded arrival process or a trace), a scheduler
// batches them on one or more replicas of the model, and every iteration costs what the
// inference workload's per-layer model says (iteration_cost.hpp): weights streamed from host DRAM
// or NVMe once per iteration and shared by every request in it, compute at the roofline for the
// iteration's tokens, attention over each request's KV cache.
//
// Schedulers (workload.scheduler):
//   static      collect up to max_batch requests or wait at most max_wait, pad the batch to its
//               longest prompt and run it to its longest output; arrivals wait for the next batch
//               (ZeRO-Inference and FlexGen batches; the FasterTransformer baseline of Kwon et
//               al., "Efficient Memory Management for LLM Serving with PagedAttention", SOSP 2023,
//               section 6.1; Yu et al., "Orca", OSDI 2022, section 2).
//   continuous  iteration-level batching (Orca) with vLLM's paged KV cache: blocks of
//               block_tokens, a request is admitted first-come-first-served when its prompt's
//               blocks are free (1% of blocks kept back, Vidur's watermark_blocks_fraction 0.01),
//               waiting prompts run before decodes (vLLM V0 scheduler), and when a decode needs a
//               block and none is free the most recently admitted request is preempted and later
//               recomputed from its prompt and the tokens it had produced (vLLM's default
//               preemption mode for single sequences). With workload.preemption: swap its KV
//               blocks are copied to host DRAM instead (bounded by workload.swap_space) and back
//               before it resumes; swapped requests resume before new prompts are admitted.
//   chunked     Sarathi-Serve (Agrawal et al., OSDI 2024): each iteration has a token budget
//               (default 512, the artifact's chunk size); decodes first, then the prompts in
//               progress and new prompts in chunks that fill the budget.
//   inflight    TensorRT-LLM's in-flight batching without context chunking (trtllm-bench's
//               default, enable_chunked_prefill false): the micro-batch scheduler
//               (cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp) takes the requests the
//               capacity scheduler let through in order, the generating ones first, one token
//               each, then whole prompts, until max_batch requests or token_budget
//               (max_num_tokens, default 8192) tokens; the first prompt that does not fit stops
//               the scan.
//
// Admission into the KV pool is the execution stack's (ExecutionStack::kv_admission): vLLM's
// (the prompt's blocks, a 1% watermark, preemption when a decode finds no free block, as above)
// or TensorRT-LLM's GUARANTEED_NO_EVICT, which admits a request only when the blocks of its prompt
// plus its whole output are free beyond what the running requests still need to finish, so no
// request is ever preempted (capacityScheduler.cpp GuaranteedNoEvictScheduler; no watermark).
//
// Prefix caching (continuous and chunked schedulers, where the requests carry block hashes:
// prefix_stream.hpp): at admission a request's longest cached prefix is found in the replica's
// KV tiers (kv_tiers.hpp: the GPU pool, host DRAM, NVMe); blocks from DRAM and NVMe are loaded in
// that iteration through the same PCIe links and NVMe array the weights stream over
// (iteration_cost.cpp), and prefill computes only the rest of the prompt. Their loads and the
// copies down to DRAM and NVMe are work of their own on those resources (names.hpp: the time
// breakdown's "KV tier loads from NVMe" and the like, not the weights' streams). With
// workload.gpu_prefix_caching: false the GPU pool keeps no prefix blocks, so every hit comes from a
// lower tier (vLLM with prefix caching off and a KV offloading connector). What is not modelled:
// two running requests sharing one physical copy of a block (each takes its own blocks of the
// pool), and cached blocks competing with running requests for the pool (the GPU tier's capacity
// is the whole pool, cached and in use, LRU).
//
// The iteration loop runs on its own clock (an iteration ends, the scheduler forms the next);
// the engine's resources record the busy time of each GPU, PCIe link and the NVMe array, so the
// bottleneck, the trace and the energy and cost observers see serving as any other workload.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <string>

#include "model/capacity.hpp"
#include "model/errors.hpp"
#include "model/units.hpp"
#include "sim/workloads/names.hpp"
#include "sim/workloads/serving/iteration_cost.hpp"
#include "sim/workloads/serving/kv_tiers.hpp"
#include "sim/workloads/serving/metrics.hpp"
#include "sim/workloads/serving/names.hpp"
#include "sim/workloads/serving/request_stream.hpp"
#include "sim/workloads/serving/token_budget.hpp"
#include "sim/workloads/workload.hpp"

namespace tiersim::sim {
namespace {

// The blocks of `block_tokens` tokens a sequence of `tokens` tokens holds. A stack that keeps
// only the window on a sliding layer holds the window's blocks there (vLLM V1's hybrid KV cache
// manager gives each layer type its own blocks; TensorRT-LLM a cyclic window per layer): counted
// in the pool's all-layer blocks, the sequence's mean over the layers (IterationModel::
// cached_context; the last partial block of each sliding layer's window is left out). With KV
// tiers in host DRAM or on NVMe, vLLM keeps every token there (model/stack.hpp
// window_cache_with_kv_tiers).
long sequence_blocks(const IterationModel& model, double tokens, int block_tokens) {
  return static_cast<long>(std::ceil(model.cached_context(tokens) / double(block_tokens)));
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// The blocks of `r`'s prompt that may come from the cache: its full blocks of `block_tokens`
// before the last prompt token, which is always computed (vLLM V1 get_computed_blocks).
std::size_t cacheable_blocks(const Request& r, int block_tokens) {
  return std::min(r.block_hashes.size(),
                  static_cast<std::size_t>((r.prompt_tokens - 1) / block_tokens));
}

// A turn made before the run (prefix_stream.hpp synthetic_sessions' past turns) passes through
// the replica's cache as a served request does: its cached prefix is taken, and its prompt's and
// answer's full blocks are computed. Only the cache's contents are kept of it: no time passes and
// the copies to the lower tiers it caused are not booked.
void warm(KvHierarchy& kv, const Request& r, int block_tokens) {
  const std::uint64_t* h = r.block_hashes.data();
  const KvHierarchy::Match m = kv.match(h, cacheable_blocks(r, block_tokens));
  kv.take(h, m);
  // As Replica::take_prefix (the prompt's blocks at admission) and Replica::release (the prompt's
  // and the answer's when it finishes) do.
  const std::size_t n = r.block_hashes.size();
  kv.computed(h, m.blocks(), std::min(n, static_cast<std::size_t>(r.prompt_tokens / block_tokens)));
  kv.computed(h, 0,
              std::min(n, static_cast<std::size_t>((long(r.prompt_tokens) + r.output_tokens) /
                                                   block_tokens)));
  kv.take_writes();
}

struct Live {
  Request req;
  int target = 0;     // tokens to prefill: the prompt, or prompt + generated after a preemption
  int prefilled = 0;  // of target
  int generated = 0;
  long blocks = 0;
  // GUARANTEED_NO_EVICT: blocks set aside for the tokens it has still to produce (taken from the
  // free pool by no other request).
  long reserved_blocks = 0;
  long swapped_blocks = 0;  // in host DRAM while swapped out
  double first_scheduled_s = -1;
  double first_token_s = -1;
  double last_token_s = -1;
  double done_s = -1;
  bool prefix_hit = false;  // admitted with a cached prefix (any tier)
  bool measured = true;  // counted in the latency, SLO and prefix-hit metrics (not the warm-up)
  bool decoding() const { return prefilled == target; }
};

// Time between tokens of every request, pooled: a histogram with bins 0.1% wide (relative), so
// percentiles over tens of millions of gaps need no list of them. Percentiles are exact to 0.1%.
class GapHistogram {
 public:
  void add(double gap_s) {
    // The requests of one decode batch emit together, most of them after the same gap (the
    // iteration's time): the logarithm is taken once per distinct gap in a row.
    if (!(gap_s == last_gap_s_)) {
      last_gap_s_ = gap_s;
      last_bin_ = static_cast<std::size_t>(std::log(std::max(gap_s, kMin) / kMin) / kLogWidth);
    }
    const std::size_t bin = last_bin_;
    if (bin >= counts_.size()) counts_.resize(bin + 1, 0);
    ++counts_[bin];
    ++n_;
    sum_ += gap_s;
    max_ = std::max(max_, gap_s);
  }
  long count() const { return n_; }
  double mean() const { return n_ ? sum_ / double(n_) : 0; }
  double max() const { return max_; }
  // Nearest rank, reported at the bin's geometric centre (never above the maximum).
  double percentile(double p) const {
    if (n_ == 0) return 0;
    const long rank = std::max(1L, static_cast<long>(std::ceil(p / 100.0 * double(n_))));
    long seen = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(max_, kMin * std::exp((double(i) + 0.5) * kLogWidth));
    }
    return max_;
  }

 private:
  static constexpr double kMin = 1e-7;
  static constexpr double kLogWidth = 0.001;
  std::vector<long> counts_;
  long n_ = 0;
  double sum_ = 0, max_ = 0;
  double last_gap_s_ = std::numeric_limits<double>::quiet_NaN();  // [s] the gap last binned
  std::size_t last_bin_ = 0;                                      // its bin
};

struct Totals {
  GapHistogram gaps;
  long preemptions = 0;
  long swap_outs = 0;         // preemptions by swap
  double swap_out_bytes = 0;  // KV bytes copied to host DRAM, all GPUs
  double swap_in_bytes = 0;   // and back
  std::string swap_abort;     // why the run stopped: swap space exhausted ("" = it did not)
  long iterations = 0;
  double in_system_integral = 0;  // request-seconds (Little's L x time)
  double kv_used_integral = 0;    // block-seconds
  double kv_max_fraction = 0;
  // Prefix caching (kv_tiers.hpp), in prefix blocks of workload.prefix_block_tokens.
  long prefix_lookup_blocks = 0;  // blocks of cacheable prompt prefixes looked up
  long hit_gpu_blocks = 0, hit_host_blocks = 0, hit_nvme_blocks = 0;
  long host_write_blocks = 0, nvme_write_blocks = 0;
  double recompute_avoided_tokens = 0;
};

struct ReplicaResources {
  Resource* gpu = nullptr;
  Resource* h2d = nullptr;
  Resource* d2h = nullptr;
  Resource* peer = nullptr;
  Resource* nvme = nullptr;
  Resource* cpu = nullptr;
};

// One replica of the model (tensor-parallel GPUs in lockstep) with its own scheduler and KV pool.
class Replica {
 public:
  // `block_bytes`: one KV block on each GPU of the replica; `gpus`: the replica's GPUs.
  // `admission`: the run's rule (the stack's, or workload.kv_admission).
  Replica(const ServingWorkload& w, KvAdmission admission, const IterationModel& model,
          ReplicaResources res, long kv_blocks, int token_budget, double block_bytes, int gpus,
          Totals& totals, KvHierarchy* prefix_cache = nullptr)
      : w_(w),
        admission_(admission),
        model_(model),
        windows_(model.windows()),
        res_(res),
        total_blocks_(kv_blocks),
        free_blocks_(kv_blocks),
        block_bytes_(block_bytes),
        gpus_(gpus),
        budget_(token_budget),
        totals_(totals),
        kv_(prefix_cache) {
    // vLLM sizes its CPU block pool as swap_space / block bytes (vllm/worker/cache_engine.py
    // get_cache_block_size; worker.py determine_num_available_blocks).
    free_swap_blocks_ = static_cast<long>(std::floor(w.swap_space_bytes / block_bytes));
    watermark_ = static_cast<long>(std::ceil(0.01 * double(kv_blocks)));
  }

  // Admission that reserves each request's whole output (GUARANTEED_NO_EVICT).
  bool no_evict() const { return admission_ == KvAdmission::kGuaranteedNoEvict; }

  // `engine`: polled once per step for a stop request (Engine::poll_stop).
  void run(std::vector<Live*> arrivals, const Engine& engine) {
    arrivals_ = std::move(arrivals);
    while (true) {
      engine.poll_stop();
      const bool ran = w_.scheduler == ServingWorkload::Scheduler::kStatic ? static_step()
                       : w_.scheduler == ServingWorkload::Scheduler::kChunked ||
                               w_.scheduler == ServingWorkload::Scheduler::kInflight
                           ? chunked_step()
                           : continuous_step();
      if (!totals_.swap_abort.empty()) break;
      if (ran) continue;
      if (next_ >= arrivals_.size()) break;
      advance(std::max(now_, arrivals_[next_]->req.arrival_s));  // idle until the next arrival
    }
  }
  double now() const { return now_; }

 private:
  long blocks_for(double tokens) const { return sequence_blocks(model_, tokens, w_.block_tokens); }

  // Moves the clock to t1: integrates the number of requests in the system and the KV blocks in
  // use, and queues the requests that arrived meanwhile.
  void advance(double t1) {
    const double dt = t1 - now_;
    totals_.in_system_integral += double(waiting_.size() + running_.size()) * dt;
    totals_.kv_used_integral += double(total_blocks_ - free_blocks_) * dt;
    while (next_ < arrivals_.size() && arrivals_[next_]->req.arrival_s <= t1) {
      Live* r = arrivals_[next_++];
      totals_.in_system_integral += t1 - r->req.arrival_s;
      waiting_.push_back(r);
    }
    now_ = t1;
  }

  // Runs one iteration from now: books the resources and advances the clock to its end.
  void iterate(const IterationShape& shape_in, const std::vector<Live*>& scheduled) {
    IterationShape shape = shape_in;
    if (kv_) {
      // The copies down decided since the last iteration load the link and drives during this one.
      const KvHierarchy::Writes writes = kv_->take_writes();
      const double B = w_.prefix_block_tokens;
      shape.kv_store_host_tokens += double(writes.host) * B;
      shape.kv_store_nvme_tokens += double(writes.nvme) * B;
      totals_.host_write_blocks += writes.host;
      totals_.nvme_write_blocks += writes.nvme;
    }
    const IterationCost c = model_.cost(shape);
    const double start = now_, end = now_ + c.time_s;
    // Energy by phase: an iteration counts toward the phase of most of its tokens (chunked
    // prefill mixes prompt chunks with decodes in one forward pass).
    const Stage stage = shape.prefill_tokens > shape.decodes ? Stage::kPrefill : Stage::kDecode;
    // A resource's work in the iteration, in parts one after the other from its start, each
    // part its own activity; what runs past the iteration's end is cut there (its busy seconds
    // still count). `from`: where the part starts; returns where the next one does.
    const auto book = [&](Resource* r, double from, double busy_s, Activity activity,
                          double load = 1.0) {
      if (!r || !(busy_s > 0)) return from;
      r->reserve(0, std::min(from, end), std::min(end, from + busy_s), busy_s,
                 busy_s,  // seconds of work
                 Tag{activity, 0, static_cast<int>(totals_.iterations), load, stage});
      return from + busy_s;
    };
    // The all-reduces run between the GPU's kernels and hold the forward pass up
    // (iteration_cost.cpp adds them to its time); drawn after the compute, as one block, so that
    // the critical path finds them rather than a gap with no resource busy.
    const double compute_end = book(res_.gpu, start, c.gpu_s, activity::kCompute, c.gpu_load);
    book(res_.peer, compute_end, c.peer_s, activity::kAllreduce);
    // The KV tiers' loads come before the forward pass that streams the weights
    // (iteration_cost.cpp), their copies down after the blocks are computed.
    double at = book(res_.h2d, start, c.kv_host_load_s, activity::kKvLoadHost);
    at = book(res_.h2d, at, c.kv_nvme_copy_s, activity::kKvLoadNvme);
    book(res_.h2d, at, c.weights_h2d_s, activity::kWeightsCpu);
    at = book(res_.d2h, start, c.swap_out_d2h_s, activity::kKvToHost);
    book(res_.d2h, at, c.kv_host_store_s, activity::kKvStoreHost);
    // The array's load over the whole of its iteration's work where that is the weights alone
    // (the same number as theirs, and the same bits as before the KV tiers had parts of their own).
    const bool weights_only = c.kv_nvme_read_s == 0 && c.kv_nvme_write_s == 0;
    at = book(res_.nvme, start, c.kv_nvme_read_s, activity::kKvLoadNvme, c.kv_nvme_read_load);
    at = book(res_.nvme, at, c.weights_nvme_s, activity::kWeightsNvme,
              weights_only ? c.nvme_load : c.weights_nvme_load);
    book(res_.nvme, at, c.kv_nvme_write_s, activity::kKvStoreNvme, c.kv_nvme_write_load);
    book(res_.cpu, start, c.cpu_s, activity::kWeightsCpu, c.cpu_load);
    for (Live* r : scheduled)
      if (r->first_scheduled_s < 0) r->first_scheduled_s = start;
    totals_.kv_max_fraction = std::max(
        totals_.kv_max_fraction, double(total_blocks_ - free_blocks_) / double(total_blocks_));
    ++totals_.iterations;
    advance(end);
  }

  // A request produced a token at the end of the iteration that just ran.
  void emit_token(Live* r) {
    if (r->generated == 0)
      r->first_token_s = now_;
    else if (r->measured)
      totals_.gaps.add(now_ - r->last_token_s);
    r->last_token_s = now_;
    if (++r->generated == r->req.output_tokens) r->done_s = now_;
  }

  void release(Live* r) {
    free_blocks_ += r->blocks;
    r->blocks = 0;
    reserved_blocks_ -= r->reserved_blocks;
    r->reserved_blocks = 0;
    // Its blocks stay cached (vLLM keeps a freed block's hash until the block is reused): the
    // prompt's and the output's full blocks, which a conversation's next turn holds.
    if (kv_ && !r->req.block_hashes.empty()) {
      const auto full = static_cast<std::size_t>((r->req.prompt_tokens + r->generated) /
                                                 w_.prefix_block_tokens);
      kv_->computed(r->req.block_hashes.data(), 0, std::min(full, r->req.block_hashes.size()));
    }
  }

  // Tokens of `r`'s prompt the cache holds (0 without prefix caching), changing nothing. At most
  // prompt - 1: the last prompt token is always computed (vLLM V1 get_computed_blocks).
  KvHierarchy::Match cached_prefix(const Live* r) const {
    if (!kv_ || r->req.block_hashes.empty()) return {};
    const std::size_t n = cacheable_blocks(r->req, w_.prefix_block_tokens);
    const KvHierarchy::Match m = kv_->match(r->req.block_hashes.data(), n);
    if (m.nvme == 0 || w_.kv_load != ServingWorkload::KvLoad::kIfFaster) return m;
    // Load or recompute (workload.kv_load: if_faster): the blocks from the first one only the
    // NVMe tier holds to the end of the match are loaded (their NVMe and host DRAM blocks) or
    // recomputed, whichever this iteration model says takes less time on its own. Recompute is
    // priced as a prefill of those tokens alone after the prefix kept; batched with others it
    // shares the iteration, so this favours loading a little.
    const KvHierarchy::Match kept = kv_->match(r->req.block_hashes.data(), n, false);
    const double B = w_.prefix_block_tokens;
    IterationShape load;
    load.kv_load_nvme_tokens = double(m.nvme) * B;
    load.kv_load_host_tokens = double(m.host - kept.host) * B;
    const double tail = double(m.blocks() - kept.blocks()) * B;
    const double offset = double(kept.blocks()) * B;
    IterationShape recompute;
    recompute.add_prefill(tail, offset);
    return model_.cost(load).kv_load_s <= model_.cost(recompute).time_s ? m : kept;
  }

  // `r` is admitted with the cached prefix `m`: its blocks come to the GPU (loads from host DRAM
  // and NVMe ride on this iteration), prefill starts after them, and the prompt's other full
  // blocks are cached as it computes them.
  void take_prefix(Live* r, const KvHierarchy::Match& m, IterationShape& shape) {
    if (!kv_ || r->req.block_hashes.empty()) return;
    const auto& h = r->req.block_hashes;
    const double B = w_.prefix_block_tokens;
    if (r->measured) {
      totals_.prefix_lookup_blocks +=
          static_cast<long>(cacheable_blocks(r->req, w_.prefix_block_tokens));
      totals_.hit_gpu_blocks += static_cast<long>(m.gpu);
      totals_.hit_host_blocks += static_cast<long>(m.host);
      totals_.hit_nvme_blocks += static_cast<long>(m.nvme);
    }
    kv_->take(h.data(), m);
    if (m.blocks() > 0) r->prefix_hit = true;
    shape.kv_load_host_tokens += double(m.host) * B;
    shape.kv_load_nvme_tokens += double(m.nvme) * B;
    r->prefilled = static_cast<int>(m.blocks()) * w_.prefix_block_tokens;
    if (r->measured) totals_.recompute_avoided_tokens += r->prefilled;
    const auto prompt_blocks =
        static_cast<std::size_t>(r->req.prompt_tokens / w_.prefix_block_tokens);
    kv_->computed(h.data(), m.blocks(), std::min(prompt_blocks, h.size()));
  }

  void remove_finished() {
    auto done = [&](Live* r) {
      if (r->done_s < 0) return false;
      release(r);
      return true;
    };
    running_.erase(std::remove_if(running_.begin(), running_.end(), done), running_.end());
  }

  // Recompute preemption: the request gives its blocks back and goes to the front of the queue;
  // when admitted again it prefills its prompt and the tokens it had produced. Swap preemption
  // (a decoding request): its blocks are copied to host DRAM in the next iteration and it waits,
  // in the order it was swapped out, to be copied back. vLLM V0 aborts the engine when the CPU
  // block pool cannot take a victim ("Aborted due to the lack of CPU swap space",
  // vllm/core/scheduler.py Scheduler._swap_out); the run stops there too, reported as not fitting.
  void preempt(Live* r) {
    ++totals_.preemptions;
    if (w_.preemption == ServingWorkload::Preemption::kSwap && r->decoding()) {
      if (r->blocks > free_swap_blocks_) {
        totals_.swap_abort = "workload.swap_space: a preempted request's " +
                             std::to_string(r->blocks) + " KV blocks do not fit in the " +
                             std::to_string(free_swap_blocks_) +
                             " free host swap blocks; vLLM aborts the engine here (\"Aborted due "
                             "to the lack of CPU swap space\"): raise workload.swap_space";
        release(r);
        return;
      }
      free_swap_blocks_ -= r->blocks;
      pending_swap_out_blocks_ += r->blocks;
      ++totals_.swap_outs;
      totals_.swap_out_bytes += double(r->blocks) * block_bytes_ * gpus_;
      r->swapped_blocks = r->blocks;
      release(r);
      swapped_.push_back(r);  // vLLM: self.swapped.extend(running_scheduled.swapped_out)
      return;
    }
    release(r);
    r->target = r->req.prompt_tokens + r->generated;
    r->prefilled = 0;
    waiting_.push_front(r);
  }

  // Swapped requests back to the GPU, in the order they left, while their blocks (and the block of
  // their next token) fit above the watermark (vLLM's can_swap_in: AllocStatus.LATER stops the
  // scan). They decode in this iteration. Not in an iteration that preempted (vLLM V0 schedules
  // swap-ins only when the running queue preempted nothing).
  void swap_in(IterationShape& shape, std::vector<Live*>& decodes, long preempted_before) {
    if (totals_.preemptions != preempted_before) return;
    while (!swapped_.empty() && running_.size() < std::size_t(w_.max_batch)) {
      Live* r = swapped_.front();
      const long need = blocks_for(r->req.prompt_tokens + r->generated);
      const long reserve = running_.empty() ? 0 : watermark_;
      if (free_blocks_ - need < reserve) break;
      swapped_.pop_front();
      free_swap_blocks_ += r->swapped_blocks;
      shape.swap_in_tokens += double(r->swapped_blocks) * w_.block_tokens;
      totals_.swap_in_bytes += double(r->swapped_blocks) * block_bytes_ * gpus_;
      r->swapped_blocks = 0;
      free_blocks_ -= need;
      r->blocks = need;
      running_.push_back(r);
      decodes.push_back(r);
    }
  }

  // The swap-outs decided since the last iteration ride on the next one.
  void take_swap_outs(IterationShape& shape) {
    shape.swap_out_tokens += double(pending_swap_out_blocks_) * w_.block_tokens;
    pending_swap_out_blocks_ = 0;
  }

  // Gives every decoding request in `running_` the block its next token needs, preempting the most
  // recently admitted requests while none is free. Returns the requests that decode.
  std::vector<Live*> reserve_decode_slots() {
    std::vector<Live*> decodes;
    decodes.reserve(running_.size());
    for (std::size_t i = 0; i < running_.size(); ++i) {
      Live* r = running_[i];
      if (!r->decoding()) continue;
      // A request never holds more blocks than its tokens need (admission, swap-in and each step
      // give it exactly blocks_for), and blocks_for is at most one per block_tokens tokens (a
      // window caches fewer): while its tokens fit in the blocks it holds, it needs none. That
      // skips working out the blocks of every request in every step.
      const long tokens = long(r->req.prompt_tokens) + r->generated;
      const long need =
          tokens <= r->blocks * long(w_.block_tokens) ? 0 : blocks_for(double(tokens)) - r->blocks;
      if (no_evict() && need > 0) {
        // The block comes out of the request's own reservation: it is free, and no one else's.
        const long from_reserve = std::min(need, r->reserved_blocks);
        r->reserved_blocks -= from_reserve;
        reserved_blocks_ -= from_reserve;
      }
      bool preempted_self = false;
      while (need > free_blocks_) {
        Live* victim = running_.back();
        running_.pop_back();
        std::erase(decodes, victim);
        preempt(victim);
        if (victim == r) {
          preempted_self = true;
          break;
        }
      }
      if (preempted_self) break;
      free_blocks_ -= need;
      r->blocks += need;
      decodes.push_back(r);
    }
    return decodes;
  }

  void add_decodes(IterationShape& shape, const std::vector<Live*>& decodes) const {
    // The window's test outside the loop: it runs over every decode of every iteration.
    if (windows_) {
      for (const Live* r : decodes)
        shape.decode_context_tokens +=
            model_.window_context(double(r->req.prompt_tokens + r->generated));
    } else {
      for (const Live* r : decodes)
        shape.decode_context_tokens += r->req.prompt_tokens + r->generated;
    }
    shape.decodes += double(decodes.size());
    shape.sampled += double(decodes.size());
  }

  // Blocks `r` will hold when its last token is computed: its prompt and its whole output.
  long final_blocks(const Live* r) const {
    return blocks_for(double(r->req.prompt_tokens) + r->req.output_tokens);
  }

  // Whether `r` may be admitted now. vLLM: its prompt's blocks are free, keeping the watermark
  // unless nothing runs. GUARANTEED_NO_EVICT: the blocks of its prompt and whole output are free
  // beyond those the running requests have reserved to finish.
  bool can_admit(const Live* r, std::size_t admitted_now) const {
    if (no_evict()) return free_blocks_ - reserved_blocks_ >= final_blocks(r);
    const long reserve = running_.empty() && admitted_now == 0 ? 0 : watermark_;
    return free_blocks_ - blocks_for(r->target) >= reserve;
  }

  // Takes the blocks of `r`'s prompt (and, GUARANTEED_NO_EVICT, reserves those of the rest of its
  // output) as it is admitted.
  void take_blocks(Live* r) {
    r->blocks = blocks_for(r->target);
    free_blocks_ -= r->blocks;
    if (no_evict()) {
      r->reserved_blocks = std::max(0L, final_blocks(r) - r->blocks);
      reserved_blocks_ += r->reserved_blocks;
    }
  }

  bool continuous_step() {
    // Waiting prompts first, as many as the token budget, the running limit and the free blocks
    // allow, in arrival order without skipping (vLLM V0, Sarathi-Serve's vLLM baseline). While
    // requests are swapped out no prompt is admitted (vLLM V0 _schedule_default: prefills only
    // when the swapped queue is empty).
    std::vector<Live*> prefills;
    IterationShape shape;
    int budget = budget_;
    while (swapped_.empty() && !waiting_.empty() &&
           running_.size() + prefills.size() < std::size_t(w_.max_batch)) {
      Live* r = waiting_.front();
      // The blocks first: a prompt that waits for them is looked up in the cache only once they
      // are there (the lookup changes nothing, and a long prompt's walks its every block).
      if (!can_admit(r, prefills.size())) break;
      const KvHierarchy::Match m = cached_prefix(r);
      const int cached = static_cast<int>(m.blocks()) * w_.prefix_block_tokens;
      if (r->target - cached > budget) break;
      waiting_.pop_front();
      budget -= r->target - cached;
      take_blocks(r);
      if (kv_) {
        // Prefill after the cached prefix: its tokens attend to the prefix's KV as well.
        take_prefix(r, m, shape);
        shape.add_prefill(r->target - r->prefilled, r->prefilled);
      } else {
        shape.add_prefill(r->target, 0);
      }
      shape.sampled += 1;
      prefills.push_back(r);
    }
    if (!prefills.empty()) {
      for (Live* r : prefills) running_.push_back(r);
      take_swap_outs(shape);
      iterate(shape, prefills);
      for (Live* r : prefills) {
        r->prefilled = r->target;
        emit_token(r);
      }
      remove_finished();
      return true;
    }
    if (running_.empty() && swapped_.empty()) return false;
    const long preempted_before = totals_.preemptions;
    std::vector<Live*> decodes = reserve_decode_slots();
    swap_in(shape, decodes, preempted_before);
    if (decodes.empty()) {  // everything was preempted: copy the swap-outs, prefill next
      if (pending_swap_out_blocks_ > 0) {
        take_swap_outs(shape);
        iterate(shape, {});
      }
      return preempted_before != totals_.preemptions;
    }
    add_decodes(shape, decodes);
    take_swap_outs(shape);
    iterate(shape, decodes);
    for (Live* r : decodes) emit_token(r);
    remove_finished();
    return true;
  }

  bool chunked_step() {
    IterationShape shape;
    // Running decodes, then swapped requests, then prompts (vLLM V0
    // _schedule_chunked_prefill).
    const long preempted_before = totals_.preemptions;
    std::vector<Live*> scheduled = reserve_decode_slots();
    swap_in(shape, scheduled, preempted_before);
    add_decodes(shape, scheduled);
    take_swap_outs(shape);
    long budget = budget_ - static_cast<long>(scheduled.size());
    std::vector<std::pair<Live*, int>> chunks;
    auto add_chunk = [&](Live* r) {
      const int c = static_cast<int>(std::min<long>(r->target - r->prefilled, budget));
      if (c <= 0) return;
      shape.add_prefill(c, r->prefilled);
      if (r->prefilled + c == r->target) shape.sampled += 1;
      budget -= c;
      chunks.emplace_back(r, c);
      scheduled.push_back(r);
    };
    // Prompts already in progress, then new ones (their whole prompt's blocks are taken at
    // admission, as Sarathi-Serve's scheduler does).
    for (Live* r : running_)
      if (!r->decoding() && budget > 0) add_chunk(r);
    // In-flight batching without chunking takes a prompt only whole: the first that does not
    // fit in what is left of the budget stops the scan (microBatchScheduler.cpp).
    const bool whole = w_.scheduler == ServingWorkload::Scheduler::kInflight;
    std::size_t admitted = 0;
    while (budget > 0 && !waiting_.empty() && running_.size() < std::size_t(w_.max_batch)) {
      Live* r = waiting_.front();
      if (!can_admit(r, admitted)) break;
      const KvHierarchy::Match m = cached_prefix(r);
      if (whole && r->target - static_cast<long>(m.blocks()) * w_.prefix_block_tokens > budget)
        break;
      waiting_.pop_front();
      take_blocks(r);
      running_.push_back(r);
      ++admitted;
      take_prefix(r, m, shape);
      add_chunk(r);
    }
    if (scheduled.empty()) {
      if (shape.swap_out_tokens == 0) return false;
      iterate(shape, {});  // only copies: every request was swapped out
      return true;
    }
    const std::size_t decodes = static_cast<std::size_t>(shape.decodes);
    iterate(shape, scheduled);
    for (std::size_t i = 0; i < decodes; ++i) emit_token(scheduled[i]);
    for (auto& [r, c] : chunks) {
      r->prefilled += c;
      if (r->decoding()) emit_token(r);
    }
    remove_finished();
    return true;
  }

  bool static_step() {
    if (waiting_.empty() && next_ >= arrivals_.size()) return false;
    const std::size_t B = static_cast<std::size_t>(w_.max_batch);
    if (waiting_.size() < B) {
      // Start when the batch is full or the oldest request has waited max_wait.
      const std::size_t missing = B - waiting_.size();
      const double full_at = next_ + missing - 1 < arrivals_.size()
                                 ? arrivals_[next_ + missing - 1]->req.arrival_s
                                 : kInf;
      const double oldest =
          waiting_.empty() ? arrivals_[next_]->req.arrival_s : waiting_.front()->req.arrival_s;
      advance(std::max(now_, std::min(full_at, oldest + w_.max_wait_s)));
    }
    // The batch: up to B requests in arrival order whose padded KV cache fits in the pool.
    std::vector<Live*> batch;
    int max_prompt = 0, max_output = 0;
    while (!waiting_.empty() && batch.size() < B) {
      Live* r = waiting_.front();
      const int p = std::max(max_prompt, r->req.prompt_tokens);
      const int o = std::max(max_output, r->req.output_tokens);
      if (!batch.empty() && long(batch.size() + 1) * blocks_for(p + o) > total_blocks_) break;
      waiting_.pop_front();
      batch.push_back(r);
      max_prompt = p;
      max_output = o;
    }
    for (Live* r : batch) running_.push_back(r);
    const long per_seq = blocks_for(max_prompt + max_output);
    free_blocks_ -= per_seq * long(batch.size());
    const double n = double(batch.size());
    // Prefill of the padded batch, then decode steps until its longest output is done; requests
    // with shorter outputs leave when they have their tokens but their rows keep running.
    IterationShape prefill;
    prefill.add_prefill(max_prompt, 0, n);
    prefill.sampled = n;
    iterate(prefill, batch);
    for (Live* r : batch) emit_token(r);
    running_.erase(
        std::remove_if(running_.begin(), running_.end(), [](Live* r) { return r->done_s >= 0; }),
        running_.end());
    for (int k = 1; k < max_output; ++k) {
      IterationShape decode;
      decode.decodes = n;
      decode.decode_context_tokens = n * model_.window_context(double(max_prompt + k));
      decode.sampled = n;
      iterate(decode, batch);
      for (Live* r : batch)
        if (r->done_s < 0) emit_token(r);
      running_.erase(
          std::remove_if(running_.begin(), running_.end(), [](Live* r) { return r->done_s >= 0; }),
          running_.end());
    }
    free_blocks_ += per_seq * long(batch.size());
    return true;
  }

  const ServingWorkload& w_;
  KvAdmission admission_;
  const IterationModel& model_;
  const bool windows_;  // model_.windows(), tested once per add_decodes, outside its loop
  ReplicaResources res_;
  long total_blocks_, free_blocks_, watermark_ = 0;
  long reserved_blocks_ = 0;  // GUARANTEED_NO_EVICT: the running requests' reservations
  double block_bytes_ = 0;
  int gpus_ = 1;
  long free_swap_blocks_ = 0, pending_swap_out_blocks_ = 0;
  std::deque<Live*> swapped_;  // in the order they were swapped out
  int budget_;
  Totals& totals_;
  KvHierarchy* kv_ = nullptr;  // prefix cache of this replica; null without prefix caching
  std::vector<Live*> arrivals_;
  std::size_t next_ = 0;
  std::deque<Live*> waiting_;
  std::vector<Live*> running_;
  double now_ = 0;
};

// Nearest-rank percentile of a sorted list.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * double(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / double(v.size());
}

// A percentile of a distribution and the metric that reports it.
struct PercentileMetric {
  double p;  // [%]
  const MetricDecl& metric;
};

void set_distribution(RunResult& result, std::vector<double> values, const MetricDecl& mean_metric,
                      std::initializer_list<PercentileMetric> ps, const MetricDecl& max_metric) {
  std::sort(values.begin(), values.end());
  result.set(mean_metric, mean(values));
  for (const PercentileMetric& p : ps) result.set(p.metric, percentile(values, p.p));
  result.set(max_metric, values.empty() ? 0 : values.back());
}

// The longest prompt and the longest request (prompt and output) of a request stream [tokens].
std::pair<int, int> longest_of(const std::vector<Request>& requests) {
  int max_prompt = 0, max_total = 0;
  for (const auto& r : requests) {
    max_prompt = std::max(max_prompt, r.prompt_tokens);
    max_total = std::max(max_total, r.prompt_tokens + r.output_tokens);
  }
  return {max_prompt, max_total};
}

// The memory check run_serving makes before it simulates (WorkloadOps::capacity): vLLM's start-up
// profile of one replica against the longest request of the scenario's stream.
CapacityReport serving_fit_capacity(const Scenario& s, const ExecutionModel& em) {
  const auto [max_prompt, max_total] = longest_of(request_stream(s));
  const int budget = serving_token_budget(s.serving, s.model.max_positions, max_prompt, max_total);
  return serving_capacity(s, em, budget, s.serving.max_batch, max_total).report;
}

RunResult run_serving(const Scenario& s, const SimOptions& options) {
  const ServingWorkload& w = s.serving;
  const LlmSpec& m = s.model;
  const Policy& p = s.policy;
  RunResult result;
  result.workload = "serving";

  // Synthetic sessions' turns before time 0 warm the KV cache (prefix_stream.hpp).
  std::vector<Request> past_turns;
  std::vector<Request> requests = request_stream(s, &past_turns);
  const auto [max_prompt, max_total] = longest_of(requests);
  // Token budget per iteration (token_budget.hpp: the scheduler's default unless given).
  using Sched = ServingWorkload::Scheduler;
  const int budget = serving_token_budget(w, m.max_positions, max_prompt, max_total);
  if (w.scheduler == Sched::kContinuous && budget < max_total)
    throw ModelError("workload.token_budget " + std::to_string(budget) +
                     " is below the longest request (" + std::to_string(max_total) +
                     " tokens with its output): the continuous scheduler prefills a prompt in "
                     "one iteration; raise it or use scheduler: chunked");
  // Without chunking a prompt runs whole in one iteration (TensorRT-LLM checks it against
  // max_num_tokens; trtllm-bench raises max_num_tokens to at least the longest prompt).
  if (w.scheduler == Sched::kInflight && budget < max_prompt)
    throw ModelError("workload.token_budget " + std::to_string(budget) +
                     " is below the longest prompt (" + std::to_string(max_prompt) +
                     " tokens): in-flight batching without chunking runs a prompt whole in one "
                     "iteration; raise it to at least the longest prompt");

  const ExecutionModel& em = options.exec;
  const ServingMemory mem = serving_capacity(s, em, budget, w.max_batch, max_total);
  result.memory = mem.report.tiers;
  result.fits = mem.report.fits;
  result.shortfall = mem.report.shortfall;
  if (!result.fits) return result;
  // The KV tiers' sizes with `auto` resolved (workload.kv_host_cache, kv_nvme_cache).
  const ServingKvTiers& kv = mem.kv_tiers;
  const long blocks =
      static_cast<long>(std::floor(mem.kv_pool_bytes / (mem.kv_bytes_per_token * w.block_tokens)));
  // Without a whole block no request is ever admitted (and the KV metrics divided by zero: "not
  // a finite number" blamed on kv_cache_mean_pct).
  if (blocks < 1)
    throw ModelError("workload.block_tokens: one KV cache block of " +
                     std::to_string(w.block_tokens) + " tokens (" +
                     std::to_string(mem.kv_bytes_per_token * w.block_tokens / 1e9) +
                     " GB) is larger than the KV cache pool (" +
                     std::to_string(mem.kv_pool_bytes / 1e9) +
                     " GB); use smaller blocks (vLLM's default is 16 tokens)");

  // The admission rule: the stack's unless the workload names one (workload.kv_admission).
  const KvAdmission admission = w.kv_admission == ServingWorkload::Admission::kStack
                                    ? p.stack.kv_admission
                                : w.kv_admission == ServingWorkload::Admission::kGuaranteedNoEvict
                                    ? KvAdmission::kGuaranteedNoEvict
                                    : KvAdmission::kPromptBlocks;
  // A request preempted for recompute comes back with its prompt and the tokens it had made; in
  // in-flight batching without chunking that must run whole in one iteration, so one longer than
  // the budget would wait forever.
  if (w.scheduler == Sched::kInflight && admission == KvAdmission::kPromptBlocks &&
      w.preemption == ServingWorkload::Preemption::kRecompute && budget < max_total)
    throw ModelError("workload.token_budget " + std::to_string(budget) +
                     " is below the longest request (" + std::to_string(max_total) +
                     " tokens with its output): a request preempted for recompute runs its "
                     "prompt and output again in one iteration of in-flight batching; raise the "
                     "budget, use workload.kv_admission: guaranteed_no_evict or "
                     "workload.preemption: swap");
  // GUARANTEED_NO_EVICT admits a request only when its whole output fits: one that does not fit
  // in the empty pool would never start.
  const IterationModel model(s, em);
  if (admission == KvAdmission::kGuaranteedNoEvict) {
    const long need = sequence_blocks(model, double(max_total), w.block_tokens);
    if (need > blocks)
      throw ModelError("the longest request (" + std::to_string(max_total) +
                       " tokens with its output) needs " + std::to_string(need) +
                       " KV blocks, more than the pool's " + std::to_string(blocks) +
                       "; GUARANTEED_NO_EVICT admission (policy.stack " + p.stack.name +
                       ", workload.kv_admission) starts a request only when its whole output "
                       "fits, so it would never start");
  }
  Engine engine;
  engine.enable_trace(options.trace);
  engine.keep_spans(options.breakdown);
  engine.stop_when(options.stop);
  const int tp = p.parallelism.tensor;
  const int replicas = s.hardware.gpu_count / tp;
  // Resources record busy seconds (rate 1); the inference workload's kinds, with their roles, so
  // energy charges them to the same components.
  const auto seconds = [&](const ResourceKind& kind, int index) {
    return &engine.add_resource(kind.at(index), WorkUnit::kSeconds, 1.0);
  };
  Resource* nvme = s.hardware.nvme.count > 0 ? seconds(resource::kNvme, kNoIndex) : nullptr;
  Resource* cpu = p.pin_memory ? nullptr : seconds(resource::kCpu, kNoIndex);
  std::vector<ReplicaResources> res(static_cast<std::size_t>(replicas));
  for (int i = 0; i < replicas; ++i) {
    const int index = replicas > 1 ? i : kNoIndex;
    auto& r = res[static_cast<std::size_t>(i)];
    r.gpu = seconds(resource::kGpu, index);
    const bool swap = w.preemption == ServingWorkload::Preemption::kSwap;
    const bool tiers = kv.host_bytes > 0 || kv.nvme_bytes > 0;
    if (p.weights.cpu + p.weights.nvme > 0 || swap || tiers)
      r.h2d = seconds(resource::kPcieH2d, index);
    if (swap || kv.host_bytes > 0) r.d2h = seconds(resource::kPcieD2h, index);
    if (tp > 1) r.peer = seconds(resource::kGpuPeer, index);
    r.nvme = nvme;
    r.cpu = cpu;
  }

  // Prefix caching where the requests carry their prefix structure (prefix_stream.hpp) and the
  // scheduler is one that keeps a paged cache (not static batches).
  const bool prefixes = std::any_of(requests.begin(), requests.end(),
                                    [](const Request& r) { return !r.block_hashes.empty(); });
  const bool caching =
      prefixes && w.prefix_caching && w.scheduler != ServingWorkload::Scheduler::kStatic;
  // Tier capacities in prefix blocks, per replica. The GPU tier is the whole paged pool (see the
  // note at the top of this file); DRAM and NVMe are split evenly over the replicas.
  const double prefix_block_bytes = mem.kv_bytes_per_token * tp * w.prefix_block_tokens;
  const auto tier_blocks = [&](double bytes) {
    return static_cast<std::size_t>(std::floor(bytes / replicas / prefix_block_bytes));
  };
  const auto gpu_tier_blocks =
      w.gpu_prefix_caching
          ? static_cast<std::size_t>(double(blocks) * w.block_tokens / w.prefix_block_tokens)
          : std::size_t(0);
  std::vector<KvHierarchy> caches;
  if (caching)
    for (int i = 0; i < replicas; ++i)
      caches.emplace_back(gpu_tier_blocks, tier_blocks(kv.host_bytes), tier_blocks(kv.nvme_bytes),
                          w.kv_write == ServingWorkload::KvWrite::kWriteBack);

  // Round-robin dispatch over the replicas (a load balancer that knows nothing of their queues).
  // With prefix caching, a request of a known conversation goes to the replica its session key
  // picks, so that every turn finds its history there (session affinity; NVIDIA Dynamo's KV-aware
  // router and SGLang's cache-aware router send a request where its prefix is cached).
  const auto replica_of = [&](const Request& r, std::size_t i) {
    return caching && r.session != 0 ? static_cast<std::size_t>(r.session % std::uint64_t(replicas))
                                     : i % static_cast<std::size_t>(replicas);
  };
  // The cache as the turns before time 0 left it: the run starts from a server that has been up
  // for long, not from an empty cache. Multi-turn benchmarks of real servers warm it the same way
  // before they measure: vLLM's benchmarks/multi_turn (--warmup-step, kept out of the reported
  // runtime and throughput) and LMCache's multi-round QA benchmark (a warm-up that "preloads the
  // user-specific chatting history", LMBenchmark synthetic-multi-round-qa README).
  if (caching)
    for (std::size_t i = 0; i < past_turns.size(); ++i)
      warm(caches[replica_of(past_turns[i], i)], past_turns[i], w.prefix_block_tokens);
  past_turns = {};
  // The warm-up left out of the latency, SLO and prefix-hit metrics (workload.warmup_requests):
  // unset, a twentieth of the requests where they carry prefix structure. The session stream is
  // stationary and the cache warm from the start; the twentieth lets the queue and the running
  // batch fill (at the multi-turn scenarios' capacities, 300 of 6,000 requests are about a minute
  // of traffic, several request lifetimes). Plain streams keep every request, as the published
  // serving benchmarks they are compared with count a run from an empty server.
  const std::size_t warmup =
      w.warmup_requests >= 0 ? static_cast<std::size_t>(w.warmup_requests)
      : prefixes             ? requests.size() / 20
                             : 0;
  if (warmup >= requests.size())
    throw ConfigError(s.file, 0, "workload.warmup_requests",
                      std::to_string(warmup) + " warm-up requests leave none of the trace's " +
                          std::to_string(requests.size()) +
                          " requests to measure; give fewer than that");
  std::vector<Live> live(requests.size());
  std::vector<std::vector<Live*>> streams(static_cast<std::size_t>(replicas));
  for (std::size_t i = 0; i < requests.size(); ++i) {
    live[i].req = std::move(requests[i]);
    live[i].target = live[i].req.prompt_tokens;
    live[i].measured = i >= warmup;
    streams[replica_of(live[i].req, i)].push_back(&live[i]);
  }
  Totals totals;
  double total_s = 0;
  for (int i = 0; i < replicas; ++i) {
    Replica replica(w, admission, model, res[static_cast<std::size_t>(i)], blocks, budget,
                    mem.kv_bytes_per_token * w.block_tokens, tp, totals,
                    caching ? &caches[static_cast<std::size_t>(i)] : nullptr);
    replica.run(std::move(streams[static_cast<std::size_t>(i)]), engine);
    total_s = std::max(total_s, replica.now());
    if (!totals.swap_abort.empty()) {
      result.fits = false;
      result.shortfall = totals.swap_abort;
      return result;
    }
  }

  // Every request must have finished: the metrics below count them all as served.
  const auto unfinished = std::count_if(live.begin(), live.end(), [](const Live& r) {
    return r.done_s < 0;
  });
  if (unfinished > 0)
    throw ModelError("serving: " + std::to_string(unfinished) +
                     " requests never finished (a scheduler could not run them)");
  std::vector<double> queue, ttft, e2e, tpot;
  double generated = 0;
  long good = 0;
  // TTFT of the requests admitted with a cached prefix and of the others (prefix caching only).
  double ttft_hit_sum = 0, ttft_miss_sum = 0;
  long ttft_hits = 0;
  for (const Live& r : live) {
    generated += r.req.output_tokens;
    if (!r.measured) continue;
    queue.push_back(r.first_scheduled_s - r.req.arrival_s);
    ttft.push_back(r.first_token_s - r.req.arrival_s);
    (r.prefix_hit ? ttft_hit_sum : ttft_miss_sum) += ttft.back();
    if (r.prefix_hit) ++ttft_hits;
    e2e.push_back(r.done_s - r.req.arrival_s);
    // Time per output token, DistServe's definition: (last - first) / (output - 1).
    const double per_token =
        r.req.output_tokens > 1 ? (r.done_s - r.first_token_s) / (r.req.output_tokens - 1) : 0.0;
    if (r.req.output_tokens > 1) tpot.push_back(per_token);
    const bool ttft_ok = w.slo_ttft_s < 0 || ttft.back() <= w.slo_ttft_s;
    const bool tbt_ok = w.slo_tbt_s < 0 || per_token <= w.slo_tbt_s;
    if (ttft_ok && tbt_ok) ++good;
  }
  const double n = double(live.size());
  const double measured = double(queue.size());
  result.set(metric::kTotalS, total_s);
  result.set(metric::kRequestsCompleted, n);
  if (warmup > 0 || prefixes) {
    result.set(metric::kWarmupRequests, double(warmup));
    result.set(metric::kRequestsMeasured, measured);
  }
  result.work.requests_completed = n;
  result.set(metric::kRequestsPerS, n / total_s);
  result.set(metric::kGeneratedTokens, generated);
  result.work.generated_tokens = generated;
  result.set(metric::kThroughputTokensPerS, generated / total_s);
  if (w.slo_ttft_s > 0 || w.slo_tbt_s > 0) {
    // The share of the measured requests within the targets, at the run's request rate (without
    // a warm-up: good / total_s).
    result.set(metric::kGoodputRequestsPerS, double(good) / measured * n / total_s);
    result.set(metric::kSloAttainmentPct, 100.0 * double(good) / measured);
  }
  // The offered load (the x axis of latency-vs-load curves): the configured rate, or a trace's
  // requests over the span of its arrivals.
  const double span_s = live.empty() ? 0 : live.back().req.arrival_s - live.front().req.arrival_s;
  const double offered = w.trace.empty() ? w.arrival_rate_per_s
                         : span_s > 0    ? double(live.size() - 1) / span_s
                                         : 0.0;
  result.set(metric::kOfferedRateRequestsPerS, offered);
  // Whether the queue keeps up: the mean queueing delay of the last third of the measured
  // requests (in arrival order) minus that of the middle third (the first third is left out as
  // the rest of the warm-up). A stable queue gives about 0; one that arrivals outpace gives a
  // delay that grows with the run (the comparison of Law, "Simulation Modeling and Analysis",
  // ch. 9, on thirds).
  const std::size_t third = queue.size() / 3;
  double mid = 0, late = 0;
  for (std::size_t i = third; i < 2 * third; ++i) mid += queue[i];
  for (std::size_t i = queue.size() - third; i < queue.size(); ++i) late += queue[i];
  result.set(metric::kQueueDelayDriftS, third > 0 ? (late - mid) / double(third) : 0.0);
  set_distribution(result, queue, metric::kQueueDelayMeanS,
                   {{50, metric::kQueueDelayP50S}, {99, metric::kQueueDelayP99S}},
                   metric::kQueueDelayMaxS);
  set_distribution(result, ttft, metric::kTtftMeanS,
                   {{50, metric::kTtftP50S}, {90, metric::kTtftP90S}, {99, metric::kTtftP99S}},
                   metric::kTtftMaxS);
  result.set(metric::kTbtMeanS, totals.gaps.mean());
  for (const PercentileMetric& p :
       {PercentileMetric{50, metric::kTbtP50S}, {90, metric::kTbtP90S}, {99, metric::kTbtP99S}})
    result.set(p.metric, totals.gaps.percentile(p.p));
  result.set(metric::kTbtMaxS, totals.gaps.max());
  std::sort(tpot.begin(), tpot.end());
  result.set(metric::kTpotMeanS, mean(tpot));
  for (const PercentileMetric& p :
       {PercentileMetric{50, metric::kTpotP50S}, {90, metric::kTpotP90S}, {99, metric::kTpotP99S}})
    result.set(p.metric, percentile(tpot, p.p));
  set_distribution(result, e2e, metric::kE2eMeanS,
                   {{50, metric::kE2eP50S}, {90, metric::kE2eP90S}, {99, metric::kE2eP99S}},
                   metric::kE2eMaxS);
  result.set(metric::kMeanRequestsInSystem, totals.in_system_integral / total_s);
  result.set(metric::kKvCacheBlocks, double(blocks));
  result.set(metric::kKvCacheMeanPct,
             100.0 * totals.kv_used_integral / (double(blocks) * replicas * total_s));
  result.set(metric::kKvCacheMaxPct, 100.0 * totals.kv_max_fraction);
  result.set(metric::kPreemptions, double(totals.preemptions));
  if (w.preemption == ServingWorkload::Preemption::kSwap) {
    result.set(metric::kSwappedRequests, double(totals.swap_outs));
    result.set(metric::kSwapOutBytes, totals.swap_out_bytes);
    result.set(metric::kSwapInBytes, totals.swap_in_bytes);
  }
  if (caching) {
    const double looked = double(totals.prefix_lookup_blocks);
    const auto pct = [&](long hits) { return looked > 0 ? 100.0 * double(hits) / looked : 0.0; };
    result.set(metric::kKvPrefixLookupBlocks, looked);
    result.set(metric::kKvHitPct,
               pct(totals.hit_gpu_blocks + totals.hit_host_blocks + totals.hit_nvme_blocks));
    result.set(metric::kKvHitGpuPct, pct(totals.hit_gpu_blocks));
    result.set(metric::kKvHitHostPct, pct(totals.hit_host_blocks));
    result.set(metric::kKvHitNvmePct, pct(totals.hit_nvme_blocks));
    result.set(metric::kKvRecomputeAvoidedTokens, totals.recompute_avoided_tokens);
    const auto misses = static_cast<long>(live.size()) - ttft_hits;
    if (ttft_hits > 0) result.set(metric::kTtftPrefixHitMeanS, ttft_hit_sum / double(ttft_hits));
    if (misses > 0) result.set(metric::kTtftPrefixMissMeanS, ttft_miss_sum / double(misses));
    result.set(metric::kKvGpuTierBlocks, double(gpu_tier_blocks) * replicas);
    result.set(metric::kKvHostTierBlocks, double(tier_blocks(kv.host_bytes)) * replicas);
    result.set(metric::kKvNvmeTierBlocks, double(tier_blocks(kv.nvme_bytes)) * replicas);
    result.set(metric::kKvHostTierBytes, kv.host_bytes);
    result.set(metric::kKvNvmeTierBytes, kv.nvme_bytes);
    result.set(metric::kKvHostReadBytes, double(totals.hit_host_blocks) * prefix_block_bytes);
    result.set(metric::kKvNvmeReadBytes, double(totals.hit_nvme_blocks) * prefix_block_bytes);
    result.set(metric::kKvHostWriteBytes, double(totals.host_write_blocks) * prefix_block_bytes);
    const double nvme_written = double(totals.nvme_write_blocks) * prefix_block_bytes;
    result.set(metric::kKvNvmeWriteBytes, nvme_written);
    if (kv.nvme_bytes > 0) {
      // Drive writes per day at this write rate: bytes written a day over the array's capacity
      // (the unit of a drive's endurance rating, DWPD, over its warranty).
      const NvmeArray& a = s.hardware.nvme;
      const double array_bytes = a.count * a.drive.capacity_tb * 1e12;
      const double per_day = nvme_written / total_s * 86400.0 / array_bytes;
      result.set(metric::kNvmeDriveWritesPerDay, per_day);
      if (a.drive.dwpd > 0) {
        result.set(metric::kNvmeDwpdRating, a.drive.dwpd);
        result.set(metric::kNvmeDwpdUsedPct, 100.0 * per_day / a.drive.dwpd);
      }
    }
  }
  result.set(metric::kIterations, double(totals.iterations));
  result.set(metric::kReplicas, replicas);
  result.set(metric::kWeightsBytes, model_weight_bytes(m, p));
  if (nvme) {
    result.set(metric::kNvmeReadGbpsModel, model.nvme_read_gbps());
    result.work.nvme_gbps_model = model.nvme_read_gbps();
  }
  collect_usage(engine, total_s, result);
  return result;
}

}  // namespace

namespace workloads {
const WorkloadOps serving_workload{
    "serving",
    WorkloadKind::kServing,
    "online serving: requests arriving over time (Poisson, gamma or a trace), batched by a static, "
    "continuous (vLLM) or chunked-prefill (Sarathi-Serve) scheduler; latency percentiles and "
    "goodput",
    &run_serving,
    nullptr,
    nullptr,
    &serving_fit_capacity};
}  // namespace workloads

}  // namespace tiersim::sim
