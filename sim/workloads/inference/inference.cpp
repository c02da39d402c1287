// Offloaded LLM inference on the event engine: ZeRO-Inference's layer-by-layer weight streaming
// (and FlexGen's block schedule), with the KV cache on the GPU or in host DRAM.
//
// Two processes run per pipeline stage. The fetch process walks the stage's modules pass after
// pass, takes a prefetch slot, and moves each parameter tensor from its tier: NVMe straight into
// GPU memory (GDS), NVMe into a pinned swap buffer and then over PCIe (AIO), or host DRAM over
// PCIe. The compute process waits for a module's weights, runs it, and frees the slot. Everything
// competes for the same resources (NVMe array, PCIe each way, GPU, CPU), so overlap, queueing and
// the bottleneck are read off the timeline.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "model/capacity.hpp"
#include "model/errors.hpp"
#include "model/layout.hpp"
#include "model/parallelism.hpp"
#include "model/perf.hpp"
#include "model/power.hpp"
#include "model/units.hpp"
#include "model/weight_stream.hpp"
#include "model/zero3_swap.hpp"
#include "sim/workloads/inference/flexgen.hpp"
#include "sim/workloads/inference/inference.hpp"
#include "sim/workloads/inference/metrics.hpp"
#include "sim/workloads/workload.hpp"

namespace tiersim::sim {
namespace {

// Flags one process sets and another waits for, both in the same order (numbered 0, 1, 2 ...). The
// waiter drops each flag once it has passed it, so only the flags between the two are alive: memory
// follows how far the setter runs ahead, not passes x modules (a long generation or a deep model
// would otherwise hold one flag per layer and token).
class FlagQueue {
 public:
  explicit FlagQueue(Engine& engine) : engine_(&engine) {}
  // Flag number `k`; k is never below the next one the waiter has yet to pass.
  Flag& at(std::uint64_t k) {
    while (base_ + flags_.size() <= k) flags_.emplace_back(*engine_);
    return flags_[static_cast<std::size_t>(k - base_)];
  }
  // The waiter has passed the oldest flag.
  void pop() {
    flags_.pop_front();
    ++base_;
  }

 private:
  Engine* engine_;
  std::deque<Flag> flags_;  // a deque: growing it keeps references to waited-on flags valid
  std::uint64_t base_ = 0;
};

// A first-in-first-out queue of at most a fixed number of elements, in one allocation: the reads a
// fetcher has in flight, indexed on every tensor. The storage is a power of two at least the
// capacity, so an index wraps with a mask (std::deque's indexing costs a division).
template <class T>
class Ring {
 public:
  void reset(std::size_t capacity) {
    capacity_ = std::max<std::size_t>(1, capacity);
    std::size_t storage = 1;
    while (storage < capacity_) storage *= 2;
    items_.assign(storage, T{});
    mask_ = storage - 1;
    head_ = size_ = 0;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return items_[(head_ + i) & mask_]; }
  T& front() { return items_[head_]; }
  T& back() { return (*this)[size_ - 1]; }
  bool full() const { return size_ == capacity_; }
  // Appends an element and returns it, holding whatever the slot held last: the caller sets it.
  T& push_back() {
    if (full()) throw std::logic_error("Ring: full");
    ++size_;
    return back();
  }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }

 private:
  std::vector<T> items_;
  std::size_t capacity_ = 0, mask_ = 0, head_ = 0, size_ = 0;
};

struct StageResources {
  Resource* gpu = nullptr;   // seconds of kernel time
  Resource* h2d = nullptr;   // bytes, host to this stage's GPU(s)
  Resource* d2h = nullptr;   // bytes, GPU(s) to host
  Resource* peer = nullptr;  // bytes, GPU-to-GPU (tensor-parallel all-reduce, pipeline hand-off)
  std::unique_ptr<Semaphore> slots;
  std::vector<int> modules;
  // Streamed modules' weights in fetch order (pass by pass); resident modules need no flag.
  std::unique_ptr<FlagQueue> weights_ready;
  std::uint64_t fetched = 0, computed = 0;
  // [s] when this stage's latest NVMe read lands: the fetcher issues its next read no earlier
  // (InferenceSim::fetch_module, DeepSpeed's swap-in waits).
  double read_lands_s = 0;
  // Data-parallel ranks on a serial gather stream (ExecutionStack::zero3_gather_serial_stream):
  // the module's all-gather last launched; the next blocking partition copy waits for it, the
  // next NVMe read does not (InferenceSim::fetch_module).
  std::shared_ptr<Latch> gather_pending;
  // This stage's input, one flag per (pass, micro-batch): number pass * micro-batches + micro.
  std::unique_ptr<FlagQueue> input;
};

class InferenceSim {
 public:
  InferenceSim(const Scenario& s, const SimOptions& o)
      : s_(s),
        em_(with_stack(o.exec, s.policy.stack)),
        p_(s.policy),
        m_(s.model),
        w_(s.inference),
        event_per_tensor_(o.event_per_tensor) {
    // An MoE with dense layers: each kind of layer computes as its own (model/llm.hpp
    // layer_model); made only for such a model, every other run computes with m_.
    if (m_.mixed_layers()) layer_models_.emplace(layer_model(m_, true), layer_model(m_, false));
    engine_.enable_trace(o.trace);
    engine_.keep_spans(o.breakdown);
    engine_.stop_when(o.stop);
  }

  RunResult run();

 private:
  // One tensor's fetch as the weight-stream model gives it (model/weight_stream.hpp: the bytes
  // from each tier, the read's time at the array's operating point, the bytes on each GPU's link,
  // the pageable copy's staging time), and what it costs this engine's resources, worked out once
  // per run rather than on each of the passes x layers fetches.
  struct TensorFetch : TensorStream {
    // The same as each resource's work (Resource::work), for the reservations every path makes
    // with Engine::reserve_work_from (reserve_read_work, reserve_host_copy_work; the reserved
    // path's bounce too): on the stage-0 resources (all stages' links have the same rate), the
    // NVMe part's read and its copy over the link (GDS: with the read; AIO: the bounce), and the
    // host part's copy over the link and (pageable) on the CPU.
    Work read_work{}, link_work{}, host_link_work{}, host_cpu_work{};
    // The read's load on the drives (model/power.hpp nvme_load): the rate it achieves, latency
    // included, over their rated read rate.
    double read_load = 1;
    // ZeRO-Inference's data-parallel ranks (policy.parallelism.data > 1): this rank's partition
    // of the host part over its own link, and what the PCIe switch's uplink carries for the host
    // part and for the NVMe part's bounce, all ranks behind it together (zero3_gather_traffic).
    double dp_host_bytes = 0, host_uplink_bytes = 0, bounce_uplink_bytes = 0;
    // On a serial gather stream (ExecutionStack::zero3_gather_serial_stream) the all-gather of
    // this tensor's partitions, launched once its copies are on the GPU: DeepSpeed gathers what
    // one hook fetches, a submodule's parameters (a Linear's weight; its bias is persistent).
    Zero3GatherTraffic gather{};
  };
  struct ModuleFetch {
    // Its tensors in fetch order (tensors with nothing to move left out): tensors[first ...
    // first + count) of the pass's FetchPlan, which holds every module's in one allocation
    // (modules with the same tensors may share one range: plan_fetches).
    std::size_t first = 0, count = 0;
    int nvme_reads = 0;
    // On a serial gather stream: what the module gathers beyond its tensors' own all-gathers
    // (partitioned parameters that are not offloaded), after them.
    Zero3GatherTraffic rest_gather{};
  };
  struct FetchPlan {
    std::vector<TensorFetch> tensors;
    std::vector<ModuleFetch> modules;
    std::span<const TensorFetch> of(const ModuleFetch& m) const {
      return {tensors.data() + m.first, m.count};
    }
  };
  // The plan of a pass: the prefill's, or the decode passes' where they fetch other experts.
  const FetchPlan& plan_of(int pass) const {
    return fetch_plans_[pass == 0 || !decode_plan_differs_ ? 0 : 1];
  }
  void plan_fetches();
  void plan_swap_schedule();
  Task fetch_stage(int stage);
  Task compute_stage(int stage);
  Task fetch_module(int stage, int module, int pass, std::uint64_t ready_flag);
  // Returns where the fetcher's clock ends: the caller waits until then. A plain function, not
  // a coroutine: it never waits before the end, and a frame per module was 2,640 per point.
  // Stage 0's: the path runs where there is one stage.
  double fetch_module_reserved(int module, int pass, std::uint64_t ready_flag, double start_s);
  template <bool bounces>
  double fetch_module_reserved_as(int module, int pass, std::uint64_t ready_flag, double start_s);
  // The module with this fetch number has its weights on the GPU at `t_s` [s]: its ready flag is
  // set then (an event), or, on the direct path, the time is kept for compute to read.
  void weights_ready_at(std::uint64_t fetch_index, double t_s);
  // [s] of CPU time a pageable copy of `bytes` takes (WeightStreamPoint::pageable_bytes_per_s).
  double pageable_copy_s(double bytes) const { return bytes / stream_.pageable_bytes_per_s; }
  // The two reservations of a tensor's fetch, made by every path (fetch_module's events,
  // fetch_module_reserved, run_direct) with the work worked out in plan_fetches (every stage's
  // link has stage 0's rate); each returns its end [s]:
  // - the synchronous copy of its host-DRAM part over the stage's link `h2d`; pageable memory: a
  //   CPU thread stages the copy, so it runs no faster than that memcpy and occupies the CPU,
  //   serialising with CPU attention;
  // - the read of its NVMe part: the array for the read's time, and with GDS (no bounce) the link
  //   to the GPU with it; it ends when the data lands (on the GPU, or in its swap buffer).
  double reserve_host_copy_work(double ready_s, Resource& h2d, const TensorFetch& t, Tag tag) {
    if (p_.pin_memory) return engine_.reserve_work_from(ready_s, h2d, t.host_link_work, tag);
    // The driver's staging memcpy runs on the calling thread: one core busy (the load is the
    // CPU's; the power model reads a link's bytes, not its load).
    tag.load = cpu_core_load(s_.hardware.host, 1.0);
    return engine_.reserve_work_from(ready_s, h2d, t.host_link_work, *cpu_, t.host_cpu_work, tag);
  }
  // The fetch process's synchronous hold for a tensor's host-DRAM part: the copy above, then the
  // gather's copies in GPU memory that the next copy waits for (TensorStream::gather_copy_s, on
  // the gather stream: the link idles, the compute stream does not wait).
  double host_fetch_end(double ready_s, Resource& h2d, const TensorFetch& t, Tag tag) {
    return reserve_host_copy_work(ready_s, h2d, t, tag) + t.gather_copy_s;
  }
  // Where the gather copies each swap buffer to the GPU (WeightStreamPoint::bounce_in_gather):
  // the fetch process's hold for a landed read's copy over the link `h2d`, then the gather's
  // copies in GPU memory, as host_fetch_end for the host part.
  double bounce_fetch_end(double ready_s, Resource& h2d, const TensorFetch& t, Tag tag) {
    return engine_.reserve_work_from(ready_s, h2d, t.link_work, tag) + t.bounce_gather_copy_s;
  }
  // Data-parallel ranks on a serial gather stream: after a partition's copy, the gather's copies
  // in GPU memory that the stack's gather call makes (TensorStream::gather_copy_s,
  // bounce_gather_copy_s; DeepSpeed v0.7 with several parameters in one call: the flat buffer's
  // torch.cat before the all-gather and the unflattening one after). They hold the gather stream,
  // so this process waits for them. Both are placed here, before the all-gather, as the one-GPU
  // copies are placed after the host copy.
  Task gather_copies(double copies_s) {
    if (copies_s > 0) co_await engine_.delay(copies_s);
  }
  template <bool bounces>
  double reserve_read_work(double ready_s, Resource& h2d, const TensorFetch& t, Tag tag) {
    // The load is the drives'; the power model reads a link's bytes, not its load.
    tag.load = t.read_load;
    if constexpr (bounces) return engine_.reserve_work_from(ready_s, *nvme_, t.read_work, tag);
    return engine_.reserve_work_from(ready_s, *nvme_, t.read_work, h2d, t.link_work, tag);
  }
  void issue_nvme_read(StageResources& st, const TensorFetch& t, int pass, int module,
                       const std::shared_ptr<Latch>& done);
  Task issue_nvme_read_later(StageResources& st, const TensorFetch& t, int pass, int module,
                             std::shared_ptr<Latch> done);
  Task nvme_read_landed(Resource* bounce_h2d, double link_bytes, double uplink_bytes, int pass,
                        int module, std::shared_ptr<Latch> done);
  Task signal_ready(std::shared_ptr<Latch> reads, Flag* ready);
  // Data-parallel ranks: once the module's partitions are on the GPU, the all-gather of its
  // partitioned parameters; then its weights are ready.
  Task gather_then_ready(std::shared_ptr<Latch> reads, int stage, int module, int pass,
                         Flag* ready);
  // The all-gather ring itself (see there).
  Task ring_gather(int stage, const Zero3GatherTraffic& g, int module, int pass);
  // The same on a serial gather stream, for a tensor or the module's rest (see there).
  Task gather_in_series(std::shared_ptr<Latch> reads, std::shared_ptr<Latch> after, int stage,
                        Zero3GatherTraffic g, int module, int pass, std::shared_ptr<Latch> done,
                        std::shared_ptr<Latch> module_done, Flag* ready);
  // One copy of a data-parallel rank: `own_bytes` over its own link (`own`), while the PCIe
  // switch's uplink, where there is one, carries `uplink_bytes` for all the ranks behind it and,
  // for pageable host memory, the CPUs stage every rank's copy (see there).
  Task partition_copy(Resource* own, double own_bytes, double uplink_bytes, bool pageable,
                      Tag tag);
  // The same, issued without waiting: counts `done` down when it has landed.
  Task partition_copy_then(Resource* own, double own_bytes, double uplink_bytes, bool pageable,
                           Tag tag, std::shared_ptr<Latch> done);
  Task compute_module(int stage, int module, int pass, double sub_batch);
  // The keys a query of `pass` attends to: the prompt in the prefill (0); in a decode step its
  // context, the window (or a chunked layer's own chunk) on a sliding layer where the stack reads
  // only the window (stack_window_context, the mean over the layers).
  double pass_context(int pass) const {
    return pass == 0 ? double(w_.prompt_tokens)
                     : stack_window_context(p_.stack, m_, double(w_.prompt_tokens + pass));
  }
  // compute_module's GPU time for a layer of this pass, sub-batch and size. The layers of a pass
  // share their shape and context, so it is worked out for the first (layer_gpu_s_of) and reused:
  // the same arithmetic on the same inputs, so the same value. Inline: every layer asks.
  // One GPU step: its time and the share of the GPU's dynamic power it draws (Tag::load).
  struct GpuStep {
    double s = 0;  // [s]
    double load = 1;
  };
  GpuStep layer_gpu_s(int pass, double sub_batch, double elements, const LlmSpec& lm) {
    const LayerTime& memo = layer_time_;
    if (memo.pass == pass && memo.sub_batch == sub_batch && memo.elements == elements &&
        memo.model == &lm)
      return memo.step;
    return layer_gpu_s_of(pass, sub_batch, elements, lm);
  }
  GpuStep layer_gpu_s_of(int pass, double sub_batch, double elements, const LlmSpec& lm);
  // The model layer `module` computes as: m_, or for an MoE with dense layers that kind of
  // layer's own (layer_models_).
  const LlmSpec& layer_m(int module) const {
    if (!layer_models_) return m_;
    const int layer = modules_[static_cast<std::size_t>(module)].layer;
    return m_.layer_has_experts(layer) ? layer_models_->first : layer_models_->second;
  }
  // An embedding or head module's GPU time: compute_module's one step for it.
  GpuStep edge_gpu_s(const WeightModule& mod, int module, int pass, double sub_batch);
  // The kernels as the board runs them under its power limit (model/power.hpp), remembered for
  // the last kernel groups asked (step_memo_): the layers of a pass ask with the same kernels, and
  // the power limit's clock search was a sixth of a KV-offload run. The same inputs give the same
  // value, so remembering changes nothing.
  GpuStep gpu_step(const KernelTime& k) {
    for (const StepMemo& m : step_memo_)
      if (m.kernels.s == k.s && m.kernels.compute_s == k.compute_s &&
          m.kernels.memory_s == k.memory_s)
        return m.step;
    const LimitedKernels run = gpu_power_limited(s_.hardware.gpu, k);
    const GpuStep step{run.s, run.load};
    step_memo_[next_step_memo_] = StepMemo{k, step};
    next_step_memo_ = (next_step_memo_ + 1) % step_memo_.size();
    return step;
  }
  // The direct path (run_direct): fetch_stage's and compute_stage's timelines without events.
  void run_direct();
  void compute_direct_through(std::uint64_t fetch_index);
  double layer_allreduce_from(StageResources& st, int pass, int module, double sub_batch,
                              double ready_s);
  // True when compute_module of this module is one GPU step, layer_gpu_s long: a layer with its
  // KV cache on the GPU and no tensor parallelism (compute_stage then makes that step itself,
  // without a coroutine frame per layer).
  bool one_gpu_step(const WeightModule& mod) const {
    return mod.kind == WeightModule::Kind::kLayer && !(p_.kv_cache.cpu > 0) && !(tp_ > 1);
  }

  Flag& stage_input(int pass, int stage, int micro) {
    return stages_[static_cast<std::size_t>(stage)].input->at(
        static_cast<std::uint64_t>(pass) * static_cast<std::uint64_t>(n_micro_) +
        static_cast<std::uint64_t>(micro));
  }
  bool streamed(int module) const { return streamed_bytes_[static_cast<std::size_t>(module)] > 0; }

  const Scenario& s_;
  ExecutionModel em_;
  const Policy& p_;
  const LlmSpec& m_;
  // An MoE with dense layers: the model its layers with experts, then its dense ones, compute as.
  std::optional<std::pair<LlmSpec, LlmSpec>> layer_models_;
  const InferenceWorkload& w_;
  Engine engine_;
  std::vector<StageResources> stages_;
  Resource* nvme_ = nullptr;
  Resource* cpu_ = nullptr;
  std::unique_ptr<Semaphore> swap_buffers_;
  std::vector<WeightModule> modules_;
  std::vector<double> module_elements_;  // each module's elements(), summed once per run
  std::vector<double> streamed_bytes_;
  // Data-parallel ranks: each module's all-gather as this rank sees it (zero3_gather_traffic).
  std::vector<Zero3GatherTraffic> gathers_;
  std::array<FetchPlan, 2> fetch_plans_;  // [0] prefill pass, [1] decode passes if they differ
  // DeepSpeed v0.7's swap-in order (model/zero3_swap.hpp), where it applies
  // (plan_swap_schedule): for each tensor of the pass plan, what the fetch process does before
  // its gather copies it from its swap buffer (fetch_module). Empty where it does not apply.
  struct SwapTurn {
    std::vector<std::size_t> issue;  // tensors of the pass plan whose reads it issues first
    bool wait = false;               // then it waits for every read in flight
  };
  std::vector<SwapTurn> swap_turns_;
  std::vector<int> plan_module_;            // the module of each tensor of the pass plan
  std::vector<double> swap_reads_lands_s_;  // [s] reads issued and not yet waited for
  bool decode_plan_differs_ = false;
  WeightStreamPoint stream_;  // the weights' operating point (model/weight_stream.hpp)
  // fetch_module_reserved's reads, in issue order, from the oldest whose swap buffer is still in
  // use; reads_[bounced_ ...] have landed or will land on the host and their bounce copy to the
  // GPU is not reserved yet (AIO).
  struct ReadInFlight {
    double lands_s = 0;       // [s] on the GPU (GDS) or in its swap buffer (AIO)
    Work bounce_work;         // AIO: the copy to the GPU once landed, on the link (and its tag)
    double free_s = 0;        // [s] its buffer is free: the data is on the GPU
    // The bounce copy's pass_tag, made once per module rather than from a pass and module number
    // read back here: the copy's stage (prefill or decode) indexes the link's per-stage sums, and
    // deriving it from numbers stored a few tensors earlier put that load on the fetcher's
    // critical path (a third of the AIO loop's samples sat on it).
    Tag bounce_tag;
    std::uint64_t fetch_index = 0;  // the module's number in fetch order
    bool sets_ready = false;        // the module's last read: its landing makes it ready
    double ready_not_before_s = 0;  // [s] when the fetcher was done with that module
  };
  Ring<ReadInFlight> reads_;  // at most one per swap buffer
  std::size_t bounced_ = 0;
  // [s] when reads_[bounced_] lands, infinity when every read is bounced: bounce_landed_by runs
  // at every tensor and mostly finds nothing to do, in one comparison.
  double next_landing_s_ = std::numeric_limits<double>::infinity();
  // layer_gpu_s's memo: the last layer time worked out, and for which pass, sub-batch and size.
  struct LayerTime {
    int pass = -1;
    double sub_batch = 0;
    double elements = 0;
    const LlmSpec* model = nullptr;  // the layer kind's model (layer_m)
    GpuStep step;
  };
  LayerTime layer_time_;
  // layer_allreduce_from's memo: the all-reduces of a layer of the last token count asked.
  struct AllreduceMemo {
    double tokens = std::numeric_limits<double>::quiet_NaN();  // NaN equals nothing
    TensorParallelComm comm;
  };
  AllreduceMemo allreduce_memo_;
  // gpu_step's memo: the kernel groups last worked out, oldest replaced first. Four: a decode
  // layer with its KV cache in host memory makes two GPU steps, an edge module one more. Starts
  // with a time no kernel group has (NaN equals nothing).
  struct StepMemo {
    KernelTime kernels{std::numeric_limits<double>::quiet_NaN(), 0, 0};
    GpuStep step;
  };
  std::array<StepMemo, 4> step_memo_{};
  std::size_t next_step_memo_ = 0;
  bool event_per_tensor_ = false;  // SimOptions::event_per_tensor
  bool reserve_ahead_ = false;     // fetch with fetch_module_reserved (see there)
  bool direct_ = false;            // run_direct (see there)
  // The direct path's state: where compute_stage's process would be, and which module it would
  // compute next; when each fetched module's weights are ready, by fetch number modulo the size
  // (compute is never more than the prefetch slots behind the fetcher).
  struct DirectCompute {
    double clock_s = 0;  // [s]
    int pass = 0;
    std::size_t position = 0;    // in the stage's modules
    std::uint64_t computed = 0;  // streamed modules computed
  };
  DirectCompute compute_;
  std::vector<double> ready_at_s_;
  std::uint64_t ready_mask_ = 0;  // ready_at_s_.size() - 1
  void bounce(ReadInFlight& r);
  void bounce_next();  // bounces reads_[bounced_]
  void bounce_landed_by(double t_s);
  void bounce_through(std::size_t i);
  void bounce_modules_through(std::uint64_t fetch_index);
  int n_modules_ = 0, n_stages_ = 1, n_micro_ = 1, passes_ = 1;
  double tp_ = 1;
  KvCacheShape kv_;  // the KV cache's form on each GPU (set in run())
  // ZeRO-Inference's data-parallel ranks (policy.parallelism.data): the simulated GPU is one of
  // them, with its own batch; the NVMe array, the CPUs and a PCIe switch's uplink are shared, so
  // what they do is charged for every rank at once.
  double dp_ = 1;
  // Its ranks gather on one stream (ExecutionStack::zero3_gather_serial_stream): each tensor is
  // all-gathered once its copies are on the GPU (fetch_module, plan_fetches).
  bool serial_gather() const { return dp_ > 1 && p_.stack.zero3_gather_serial_stream; }
  double rank_batch_ = 1;     // sequences this GPU runs: workload.batch / data
  int prefetch_ = 1;          // modules fetched ahead of the one computing
  // [s] the fetcher's work for a tensor swapped in from NVMe: ExecutionModel::fetch_overhead_s
  // plus swap_in_overhead_s, summed once so that every path adds the same value.
  double swap_in_s_ = 0;
  Resource* uplink_ = nullptr;  // the PCIe switch's uplink shared by this rank's switch
  double prefill_end_s_ = 0;
  double weight_wait_s_ = 0;
  double cpu_attention_s_ = 0;
  double allgather_bytes_ = 0;  // [bytes] this rank received in ZeRO-3 gathers
};

// One partition read from NVMe into its swap buffer, then (AIO) the bounce copy to the GPU, or
// (GDS) straight into GPU memory; the buffer is free again once the data is on the GPU.
// DeepSpeed's aio threads run one read op at a time each (csrc/aio/py_lib/deepspeed_aio_thread.cpp,
// deepspeed_aio_thread_t::run: pop the next op, do_aio_operation_overlap, complete), so the drive
// still serves the partitions one after another and each pays its first request's latency
// (NvmeArrayTiming::read_s); what the asynchronous swapper removes is the wait between them.
// The fetching process issues the read itself: the drive (and, with GDS, the link) is reserved
// now, and only the landing needs an event.
void InferenceSim::issue_nvme_read(StageResources& st, const TensorFetch& t, int pass, int module,
                                   const std::shared_ptr<Latch>& done) {
  Resource* h2d = st.h2d;
  const Tag tag = pass_tag(activity::kWeightsNvme, pass, module);
  const double lands_s = p_.io_path == IoPath::kGds
                             ? reserve_read_work<false>(engine_.now(), *h2d, t, tag)
                             : reserve_read_work<true>(engine_.now(), *h2d, t, tag);
  st.read_lands_s = lands_s;
  engine_.spawn_at(lands_s, nvme_read_landed(p_.io_path == IoPath::kGds ? nullptr : h2d,
                                             t.nvme_link_bytes, t.bounce_uplink_bytes, pass, module,
                                             done));
}

// The same read issued from a process of its own, which reserves later in the same instant, after
// the events already due then: for a tensor split between NVMe and host DRAM, whose fetcher's
// synchronous host copy has always reserved the link first. (Issuing every read directly saves a
// quarter of a decode pass's events; every shipped scenario and all 10,080 points of the drives
// sweep scaled by prompt length give the same metrics both ways.)
Task InferenceSim::issue_nvme_read_later(StageResources& st, const TensorFetch& t, int pass,
                                         int module, std::shared_ptr<Latch> done) {
  issue_nvme_read(st, t, pass, module, done);
  co_return;
}

// A read has landed in its buffer: (AIO) the bounce copy to the GPU, then the buffer is free.
Task InferenceSim::nvme_read_landed(Resource* bounce_h2d, double link_bytes, double uplink_bytes,
                                    int pass, int module, std::shared_ptr<Latch> done) {
  const Tag tag = pass_tag(activity::kWeightsBounce, pass, module);
  if (bounce_h2d && uplink_bytes > 0)
    co_await partition_copy(bounce_h2d, link_bytes, uplink_bytes, false, tag);
  else if (bounce_h2d)
    co_await bounce_h2d->use(link_bytes, tag);
  swap_buffers_->release();
  done->count_down();
}

Task InferenceSim::signal_ready(std::shared_ptr<Latch> reads, Flag* ready) {
  co_await reads->wait();
  ready->set();
}

// The two hops at once, each queued on its own resource from now: the uplink for every rank's
// share, the rank's own link for its own (with the CPUs for pageable memory); the copy is done
// when both are. Long copies stream through a switch (cut-through), so neither hop waits for the
// other to finish; and as one flow the own link would be held, idle, while a slower shared uplink
// drains the other ranks' shares, which the gathers, needing only the own link, could use.
Task InferenceSim::partition_copy(Resource* own, double own_bytes, double uplink_bytes,
                                  bool pageable, Tag tag) {
  double end_s = engine_.now();
  if (uplink_ && uplink_bytes > 0) {
    const Demand up{uplink_, uplink_bytes};
    end_s = engine_.reserve_all(&up, &up + 1, tag, 0.0);
  }
  const std::array<Demand, 2> copy{Demand{own, own_bytes},
                                   Demand{cpu_, dp_ * pageable_copy_s(own_bytes)}};
  end_s = std::max(end_s, engine_.reserve_all(copy.data(), copy.data() + (pageable ? 2 : 1), tag,
                                              0.0));
  co_await engine_.until(end_s);
}

Task InferenceSim::partition_copy_then(Resource* own, double own_bytes, double uplink_bytes,
                                       bool pageable, Tag tag, std::shared_ptr<Latch> done) {
  co_await partition_copy(own, own_bytes, uplink_bytes, pageable, tag);
  done->count_down();
}

// DeepSpeed's ZeRO-3 all-gathers a module's partitioned parameters once every rank's partition is
// on its GPU (partition_parameters.py, all_gather_coalesced after the NVMe swap-in or host copy
// of the partitions): a ring over the ranks, received on the GPU's PCIe link (NVLink where the
// GPU has it), the switch uplink taking the ring's edge into a switch where the ranks span
// several (model/perf.hpp zero3_gather_traffic).
Task InferenceSim::gather_then_ready(std::shared_ptr<Latch> reads, int stage, int module, int pass,
                                     Flag* ready) {
  co_await reads->wait();
  co_await ring_gather(stage, gathers_[static_cast<std::size_t>(module)], module, pass);
  ready->set();
}

// The ring over the ranks on the GPU's peer link where it has one, else on its PCIe link and the
// switch uplinks (`g`, zero3_gather_traffic). `g` outlives the ring: a member, or a parameter of
// the awaiting coroutine's frame.
Task InferenceSim::ring_gather(int stage, const Zero3GatherTraffic& g, int module, int pass) {
  StageResources& st = stages_[static_cast<std::size_t>(stage)];
  allgather_bytes_ += g.gather_bytes;
  if (g.gather_bytes > 0)
    co_await partition_copy(g.gather_on_peer_link ? st.peer : st.h2d, g.gather_bytes,
                            g.uplink_bytes, false,
                            pass_tag(activity::kAllgatherParams, pass, module));
}

// One all-gather on a serial gather stream (fetch_module): after `reads` and `after` (where given),
// the ring over the ranks (ring_gather); then `done` (the next blocking copy waits for it), the
// module's count of its tensors' gathers, and the module's ready flag, where given.
Task InferenceSim::gather_in_series(std::shared_ptr<Latch> reads, std::shared_ptr<Latch> after,
                                    int stage, Zero3GatherTraffic g, int module, int pass,
                                    std::shared_ptr<Latch> done, std::shared_ptr<Latch> module_done,
                                    Flag* ready) {
  if (reads) co_await reads->wait();
  if (after) co_await after->wait();
  co_await ring_gather(stage, g, module, pass);
  done->count_down();
  if (module_done) module_done->count_down();
  if (ready) ready->set();
}

// Issues a module's tensor fetches in order. Where the gather copies each swap buffer
// (hf-deepspeed-0.7) with prefetching on, the reads, waits and copies follow DeepSpeed v0.7's
// coordinator (plan_swap_schedule); what follows here is the rule elsewhere. NVMe reads are
// asynchronous, as DeepSpeed's
// AsyncPartitionedParameterSwapper issues them (swap_in(..., async_op=True) for every partition
// the coordinator prefetches, deepspeed/runtime/zero/partitioned_param_coordinator.py
// __prefetch_nvme_param_partitions): this process goes on to the next module while a read is in
// flight, within the free swap buffers (offload_param.buffer_count, policy.aio.swap_buffers;
// available_swap_in_buffers()). The module's weights are ready when its last read lands.
// Host-DRAM copies stay synchronous.
//
// But the reads do not queue back to back: each swap-in is issued only once the read before it
// has landed, and then only after the fetching process's work for the tensor
// (ExecutionModel::fetch_overhead_s and swap_in_overhead_s), so that work leaves the array idle
// rather than overlapping its reads. The same DeepSpeed code does this in three places:
// - every wait for a swapped-in parameter waits for all reads in flight
//   (partition_parameters.py _ensure_availability_of_partitioned_params ->
//   partitioned_param_swapper.py synchronize_reads: aio_read_handle.wait() on every pending read);
// - new swap-ins are issued only from a module's fetch, after that wait (fetch_sub_module: wait for
//   the module's parameters, then the prefetch);
// - the NVMe prefetch looks no further ahead than twice the elements being gathered
//   (__prefetch_nvme_param_partitions: `numel_considered > 2 * numel_in_flight` ends it), and the
//   gather prefetch stops at the first parameter still on NVMe (`_is_currently_on_nvme ... break`),
//   so on one GPU, where a gather is the parameter's own copy, one or two parameters are read
//   ahead of the one computing.
// Where the array is the bottleneck the per-tensor work is therefore paid once per tensor on the
// read path, whatever the array's rate: a fixed cost per layer that more drives do not shrink
// (Llama-3-70B on ND-H200-v5, deepnvme-2025-06: 8 Gen5 drives give 1.53x the tokens/s of 4 with
// GDS while ds_io reads 1.78x). Modelled per tensor, in fetch order: DeepSpeed's waits fall at
// module hooks, which in a Llama layer come after one to three reads. A host-DRAM tensor does not
// wait for the read before it: its copy is synchronous here, where DeepSpeed's is a non-blocking
// copy on the gather stream. Parameters of at most stage3_param_persistence_threshold elements,
// such as norms, stay on the GPU and are not in the plan (model/weight_stream.hpp).
Task InferenceSim::fetch_module(int stage, int module, int pass, std::uint64_t ready_flag) {
  StageResources& st = stages_[static_cast<std::size_t>(stage)];
  const FetchPlan& pass_plan = plan_of(pass);
  const ModuleFetch& plan = pass_plan.modules[static_cast<std::size_t>(module)];
  // Data-parallel ranks: where the stack's gather is one stream
  // (ExecutionStack::zero3_gather_serial_stream, DeepSpeed), each partition's copy is blocking,
  // so this process waits for it; each tensor is all-gathered once its copy is on the GPU, and
  // the next copy waits for that all-gather (the module is ready after its last one). Elsewhere
  // the copies are asynchronous, overlap each other, and the module is gathered once every read
  // and copy has landed.
  const bool serial_gather = this->serial_gather();
  // On that stream a blocking copy waits for the all-gather launched before it (DeepSpeed v0.7.2
  // partitioned_param_coordinator.py fetch_sub_module: __all_gather_params of the prefetch runs
  // the copies and launches the all-gather, then __prefetch_nvme_param_partitions issues the
  // next swap-ins; the next hook's copies, after synchronize_reads, queue behind that
  // all-gather). So an NVMe read overlaps the all-gather before it; a copy does not.
  const auto after_gather = [&]() -> Task {
    if (serial_gather && st.gather_pending) co_await st.gather_pending->wait();
  };
  int tensor_gathers = 0;
  if (serial_gather)
    for (const TensorFetch& t : pass_plan.of(plan)) tensor_gathers += t.gather.gather_bytes > 0;
  auto module_gathers = std::make_shared<Latch>(engine_, tensor_gathers);
  // Launches the tensor's all-gather once its copies are on the GPU.
  const auto launch_gather = [&](const TensorFetch& t) {
    if (!serial_gather || !(t.gather.gather_bytes > 0)) return;
    st.gather_pending = std::make_shared<Latch>(engine_, 1);
    engine_.spawn(gather_in_series(nullptr, nullptr, stage, t.gather, module, pass,
                                   st.gather_pending, module_gathers, nullptr));
  };
  int host_copies = 0;
  if (dp_ > 1)
    for (const TensorFetch& t : pass_plan.of(plan)) host_copies += t.cpu_bytes > 0 ? 1 : 0;
  auto reads = std::make_shared<Latch>(engine_, plan.nvme_reads + host_copies);
  for (const TensorFetch& t : pass_plan.of(plan)) {
    if (t.nvme_bytes > 0 && !swap_turns_.empty()) {
      // DeepSpeed v0.7's coordinator with prefetching (plan_swap_schedule): the reads
      // its hooks issue before this gather, each after the swapper's host work, then (where the
      // parameter's read is still in flight) the wait for every read, then the gather's copy
      // out of the swap buffer and (one GPU) its device copies. A read issued here lands while
      // the hooks' other work and the copies of the parameters before it run.
      const SwapTurn& turn = swap_turns_[static_cast<std::size_t>(&t - pass_plan.tensors.data())];
      for (std::size_t j : turn.issue) {
        co_await engine_.delay(em_.swap_in_overhead_s);
        swap_reads_lands_s_.push_back(
            reserve_read_work<true>(engine_.now(), *st.h2d, pass_plan.tensors[j],
                                    pass_tag(activity::kWeightsNvme, pass, plan_module_[j])));
      }
      if (turn.wait) {
        double lands_s = engine_.now();
        for (double l : swap_reads_lands_s_) lands_s = std::max(lands_s, l);
        swap_reads_lands_s_.clear();
        co_await engine_.until(lands_s);
      }
      co_await engine_.delay(em_.fetch_overhead_s);
      // Data-parallel ranks: each its partition, after the all-gather launched before it, and
      // the tensor's all-gather launched once the copy is on the GPU (as below).
      co_await after_gather();
      if (t.bounce_uplink_bytes > 0) {
        co_await partition_copy(st.h2d, t.nvme_link_bytes, t.bounce_uplink_bytes, false,
                                pass_tag(activity::kWeightsBounce, pass, module));
        co_await gather_copies(t.bounce_gather_copy_s);
      } else
        co_await engine_.until(bounce_fetch_end(engine_.now(), *st.h2d, t,
                                                pass_tag(activity::kWeightsBounce, pass, module)));
      reads->count_down();
      launch_gather(t);
      continue;
    }
    // The next swap-in waits for the read before it to land (see above the function).
    if (t.nvme_bytes > 0 && st.read_lands_s > engine_.now())
      co_await engine_.until(st.read_lands_s);
    co_await engine_.delay(t.nvme_bytes > 0 ? swap_in_s_ : em_.fetch_overhead_s);
    if (t.nvme_bytes > 0 && stream_.bounce_in_gather) {
      // The gather copies the swap buffer to the GPU: this process waits for the read, then
      // for that copy and the gather's device copies (model/stack.cpp hf-deepspeed-0.7). With
      // data-parallel ranks each rank does so for its partition while the others do for theirs:
      // the array reads every rank's partition (read_s of the whole tensor, at the operating
      // point of all their readers), each rank's link carries its own.
      co_await swap_buffers_->acquire();
      const double lands_s = reserve_read_work<true>(
          engine_.now(), *st.h2d, t, pass_tag(activity::kWeightsNvme, pass, module));
      st.read_lands_s = lands_s;
      co_await after_gather();
      if (t.cpu_bytes > 0 && dp_ > 1) {
        co_await partition_copy(st.h2d, t.dp_host_bytes, t.host_uplink_bytes, !p_.pin_memory,
                                pass_tag(activity::kWeightsCpu, pass, module));
        co_await gather_copies(t.gather_copy_s);
      } else if (t.cpu_bytes > 0)
        co_await engine_.until(host_fetch_end(engine_.now(), *st.h2d, t,
                                              pass_tag(activity::kWeightsCpu, pass, module)));
      if (t.bounce_uplink_bytes > 0) {
        // Data-parallel ranks behind a shared switch: this rank's partition over its own link,
        // every rank's over the uplink, then the gather's device copies where its call makes any.
        co_await engine_.until(std::max(engine_.now(), lands_s));
        co_await partition_copy(st.h2d, t.nvme_link_bytes, t.bounce_uplink_bytes, false,
                                pass_tag(activity::kWeightsBounce, pass, module));
        co_await gather_copies(t.bounce_gather_copy_s);
      } else {
        co_await engine_.until(bounce_fetch_end(std::max(engine_.now(), lands_s), *st.h2d, t,
                                                pass_tag(activity::kWeightsBounce, pass, module)));
      }
      swap_buffers_->release();
      reads->count_down();
      launch_gather(t);
      continue;
    }
    if (t.nvme_bytes > 0) {
      co_await swap_buffers_->acquire();
      // A tensor split between NVMe and host DRAM: its read reserves after this process's
      // synchronous host copy below, as it always has.
      if (t.cpu_bytes > 0)
        engine_.spawn(issue_nvme_read_later(st, t, pass, module, reads));
      else
        issue_nvme_read(st, t, pass, module, reads);
    }
    if (t.cpu_bytes > 0 && serial_gather) {
      co_await after_gather();
      co_await partition_copy(st.h2d, t.dp_host_bytes, t.host_uplink_bytes, !p_.pin_memory,
                              pass_tag(activity::kWeightsCpu, pass, module));
      co_await gather_copies(t.gather_copy_s);
      reads->count_down();
      if (t.nvme_bytes <= 0) launch_gather(t);
    } else if (t.cpu_bytes > 0 && dp_ > 1)
      engine_.spawn(partition_copy_then(st.h2d, t.dp_host_bytes, t.host_uplink_bytes,
                                        !p_.pin_memory,
                                        pass_tag(activity::kWeightsCpu, pass, module), reads));
    else if (t.cpu_bytes > 0)
      co_await engine_.until(host_fetch_end(
          engine_.now(), *st.h2d, t, pass_tag(activity::kWeightsCpu, pass, module)));
  }
  if (serial_gather) {
    // The rest after the tensors' gathers; the module is ready when it is done. (The NVMe part of
    // a tensor split with host DRAM is read asynchronously off this path: its gather joins the
    // rest.)
    st.gather_pending = std::make_shared<Latch>(engine_, 1);
    engine_.spawn(gather_in_series(reads, module_gathers, stage, plan.rest_gather, module, pass,
                                   st.gather_pending, nullptr, &st.weights_ready->at(ready_flag)));
  } else if (dp_ > 1)
    engine_.spawn(gather_then_ready(reads, stage, module, pass, &st.weights_ready->at(ready_flag)));
  else
    engine_.spawn(signal_ready(reads, &st.weights_ready->at(ready_flag)));
}

// fetch_module's timeline worked out by the fetching process itself, without an event per tensor.
// Where the fetcher is the only process that uses the NVMe array, the link to the GPU, the CPU
// and the swap buffers (one stage, no KV cache in host DRAM), nothing else reserves them, so its
// own reservations, made in the order fetch_module's events would make them and from the same
// times, give the same timeline, bit for bit:
// - each step's time is where fetch_module's process would be: the overhead after the previous
//   step, a swap buffer once the oldest one in use is free (reads land and free their buffers in
//   the order they were issued: the array serves them first come, first served);
// - an AIO bounce copy reserves the link when its read lands, so it is held back (in reads_) until
//   the fetcher's clock passes that landing, and reserved before any host copy the fetcher makes
//   later: the link serves both in the order of their times. A landing at the very time of a host
//   copy goes first, as its event, scheduled earlier, would;
// - a module's ready flag is set when its last read is on the GPU, by an event at that time.
// What fetch_module does with events, and this does not: the per-tensor overhead, buffer and
// landing events. The fetcher's own clock and the ready flags remain events.
double InferenceSim::fetch_module_reserved(int module, int pass, std::uint64_t ready_flag,
                                           double start_s) {
  // With GDS a read is on the GPU when it lands: nothing is ever held back to bounce. The loop is
  // compiled for each case (it runs for every tensor of every pass).
  return p_.io_path != IoPath::kGds
             ? fetch_module_reserved_as<true>(module, pass, ready_flag, start_s)
             : fetch_module_reserved_as<false>(module, pass, ready_flag, start_s);
}

template <bool bounces>
double InferenceSim::fetch_module_reserved_as(int module, int pass, std::uint64_t ready_flag,
                                              double start_s) {
  const FetchPlan& pass_plan = plan_of(pass);
  const ModuleFetch& plan = pass_plan.modules[static_cast<std::size_t>(module)];
  const double overhead_s = em_.fetch_overhead_s;
  Resource& h2d = *stages_.front().h2d;  // the path runs where there is one stage
  double clock = start_s;  // where fetch_module's process would be
  const Tag host_tag = pass_tag(activity::kWeightsCpu, pass, module),
            read_tag = pass_tag(activity::kWeightsNvme, pass, module),
            bounce_tag = pass_tag(activity::kWeightsBounce, pass, module);
  StageResources& st = stages_.front();
  for (const TensorFetch& t : pass_plan.of(plan)) {
    // The next swap-in waits for the read before it to land, as in fetch_module.
    if (t.nvme_bytes > 0 && st.read_lands_s > clock) clock = st.read_lands_s;
    clock = clock + (t.nvme_bytes > 0 ? swap_in_s_ : overhead_s);
    if constexpr (bounces) bounce_landed_by(clock);
    if (t.nvme_bytes <= 0) {
      clock = host_fetch_end(clock, h2d, t, host_tag);
      continue;
    }
    if constexpr (bounces) {
      if (stream_.bounce_in_gather) {
        // As fetch_module: the read, then (a split tensor) the host copy, then the gather's copy
        // of the swap buffer and its device copies, all before the next tensor. Nothing stays in
        // flight, so reads_ stays empty.
        const double lands_s = reserve_read_work<true>(clock, h2d, t, read_tag);
        st.read_lands_s = lands_s;
        if (t.cpu_bytes > 0) clock = host_fetch_end(clock, h2d, t, host_tag);
        clock = bounce_fetch_end(std::max(clock, lands_s), h2d, t, bounce_tag);
        continue;
      }
    }
    if (reads_.full()) {
      if constexpr (bounces) bounce_through(0);
      clock = std::max(clock, reads_.front().free_s);
      reads_.pop_front();
      --bounced_;
      if constexpr (bounces) bounce_landed_by(clock);
    }
    // A split tensor's read reserves after the synchronous host copy, as in fetch_module.
    const double issued = clock;
    if (t.cpu_bytes > 0) clock = host_fetch_end(clock, h2d, t, host_tag);
    ReadInFlight& r = reads_.push_back();
    r.lands_s = reserve_read_work<bounces>(issued, h2d, t, read_tag);
    st.read_lands_s = r.lands_s;
    r.fetch_index = ready_flag;
    r.sets_ready = false;
    if constexpr (bounces) {
      r.bounce_work = t.link_work;
      r.bounce_tag = bounce_tag;
      if (bounced_ + 1 == reads_.size()) next_landing_s_ = r.lands_s;  // the next to bounce
    } else {
      r.free_s = r.lands_s;  // on the GPU already: nothing to bounce
      ++bounced_;
    }
  }
  // fetch_module's signal_ready starts when the fetcher is done and waits for the last read.
  if (plan.nvme_reads == 0 || stream_.bounce_in_gather) {
    weights_ready_at(ready_flag, clock);
  } else if (bounced_ == reads_.size()) {
    weights_ready_at(ready_flag, std::max(reads_.back().free_s, clock));
  } else {
    reads_.back().sets_ready = true;
    reads_.back().ready_not_before_s = clock;
  }
  return clock;
}

void InferenceSim::weights_ready_at(std::uint64_t fetch_index, double t_s) {
  if (direct_)
    ready_at_s_[static_cast<std::size_t>(fetch_index & ready_mask_)] = t_s;
  else
    engine_.set_at(t_s, stages_.front().weights_ready->at(fetch_index));
}

void InferenceSim::bounce(ReadInFlight& r) {
  r.free_s =
      engine_.reserve_work_from(r.lands_s, *stages_.front().h2d, r.bounce_work, r.bounce_tag);
  if (r.sets_ready) weights_ready_at(r.fetch_index, std::max(r.free_s, r.ready_not_before_s));
}

inline void InferenceSim::bounce_next() {
  bounce(reads_[bounced_++]);
  next_landing_s_ =
      bounced_ < reads_.size() ? reads_[bounced_].lands_s : std::numeric_limits<double>::infinity();
}

inline void InferenceSim::bounce_landed_by(double t_s) {
  while (next_landing_s_ <= t_s) bounce_next();
}

inline void InferenceSim::bounce_through(std::size_t i) {
  while (bounced_ <= i) bounce_next();
}

void InferenceSim::bounce_modules_through(std::uint64_t fetch_index) {
  while (bounced_ < reads_.size() && reads_[bounced_].fetch_index <= fetch_index) bounce_next();
}

// What a module's fetch moves, tensor by tensor, in the prefill pass (0) or a decode pass (1):
// the pass's token count sets how many routed experts are hit, and nothing else differs between
// passes, so this is worked out once per run rather than per tensor and pass.
void InferenceSim::plan_fetches() {
  // Only routed experts fetched by the share a pass's tokens hit make the passes differ.
  bool by_share = false;
  if (p_.moe_fetch != MoeFetch::kAll)
    for (const auto& mod : modules_)
      for (const auto& t : mod.tensors) by_share = by_share || t.expert >= 0;
  decode_plan_differs_ = by_share;
  for (int phase = 0; phase < (by_share ? 2 : 1); ++phase) {
    const double pass_tokens = phase == 0 ? rank_batch_ * w_.prompt_tokens : rank_batch_;
    const double experts_hit = stream_experts_hit(m_, p_, pass_tokens);
    FetchPlan& plan = fetch_plans_[static_cast<std::size_t>(phase)];
    // A module whose tensors have the sizes and experts of the one before (the layers of a
    // model) fetches what that one does: it shares that module's fetches (the same values),
    // which the plan then holds once rather than once per layer (copying them was most of this
    // function's time on every sweep point). Only DeepSpeed v0.7's swap-in schedule
    // (plan_swap_schedule, where the gather copies the swap buffers) tells tensors apart by their
    // place in the plan: there each module keeps a copy of its own.
    const bool share = !stream_.bounce_in_gather;
    if (!share) {
      std::size_t tensors = 0;
      for (const auto& mod : modules_) tensors += mod.tensors.size();
      plan.tensors.reserve(tensors);
    }
    plan.modules.assign(modules_.size(), ModuleFetch{});
    const auto same_tensors = [](const WeightModule& a, const WeightModule& b) {
      if (a.tensors.size() != b.tensors.size()) return false;
      for (std::size_t i = 0; i < a.tensors.size(); ++i)
        if (a.tensors[i].bytes != b.tensors[i].bytes || a.tensors[i].expert != b.tensors[i].expert)
          return false;
      return true;
    };
    for (std::size_t m = 0; m < modules_.size(); ++m) {
      plan.modules[m].first = plan.tensors.size();
      if (m > 0 && same_tensors(modules_[m], modules_[m - 1])) {
        const ModuleFetch before = plan.modules[m - 1];
        if (share) {
          plan.modules[m] = before;
          continue;
        }
        for (std::size_t i = 0; i < before.count; ++i) {
          const TensorFetch copy = plan.tensors[before.first + i];  // the vector may grow
          plan.tensors.push_back(copy);
        }
        plan.modules[m].count = before.count;
        plan.modules[m].nvme_reads = before.nvme_reads;
        plan.modules[m].rest_gather = before.rest_gather;
        continue;
      }
      const ModuleStream stream = module_stream(stream_, modules_[m], experts_hit);
      plan.modules[m].nvme_reads = stream.nvme_reads;
      // A serial gather stream gathers each tensor once its copies are on the GPU (fetch_module):
      // its whole bytes, every rank's partition. The module's other partitioned bytes follow.
      const bool serial = serial_gather();
      double module_gathered = 0, tensors_gathered = 0;
      if (serial)
        for (const auto& t : modules_[m].tensors)
          if (!zero3_persistent(t, p_.zero3)) module_gathered += t.bytes;
      for (const TensorStream& ts : stream.tensors) {
        TensorFetch f;
        static_cast<TensorStream&>(f) = ts;
        if (dp_ > 1) {
          // Every rank reads its own partition of the tensor at once: the array reads all of it
          // (read_s), each rank's link and the switch carry the partitions.
          const Zero3GatherTraffic host =
              zero3_gather_traffic(s_.hardware.gpu, s_.hardware.host, int(dp_), f.cpu_bytes, 0);
          const Zero3GatherTraffic bounce =
              zero3_gather_traffic(s_.hardware.gpu, s_.hardware.host, int(dp_), f.nvme_bytes, 0);
          f.dp_host_bytes = host.partition_bytes;
          f.host_uplink_bytes = host.uplink_bytes;
          f.bounce_uplink_bytes = p_.io_path == IoPath::kGds ? 0.0 : bounce.uplink_bytes;
          // Where fetch_module launches it: after a host copy, or after a swap buffer's copy
          // in the gather; an asynchronous read's tensor joins the module's rest.
          if (serial && (stream_.bounce_in_gather || f.nvme_bytes <= 0)) {
            const double whole = f.nvme_bytes + f.cpu_bytes;
            f.gather = zero3_gather_traffic(s_.hardware.gpu, s_.hardware.host, int(dp_), 0, whole);
            tensors_gathered += whole;
          }
        }
        const Resource& h2d = *stages_.front().h2d;
        if (nvme_) {
          f.read_work = nvme_->work(f.read_s);
          f.read_load = nvme_load(s_.hardware.nvme, IoDirection::kRead, f.nvme_bytes, f.read_s);
        }
        f.link_work = h2d.work(f.nvme_link_bytes);
        f.host_link_work = h2d.work(f.host_link_bytes);
        f.host_cpu_work = cpu_->work(f.pageable_copy_s);
        plan.tensors.push_back(f);
      }
      plan.modules[m].count = plan.tensors.size() - plan.modules[m].first;
      if (serial)
        plan.modules[m].rest_gather =
            zero3_gather_traffic(s_.hardware.gpu, s_.hardware.host, int(dp_), 0,
                                 std::max(0.0, module_gathered - tensors_gathered));
    }
  }
}

// DeepSpeed v0.7 with its parameters on NVMe and prefetching on (the bucket and the NVMe swap-in
// prefetch of partitioned_param_coordinator.py fetch_sub_module): the order in which its fetch
// thread issues reads, waits for them and gathers, from the coordinator's rules
// (model/zero3_swap.hpp zero3_v07_swap_schedule) over the Hugging Face module hooks of the pass
// (zero3_hook_steps). Every hook, param-less ones too, runs the prefetch; a parameter gathered
// ahead keeps its swap buffer until its module ran, so with few buffers the reads go one at a
// time and alternate with the copies, while where stage3_max_live_parameters stops the gather
// prefetch (two of BLOOM-176B's FFN matrices are 1.6e9 elements against the default 1e9) the
// free buffers let several reads run beside the copies.
// It applies where the gather copies each swap buffer (WeightStreamPoint::bounce_in_gather), on
// one GPU or on data-parallel ranks whose gathers run on one stream (each rank has a swapper of
// its own with its own buffers and the same coordinator: partitioned_param_swapper.py
// _configure_aio, a folder and an aio handle per rank; the element counts it compares are whole
// parameters', ds_numel), on one stage, every fetched tensor either wholly on NVMe or in host
// memory, every pass fetching the same tensors, and the model's hooks described
// (zero3_hook_steps). Without prefetching each parameter is swapped in and gathered in its own
// hook, which is fetch_module's path without the schedule. policy.zero3 gives the coordinator's
// settings (DeepSpeed's defaults unless the scenario sets them).
void InferenceSim::plan_swap_schedule() {
  swap_turns_.clear();
  if (!stream_.bounce_in_gather || !nvme_ || (dp_ > 1 && !serial_gather()) || tp_ > 1 ||
      n_stages_ != 1 || prefetch_ <= 0 || decode_plan_differs_ ||
      !(p_.zero3.prefetch_bucket_size > 0))
    return;
  const FetchPlan& plan = fetch_plans_[0];
  std::vector<double> elements;
  std::vector<int> hooks;
  std::vector<std::vector<std::size_t>> param_tensors;  // each parameter's tensors of the plan
  std::vector<int> module_of(plan.tensors.size(), 0);
  for (int m : stages_.front().modules) {
    const ModuleFetch& mf = plan.modules[static_cast<std::size_t>(m)];
    const WeightModule& mod = modules_[static_cast<std::size_t>(m)];
    // The plan's tensors by the module's tensor they fetch (those with nothing to move are left
    // out of the plan).
    std::vector<std::size_t> of_tensor(mod.tensors.size(), plan.tensors.size());
    for (std::size_t i = 0; i < mf.count; ++i) {
      module_of[mf.first + i] = m;
      const int t = plan.tensors[mf.first + i].tensor;
      if (t >= 0) of_tensor[static_cast<std::size_t>(t)] = mf.first + i;
    }
    if (mf.count == 0) continue;
    const auto steps = zero3_hook_steps(m_, mod, p_.zero3);
    if (!steps) return;
    std::size_t covered = 0;
    for (const auto& hook : *steps) {
      std::vector<std::size_t> tensors;
      double hook_elements = 0;
      for (int i : hook) {
        const std::size_t k = of_tensor[static_cast<std::size_t>(i)];
        if (k >= plan.tensors.size() || !(plan.tensors[k].nvme_bytes > 0)) continue;
        tensors.push_back(k);
        hook_elements += mod.tensors[static_cast<std::size_t>(i)].elements;
      }
      if (tensors.empty()) {
        hooks.push_back(-1);
        continue;
      }
      covered += tensors.size();
      hooks.push_back(static_cast<int>(param_tensors.size()));
      param_tensors.push_back(std::move(tensors));
      elements.push_back(hook_elements);
    }
    std::size_t on_nvme = 0;
    for (std::size_t i = 0; i < mf.count; ++i) {
      const TensorFetch& t = plan.tensors[mf.first + i];
      if (t.nvme_bytes > 0 && t.cpu_bytes > 0) return;  // split between the tiers
      on_nvme += t.nvme_bytes > 0;
    }
    if (covered != on_nvme) return;  // an NVMe tensor no hook fetches
  }
  const std::vector<Zero3SwapAction> actions =
      zero3_v07_swap_schedule(elements, hooks, p_.zero3, p_.aio.swap_buffers);
  std::vector<SwapTurn> turns(plan.tensors.size());
  SwapTurn next;
  for (const Zero3SwapAction& a : actions) {
    const auto param = static_cast<std::size_t>(std::max(0, a.param));
    switch (a.kind) {
      case Zero3SwapAction::Kind::kIssue:
        // A gather's own synchronous swap-in comes before its wait; nothing is issued between
        // a wait and its gather.
        if (next.wait) throw std::logic_error("plan_swap_schedule: a read issued after a wait");
        next.issue.insert(next.issue.end(), param_tensors[param].begin(),
                          param_tensors[param].end());
        break;
      case Zero3SwapAction::Kind::kWait:
        next.wait = true;
        break;
      case Zero3SwapAction::Kind::kGather:
        turns[param_tensors[param].front()] = std::move(next);
        next = SwapTurn{};
        break;
    }
  }
  swap_turns_ = std::move(turns);
  plan_module_ = std::move(module_of);
}

Task InferenceSim::fetch_stage(int stage) {
  StageResources& st = stages_[static_cast<std::size_t>(stage)];
  for (int pass = 0; pass < passes_; ++pass) {
    for (int module : st.modules) {
      // Resident weights need no flag: this process reached such a module, without waiting, right
      // after setting the one before it, so compute never found one unset.
      if (!streamed(module)) continue;
      if (!reserve_ahead_) {
        co_await st.slots->acquire();
        co_await fetch_module(stage, module, pass, st.fetched++);
        continue;
      }
      // Waiting for a slot is waiting for the compute of the module fetched `slots` modules ago,
      // which needs that module's reads: reserve their bounce copies first. No host copy can come
      // before them, since this process makes none until then.
      const auto slots = static_cast<std::uint64_t>(prefetch_ + 1);
      if (st.slots->available() == 0 && st.fetched >= slots)
        bounce_modules_through(st.fetched - slots);
      co_await st.slots->acquire();
      co_await engine_.until(fetch_module_reserved(module, pass, st.fetched++, engine_.now()));
    }
  }
  if (!reads_.empty()) bounce_through(reads_.size() - 1);
}

// A layer's GPU time with its KV cache on the GPU (or the kernel part of one with it in host
// DRAM, in prefill): the weights' dequantisation, the layer's kernels and the launch overhead.
// Works it out and keeps it as layer_gpu_s's memo.
InferenceSim::GpuStep InferenceSim::layer_gpu_s_of(int pass, double sub_batch, double elements,
                                                   const LlmSpec& lm) {
  LayerTime& memo = layer_time_;
  const GpuSpec& gpu = s_.hardware.gpu;
  const bool prefill = pass == 0;
  const double tokens = prefill ? sub_batch * w_.prompt_tokens : sub_batch;
  const double context = pass_context(pass);
  const double gpu_kv = p_.kv_cache.gpu;
  const KvCacheShape& kv = kv_;
  const double kv_tok = kv.bytes_per_token_layer;
  const double dequant_s = layer_dequant_s(gpu, em_, p_, elements, tp_);
  // Fused prefill attention runs the causal half at its kernel's rate (prefill_attention_s);
  // eager attention computes the whole score matrix at the GEMM rate.
  const bool fused_prefill = prefill && p_.stack.fused_attention;
  const double attn_flops = fused_prefill           ? 0.0
                            : !prefill && kv.latent ? latent_attention_flops(m_, tokens, context)
                                                    : attention_flops(m_, tokens, context);
  const double kv_distinct = prefill ? 0.0 : sub_batch * context * kv_tok * gpu_kv / kv.split;
  const double kv_read = kv_distinct * decode_kv_reads(p_.stack, m_.heads, m_.kv_heads);
  double kv_write = tokens * kv_tok / kv.split;
  // Eager attention materialises the score matrix in prefill: read and written in fp16. Fused
  // attention keeps it on chip.
  double score_bytes = prefill && !p_.stack.fused_attention
                           ? 2.0 * 2.0 * sub_batch * (m_.heads / tp_) * context * context
                           : 0.0;
  LayerPass layer{tokens, attn_flops, kv_read, kv_write, score_bytes};
  layer.kv_distinct_read_bytes = kv_distinct;
  if (fused_prefill)
    layer.prefill_attention_s = prefill_attention_s(
        m_, gpu, em_, p_.stack, PrefillChunk{double(w_.prompt_tokens), 0.0, sub_batch}, tp_);
  // The dequantisation kernel only streams memory.
  KernelTime k{dequant_s, 0, dequant_s};
  k += layer_kernel(lm, gpu, em_, layer, tp_, gemm_path(gpu, em_, p_));
  memo = LayerTime{pass, sub_batch, elements, &lm, gpu_step(k.plus_gap(em_.layer_overhead_s))};
  return memo.step;
}

// Embedding lookup is a gather; the head is one GEMM for the last position of each sequence.
InferenceSim::GpuStep InferenceSim::edge_gpu_s(const WeightModule& mod, int module, int pass,
                                               double sub_batch) {
  const double tokens = pass == 0 ? sub_batch * w_.prompt_tokens : sub_batch;
  return gpu_step(edge_module(m_, s_.hardware.gpu, em_, mod.kind == WeightModule::Kind::kHead,
                              tokens, sub_batch, module_elements_[static_cast<std::size_t>(module)],
                              tp_));
}

Task InferenceSim::compute_module(int stage, int module, int pass, double sub_batch) {
  StageResources& st = stages_[static_cast<std::size_t>(stage)];
  const WeightModule& mod = modules_[static_cast<std::size_t>(module)];
  const GpuSpec& gpu = s_.hardware.gpu;
  const bool prefill = pass == 0;
  const double tokens = prefill ? sub_batch * w_.prompt_tokens : sub_batch;
  const double context = pass_context(pass);

  if (mod.kind != WeightModule::Kind::kLayer) {
    const GpuStep step = edge_gpu_s(mod, module, pass, sub_batch);
    co_await st.gpu->use(step.s, pass_tag(activity::kCompute, pass, module, step.load));
    co_return;
  }

  const double gpu_kv = p_.kv_cache.gpu, cpu_kv = p_.kv_cache.cpu;
  const double elements = module_elements_[static_cast<std::size_t>(module)];
  // ZeRO-Inference's KV offload follows the transformers fork (model/llm.hpp HostKvCache); the
  // FlexGen block schedule keeps an fp16 host cache.
  const bool zero_inference = p_.schedule == Schedule::kZeroInference;

  if (!prefill && cpu_kv > 0) {
    const double kv_tok = kv_bytes_per_token_layer(m_, p_.kv_bits / 8.0);
    const LlmSpec& lm = layer_m(module);
    const double gemm_flops = layer_gemm_flops(lm, tokens) / tp_;
    const double weight_read_bytes = layer_weight_read_bytes(lm, tokens, tp_);
    const double dequant_s = layer_dequant_s(gpu, em_, p_, elements, tp_);
    const GemmPath gemm = gemm_path(gpu, em_, p_);
    // The layer's elementwise kernels, half before the attention and half after.
    const KernelTime elementwise_half =
        gpu_kernel(gpu, em_, 0, layer_elementwise_bytes(lm, tokens, tp_, gemm) / 2);
    const double attn_flops = attention_flops(m_, tokens, context);
    const HostKvCache host_kv = zero_inference_host_kv(m_);
    // Decode with the KV cache in host DRAM: Q/K/V projections on the GPU, the new K/V and the
    // query go to the host (blocking copies), attention runs on the CPU, its output comes back.
    const double qkv_share =
        (double(m_.hidden) * m_.q_dim() + 2.0 * m_.hidden * m_.kv_dim()) / layer_active_params(lm);
    KernelTime part1{dequant_s, 0, dequant_s};
    part1 += gpu_kernel(gpu, em_, gemm_flops * qkv_share, weight_read_bytes * qkv_share);
    part1 += elementwise_half;
    const GpuStep step1 = gpu_step(part1.plus_gap(em_.layer_overhead_s / 2));
    co_await st.gpu->use(step1.s, pass_tag(activity::kCompute, pass, module, step1.load));
    CpuAttentionWork work;
    double to_host_bytes = sub_batch * (m_.q_dim() + 2.0 * m_.kv_dim()) * 2.0 / tp_;
    double from_host_bytes = sub_batch * m_.q_dim() * 2.0 / tp_;
    if (zero_inference) {
      work = zero_inference_decode_attention(m_, sub_batch * cpu_kv, context);
      to_host_bytes =
          sub_batch *
          (m_.q_dim() * host_kv.query_bytes_per_elem + 2.0 * m_.kv_dim() * host_kv.bytes_per_elem) /
          tp_;
      from_host_bytes = sub_batch * m_.q_dim() * host_kv.output_bytes_per_elem / tp_;
    } else {
      work.flops = attn_flops * cpu_kv;
      work.fp32 = false;
      work.dram_bytes = sub_batch * context * kv_tok * cpu_kv;
    }
    co_await st.d2h->use(to_host_bytes, pass_tag(activity::kKvToHost, pass, module));
    // Every data-parallel rank runs its attention on the same CPUs at the same time.
    const double cpu_s = dp_ * cpu_attention_s(s_.hardware.host, em_, work);
    cpu_attention_s_ += cpu_s;
    co_await cpu_->use(cpu_s, pass_tag(activity::kAttentionCpu, pass, module));
    co_await st.h2d->use(from_host_bytes, pass_tag(activity::kAttentionOut, pass, module));
    KernelTime part2 = gpu_kernel(
        gpu, em_, gemm_flops * (1 - qkv_share) + attn_flops * gpu_kv / tp_,
        weight_read_bytes * (1 - qkv_share) + sub_batch * context * kv_tok * gpu_kv / tp_);
    part2 += elementwise_half;
    const GpuStep step2 = gpu_step(part2.plus_gap(em_.layer_overhead_s / 2));
    co_await st.gpu->use(step2.s, pass_tag(activity::kCompute, pass, module, step2.load));
  } else {
    // Where one_gpu_step holds, this GPU step is all of the module and compute_stage makes it
    // itself without calling here: a step added to such layers must narrow one_gpu_step too.
    const double kv_tok = kv_bytes_per_token_layer(m_, p_.kv_bits / 8.0);
    const GpuStep step = layer_gpu_s(pass, sub_batch, elements, layer_m(module));
    co_await st.gpu->use(step.s, pass_tag(activity::kCompute, pass, module, step.load));
    if (prefill && cpu_kv > 0) {
      const HostKvCache host_kv = zero_inference_host_kv(m_);
      const Tag kv_tag = pass_tag(activity::kKvOffload, pass, module);
      if (!zero_inference) {
        co_await st.d2h->use(tokens * kv_tok * cpu_kv / tp_, kv_tag);
      } else {
        // The prompt's K/V go into a slice of the unpinned host buffer (prompt + gen - 1 long, so
        // not contiguous). PyTorch's cross-device copy_ then stages them in a fresh contiguous
        // CPU tensor (aten/src/ATen/native/cuda/Copy.cu, copy_kernel_cuda with
        // copy_requires_temporaries): the driver copies into that pageable temporary on the
        // calling thread, faulting its pages in, and the temporary is freed after the layer. The
        // intra-op pool then copies it into the buffer, faulting the buffer's pages in parallel
        // when the buffer was freshly allocated for this generate() call.
        const HostSpec& host = s_.hardware.host;
        const double elems = tokens * kv_bytes_per_token_layer(m_, 1.0) * cpu_kv / tp_;
        const double staged = elems * host_kv.prefill_staging_bytes_per_elem;
        const double stored = elems * host_kv.bytes_per_elem;
        // On the calling thread (one core): the driver's copy and the temporary's page faults.
        const double one_thread_s =
            staged / std::min(st.d2h->rate_per_s(), units::gbps_to_bytes_per_s(pageable_copy_gbps(
                                                        host, em_.pageable_copy_gbps))) +
            fresh_pages_s(host, em_, staged, 1.0);
        // On the intra-op pool (every core): the copy into the buffer and its page faults.
        double pool_s = (staged + stored) /
                        (units::gbps_to_bytes_per_s(host.dram_gbps) * em_.cpu_dram_efficiency);
        if (host_kv.fresh_each_generate)
          pool_s += fresh_pages_s(host, em_, stored, cpu_threads(host));
        const double copy_s = one_thread_s + pool_s;
        Tag tag = kv_tag;
        tag.load = copy_s > 0 ? (one_thread_s * cpu_core_load(host, 1.0) + pool_s) / copy_s : 0.0;
        co_await engine_.use_pair(Demand{st.d2h, staged}, Demand{cpu_, dp_ * copy_s}, tag);
      }
    }
  }
  if (tp_ > 1)
    co_await engine_.until(layer_allreduce_from(st, pass, module, sub_batch, engine_.now()));
}

// Two ring all-reduces of the hidden states per layer (after attention and after the FFN): their
// bytes at the peer link's rate plus their latency by the link kind (TensorParallelComm::seconds,
// the serving workload's rule), reserved from `ready_s` (Resource::use's reservation). Returns
// when they are done.
double InferenceSim::layer_allreduce_from(StageResources& st, int pass, int module,
                                          double sub_batch, double ready_s) {
  const double tokens = pass == 0 ? sub_batch * w_.prompt_tokens : sub_batch;
  // Every layer of a pass asks with the same tokens: worked out for the first, then reused (the
  // same arithmetic on the same inputs, so the same value).
  if (!(allreduce_memo_.tokens == tokens)) {
    allreduce_memo_.tokens = tokens;
    allreduce_memo_.comm =
        tensor_parallel_layer_comm(s_.hardware.gpu, s_.hardware.host, m_, tokens, tp_);
  }
  const TensorParallelComm& comm = allreduce_memo_.comm;
  return engine_.reserve_from(ready_s, Demand{st.peer, comm.bytes},
                              pass_tag(activity::kAllreduce, pass, module), comm.latency_s);
}

Task InferenceSim::compute_stage(int stage) {
  StageResources& st = stages_[static_cast<std::size_t>(stage)];
  const double micro_batch = rank_batch_ / n_micro_;
  const int gpu_batches = p_.batches_per_fetch();
  for (int pass = 0; pass < passes_; ++pass) {
    for (int micro = 0; micro < n_micro_; ++micro) {
      co_await stage_input(pass, stage, micro).wait();
      st.input->pop();
      for (int module : st.modules) {
        if (micro == 0 && streamed(module)) {
          const double before = engine_.now();
          co_await st.weights_ready->at(st.computed).wait();
          st.weights_ready->pop();
          ++st.computed;
          if (stage == 0) weight_wait_s_ += engine_.now() - before;
        }
        const WeightModule& mod = modules_[static_cast<std::size_t>(module)];
        for (int g = 0; g < gpu_batches; ++g) {
          if (one_gpu_step(mod)) {
            const GpuStep step =
                layer_gpu_s(pass, micro_batch / gpu_batches,
                            module_elements_[static_cast<std::size_t>(module)], layer_m(module));
            co_await st.gpu->use(step.s, pass_tag(activity::kCompute, pass, module, step.load));
          } else {
            co_await compute_module(stage, module, pass, micro_batch / gpu_batches);
          }
        }
        if (micro == n_micro_ - 1 && streamed(module)) st.slots->release();
      }
      if (stage + 1 < n_stages_) {
        const double tokens = pass == 0 ? micro_batch * w_.prompt_tokens : micro_batch;
        co_await st.peer->use(tokens * m_.hidden * 2.0,
                              pass_tag(activity::kActivations, pass, stage));
        stage_input(pass, stage + 1, micro).set();
      } else {
        if (pass == 0 && micro == n_micro_ - 1) prefill_end_s_ = engine_.now();
        if (pass + 1 < passes_) stage_input(pass + 1, 0, micro).set();
      }
    }
  }
}

// fetch_stage's and compute_stage's timelines worked out by one loop, without an event: where
// fetch_module_reserved already reserves the fetcher's resources itself (one stage, no KV cache in
// host DRAM), and compute is one GPU step per module and GPU batch (one micro-batch, no tensor
// parallelism), the GPU is compute's alone and everything else the fetcher's, so each keeps its
// reservations in its own order whichever runs ahead. What links the two is waiting:
// - compute of a module starts when the module before it is done and its weights are ready (the
//   time weights_ready_at keeps): the time the compute process would resume at;
// - the fetcher takes a prefetch slot when compute frees it, after the module fetched `slots`
//   modules before: it goes on at the later of its own clock and that time. When its slot was
//   free already, that module's reads were all bounced (its weights had to be ready to be
//   computed), so bouncing them first, as fetch_stage does when it has to wait, changes nothing.
// Compute is worked out lazily, as far as the fetcher needs it, and to the end after the last
// fetch. Same reservations from the same times in the same order per resource as the two
// processes make, so the same results bit for bit (tested against an event per tensor); the
// engine processes no event. The run's makespan is compute's last step.
void InferenceSim::run_direct() {
  StageResources& st = stages_.front();
  const auto slots = static_cast<std::uint64_t>(prefetch_ + 1);
  std::size_t ready_size = 1;  // a power of two above the slots: a mask finds a module's entry
  while (ready_size < slots + 1) ready_size *= 2;
  ready_at_s_.assign(ready_size, 0.0);
  ready_mask_ = ready_size - 1;
  double fetch_clock = 0;  // [s] where fetch_stage's process would be
  std::uint64_t fetched = 0;
  for (int pass = 0; pass < passes_; ++pass) {
    for (int module : st.modules) {
      if (!streamed(module)) continue;
      if (fetched >= slots) {
        bounce_modules_through(fetched - slots);
        compute_direct_through(fetched - slots);
        fetch_clock = std::max(fetch_clock, compute_.clock_s);
      }
      fetch_clock = fetch_module_reserved(module, pass, fetched++, fetch_clock);
    }
  }
  if (!reads_.empty()) bounce_through(reads_.size() - 1);
  compute_direct_through(UINT64_MAX);
}

// Computes modules in compute_stage's order until the streamed module with this fetch number is
// done (all of them for UINT64_MAX), each as compute_stage would: wait for the weights, then one
// GPU step per GPU batch, from where the process would be.
void InferenceSim::compute_direct_through(std::uint64_t fetch_index) {
  StageResources& st = stages_.front();
  Resource& gpu = *st.gpu;
  const double micro_batch = rank_batch_ / n_micro_;
  const int gpu_batches = p_.batches_per_fetch();
  const double sub_batch = micro_batch / gpu_batches;
  DirectCompute& c = compute_;
  while (c.pass < passes_ && c.computed <= fetch_index) {
    const int module = st.modules[c.position];
    const WeightModule& mod = modules_[static_cast<std::size_t>(module)];
    if (streamed(module)) {
      const double ready = ready_at_s_[static_cast<std::size_t>(c.computed & ready_mask_)];
      const double before = c.clock_s;
      c.clock_s = std::max(c.clock_s, ready);
      weight_wait_s_ += c.clock_s - before;
      ++c.computed;
    }
    const GpuStep step =
        mod.kind == WeightModule::Kind::kLayer
            ? layer_gpu_s(c.pass, sub_batch, module_elements_[static_cast<std::size_t>(module)],
                          layer_m(module))
            : edge_gpu_s(mod, module, c.pass, sub_batch);
    // Resource::use's reservation (reserve_from without fixed time), one per GPU batch; with
    // tensor parallelism each layer's step is followed by its all-reduces on the peer link, as
    // compute_module makes them (the link is compute's alone: no data-parallel gather here).
    const Work work = gpu.work(step.s);
    const Tag tag = pass_tag(activity::kCompute, c.pass, module, step.load);
    const bool allreduce = tp_ > 1 && mod.kind == WeightModule::Kind::kLayer;
    for (int g = 0; g < gpu_batches; ++g) {
      c.clock_s = engine_.reserve_work_from(c.clock_s, gpu, work, tag);
      if (allreduce) c.clock_s = layer_allreduce_from(st, c.pass, module, sub_batch, c.clock_s);
    }
    if (++c.position == st.modules.size()) {
      if (c.pass == 0) prefill_end_s_ = c.clock_s;
      c.position = 0;
      ++c.pass;
    }
  }
}

RunResult InferenceSim::run() {
  RunResult result;
  result.workload = "inference";
  modules_ = weight_modules(m_, p_);  // once: the capacity, the fetch plan and the weights' bytes
  const CapacityReport cap = inference_capacity(s_, em_, modules_);
  result.memory = cap.tiers;
  result.fits = cap.fits;
  result.shortfall = cap.shortfall;
  if (!cap.fits) return result;

  if (p_.kv_cache.nvme > 0)
    throw ModelError("KV cache on NVMe is not modelled; place it on gpu and/or cpu");
  if (p_.weights.nvme > 0 && s_.hardware.nvme.count <= 0)
    throw ModelError("weights on nvme need hardware.nvme.count >= 1");
  // The loader rejects these at load time; scenarios built in code are checked here.
  if (const auto issue = parallelism_issue(s_))
    throw ModelError(issue->key + ": " + issue->message);
  const auto& par = p_.parallelism;

  tp_ = par.tensor;
  // The cache as the stack keeps it: per head and split over the ranks, or MLA's latent, whole on
  // each rank and attended to in the absorbed form when decoding.
  kv_ = stack_kv_cache(p_.stack, m_, p_.kv_bits / 8.0, tp_);
  n_stages_ = par.pipeline;
  n_micro_ = std::max(1, std::min(par.micro_batches, w_.batch));
  passes_ = std::max(1, w_.gen_tokens);
  n_modules_ = static_cast<int>(modules_.size());
  dp_ = par.data;
  rank_batch_ = double(w_.batch) / dp_;
  prefetch_ = p_.prefetch_layers;
  swap_in_s_ = em_.fetch_overhead_s + em_.swap_in_overhead_s;
  const HostSpec& host = s_.hardware.host;
  const GpuSpec& gpu = s_.hardware.gpu;
  double largest_module_elements = 0;
  for (const auto& mod : modules_) {
    // With data-parallel ranks every module with a partitioned parameter is fetched: gathered
    // from the other ranks, its partition first copied in where it is offloaded.
    double gathered = 0;
    if (dp_ > 1)
      for (const auto& t : mod.tensors)
        if (!zero3_persistent(t, p_.zero3)) gathered += t.bytes;
    gathers_.push_back(zero3_gather_traffic(gpu, host, int(dp_), 0, gathered));
    streamed_bytes_.push_back(mod.bytes() * (p_.weights.cpu + p_.weights.nvme) + gathered);
    module_elements_.push_back(mod.elements());
    largest_module_elements = std::max(largest_module_elements, mod.elements());
  }
  if (dp_ > 1) {
    prefetch_ = zero3_prefetch_modules(p_.zero3, largest_module_elements);
    if (host.gpus_per_pcie_switch > 0)
      uplink_ =
          &engine_.add_resource(resource::kPcieSwitch.at(), WorkUnit::kBytes,
                                units::gbps_to_bytes_per_s(pcie_switch_uplink_gbps(gpu, host)));
  }

  stages_.resize(static_cast<std::size_t>(n_stages_));
  for (int i = 0; i < n_stages_; ++i) {
    // One stage has unnumbered resources ("gpu"); several are numbered by stage ("gpu0").
    const int index = n_stages_ > 1 ? i : kNoIndex;
    auto& st = stages_[static_cast<std::size_t>(i)];
    st.gpu = &engine_.add_resource(resource::kGpu.at(index), WorkUnit::kSeconds, 1.0);
    st.h2d = &engine_.add_resource(resource::kPcieH2d.at(index), WorkUnit::kBytes,
                                   units::gbps_to_bytes_per_s(h2d_gbps(gpu, host)));
    st.d2h = &engine_.add_resource(resource::kPcieD2h.at(index), WorkUnit::kBytes,
                                   units::gbps_to_bytes_per_s(d2h_gbps(gpu, host)));
    st.peer = &engine_.add_resource(resource::kGpuPeer.at(index), WorkUnit::kBytes,
                                    units::gbps_to_bytes_per_s(gpu_peer_gbps(gpu, host)));
    st.slots = std::make_unique<Semaphore>(engine_, prefetch_ + 1);
    st.weights_ready = std::make_unique<FlagQueue>(engine_);
    st.input = std::make_unique<FlagQueue>(engine_);
  }
  // Layers in contiguous blocks over the stages; the embedding on the first, the head on the last.
  for (int mod = 0; mod < n_modules_; ++mod) {
    const auto& wm = modules_[static_cast<std::size_t>(mod)];
    int stage = 0;
    if (wm.kind == WeightModule::Kind::kHead) stage = n_stages_ - 1;
    if (wm.kind == WeightModule::Kind::kLayer) stage = wm.layer * n_stages_ / m_.layers;
    stages_[static_cast<std::size_t>(stage)].modules.push_back(mod);
  }
  if (s_.hardware.nvme.count > 0) {
    nvme_ = &engine_.add_resource(resource::kNvme.at(), WorkUnit::kSeconds, 1.0);
  }
  cpu_ = &engine_.add_resource(resource::kCpu.at(), WorkUnit::kSeconds, 1.0);
  swap_buffers_ = std::make_unique<Semaphore>(engine_, std::max(1, p_.aio.swap_buffers));
  reads_.reset(static_cast<std::size_t>(std::max(1, p_.aio.swap_buffers)));
  stream_ = weight_stream_point(s_, em_, modules_);
  plan_fetches();
  plan_swap_schedule();
  // The fetcher has the NVMe array, the link to the GPU, the CPU and the swap buffers to itself
  // unless several stages fetch or CPU attention uses the links and the CPU
  // (fetch_module_reserved).
  // (DeepSpeed v0.7's swap-in schedule runs on the events: plan_swap_schedule.)
  reserve_ahead_ = !event_per_tensor_ && n_stages_ == 1 && p_.kv_cache.cpu <= 0 && !(dp_ > 1) &&
                   swap_turns_.empty();
  // Without events where compute is one GPU step per module (run_direct). A trace keeps the
  // processes: its spans come out in the order the events make them.
  direct_ =
      reserve_ahead_ && n_micro_ == 1 && !engine_.tracing() && !stages_.front().modules.empty();

  double total_s = 0;
  if (direct_) {
    run_direct();
    total_s = compute_.clock_s;
  } else {
    for (int micro = 0; micro < n_micro_; ++micro) stage_input(0, 0, micro).set();
    for (int i = 0; i < n_stages_; ++i) {
      engine_.spawn(fetch_stage(i));
      engine_.spawn(compute_stage(i));
    }
    engine_.run();
    total_s = engine_.now();
  }
  const double prefill_s = prefill_end_s_;
  set_generation_metrics(result, w_, {prefill_s, total_s - prefill_s, total_s});
  result.set(metric::kWeightWaitS, weight_wait_s_);
  result.set(metric::kCpuAttentionS, cpu_attention_s_);
  if (dp_ > 1) {
    result.set(metric::kAllgatherBytes, allgather_bytes_);
    result.work.allgather_bytes = allgather_bytes_;
  }
  result.set(metric::kWeightsBytes, model_weight_bytes(modules_));
  if (nvme_) set_nvme_read_rate(result, stream_.nvme.read_gbps);
  collect_usage(engine_, total_s, result);
  return result;
}

}  // namespace

void set_nvme_read_rate(RunResult& result, double read_gbps) {
  result.set(metric::kNvmeReadGbpsModel, read_gbps);
  result.work.nvme_gbps_model = read_gbps;
}

void set_generation_metrics(RunResult& result, const InferenceWorkload& w,
                            const GenerationTimes& t) {
  const double generated = double(w.batch) * w.gen_tokens;
  result.set(metric::kPrefillS, t.prefill_s);
  result.set(metric::kTtftS, t.prefill_s);
  result.set(metric::kDecodeS, t.decode_s);
  result.set(metric::kDecodeSPerToken, w.gen_tokens > 1 ? t.decode_s / (w.gen_tokens - 1) : 0.0);
  result.set(metric::kTotalS, t.total_s);
  result.set(metric::kThroughputTokensPerS, t.total_s > 0 ? generated / t.total_s : 0.0);
  result.set(metric::kGeneratedTokens, generated);
  result.work.generated_tokens = generated;
}

RunResult simulate_inference(const Scenario& scenario, const SimOptions& options) {
  if (scenario.policy.schedule == Schedule::kFlexGen) return simulate_flexgen(scenario, options);
  InferenceSim sim(scenario, options);
  return sim.run();
}

namespace workloads {
const WorkloadOps inference_workload{
    "inference", WorkloadKind::kInference,
    "LLM generation with weights and KV cache streamed from GPU, DRAM or NVMe (ZeRO-Inference, "
    "FlexGen block schedule, tensor and pipeline parallelism)",
    &simulate_inference, &inference_capacity_only_keys, &inference_with_capacity};
}  // namespace workloads

}  // namespace tiersim::sim
