#include "replay/replay.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <semaphore>
#include <thread>

#include "calibrate/io_blocks.hpp"
#include "calibrate/runner.hpp"
#include "calibrate/target.hpp"
#include "model/errors.hpp"
#include "model/layout.hpp"
#include "model/perf.hpp"
#include "model/weight_stream.hpp"
#include "sim/engine/engine.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/inference/inference.hpp"
#include "sim/workloads/traits.hpp"

namespace tiersim::replay {

// Replay runs on calibrate's I/O engines, buffers, target files and fits.
using namespace tiersim::calibrate;
namespace {

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) {
  return (v + to - 1) / to * to;
}

}  // namespace

double ReplayPlan::io_bytes() const {
  double b = 0;
  for (const auto& s : steps) b += double(s.nvme_bytes);
  return b;
}

double ReplayPlan::compute_s() const {
  double t = 0;
  for (const auto& s : steps) t += s.compute_s;
  return t;
}

double error_pct(double predicted, double measured) {
  return measured > 0 ? (predicted - measured) / measured * 100.0 : 0.0;
}

ReplayPlan build_replay_plan(const Scenario& scenario, const PlanOptions& options) {
  if (!has_capability(scenario, kCapFixedBatch))
    throw ModelError("replay runs inference scenarios (workload.kind: inference)");
  if (!(options.scale > 0) || options.scale > 1) throw ModelError("--scale must be in (0, 1]");
  Scenario s = scenario;
  if (options.passes > 0) s.inference.gen_tokens = options.passes;
  const Policy& p = s.policy;
  if (p.weights.nvme <= 0)
    throw ModelError("scenario '" + s.name + "' streams no weights from NVMe: nothing to replay");
  if (p.parallelism.pipeline != 1)
    throw ModelError("replay covers one pipeline stage (parallelism.pipeline: 1)");

  // The simulator's own schedule: its compute spans per (pass, module) are what the replay holds.
  sim::SimOptions so;
  so.trace = true;
  const sim::RunResult r = sim::simulate_inference(s, so);
  if (!r.fits)
    throw ModelError("scenario '" + s.name + "' does not fit" +
                     (options.passes > 0 ? " with --passes " + std::to_string(options.passes) +
                                               " (its gen_tokens " +
                                               std::to_string(scenario.inference.gen_tokens) + ")"
                                         : std::string()) +
                     ": " + r.shortfall);

  ReplayPlan plan;
  plan.scenario = s.name;
  plan.scale = options.scale;
  plan.passes = std::max(1, s.inference.gen_tokens);
  plan.io_path = p.io_path;
  plan.block_bytes = options.block_bytes
                         ? options.block_bytes
                         : static_cast<std::uint32_t>(std::max(4096.0, p.aio.block_size_bytes));
  plan.queue_depth = options.queue_depth ? options.queue_depth
                                         : static_cast<unsigned>(std::max(1, p.aio.queue_depth));
  plan.threads =
      options.threads ? options.threads : static_cast<unsigned>(std::max(1, p.aio.threads));
  plan.swap_buffers = static_cast<unsigned>(std::max(1, p.aio.swap_buffers));
  plan.prefetch_layers = std::max(0, p.prefetch_layers);
  const ExecutionModel em;
  plan.fetch_overhead_s = em.fetch_overhead_s * options.scale;

  const std::vector<WeightModule> modules = weight_modules(s.model, p);
  plan.modules = static_cast<int>(modules.size());
  // Placement is decided at the unscaled sizes, by the simulator's weight-stream model
  // (model/weight_stream.hpp, DeepSpeed's small-tensor rule among its rules): the shrunken replay
  // must read what the real run reads.
  const WeightStreamPoint stream = weight_stream_point(s, em, modules);
  std::vector<std::uint64_t> module_bytes(modules.size(), 0), module_offset(modules.size(), 0);
  std::vector<int> module_tensors(modules.size(), 0);
  std::uint64_t offset = 0;
  for (std::size_t m = 0; m < modules.size(); ++m) {
    double nvme = 0;
    for (const TensorStream& t : module_stream(stream, modules[m]).tensors) {
      if (t.nvme_bytes > 0) {
        nvme += t.nvme_bytes;
        ++module_tensors[m];
      }
    }
    // 4 KiB multiples keep O_DIRECT happy; module starts on a block so every request is one
    // registered piece of the pinned pool.
    module_bytes[m] =
        nvme > 0 ? round_up(static_cast<std::uint64_t>(std::ceil(nvme * options.scale)), 4096) : 0;
    module_offset[m] = offset;
    offset += round_up(module_bytes[m], plan.block_bytes);
    plan.largest_module_bytes = std::max(plan.largest_module_bytes, module_bytes[m]);
  }
  plan.file_bytes = std::max<std::uint64_t>(offset, plan.block_bytes);

  std::map<std::pair<int, int>, double> compute;
  for (const auto& span : r.timeline)
    if (!sim::is_weight_fetch(span.activity) && span.activity != sim::activity::kActivations)
      compute[{span.phase, span.item}] += span.end_s - span.start_s;
  for (int pass = 0; pass < plan.passes; ++pass)
    for (int m = 0; m < plan.modules; ++m) {
      ReplayStep st;
      st.pass = pass;
      st.module = m;
      st.nvme_bytes = module_bytes[static_cast<std::size_t>(m)];
      st.file_offset_bytes = module_offset[static_cast<std::size_t>(m)];
      st.tensors = module_tensors[static_cast<std::size_t>(m)];
      const auto it = compute.find({pass, m});
      st.compute_s = (it == compute.end() ? 0.0 : it->second) * options.scale;
      plan.steps.push_back(st);
    }
  return plan;
}

namespace {

// The replay's drive as a one-drive array, read the way the plan reads it.
struct DriveSetup {
  NvmeArray array;
  HostSpec host;
  AioConfig aio;
  DriveSetup(const ReplayPlan& plan, const SsdModel& drive) {
    array.count = 1;
    array.model = drive;
    host.nvme_io_gbps = 0;  // the profile was measured through this host's I/O path already
    aio.block_size_bytes = plan.block_bytes;
    aio.queue_depth = static_cast<int>(plan.queue_depth);
    aio.threads = static_cast<int>(plan.threads);
  }
};

NvmeArrayTiming drive_timing(const ReplayPlan& plan, const SsdModel& drive, double transfer_bytes) {
  const DriveSetup d(plan, drive);
  return nvme_array_timing(d.array, d.host, d.aio, transfer_bytes);
}

// A module's read as the drive sees it: every reader keeps its queue full until its share runs
// out, so the last requests complete at falling depth (model/perf.hpp, nvme_drained_read_s).
double read_time_s(const ReplayPlan& plan, const SsdModel& drive, double bytes) {
  const DriveSetup d(plan, drive);
  return nvme_drained_read_s(d.array, d.host, d.aio, bytes);
}

}  // namespace

void set_compute_to_io_ratio(ReplayPlan& plan, double ratio, double read_gbps) {
  const double compute = plan.compute_s();
  const double io = plan.io_bytes() / (read_gbps * 1e9);
  if (compute <= 0 || io <= 0 || ratio <= 0) return;
  const double f = ratio * io / compute;
  for (auto& s : plan.steps) s.compute_s *= f;
}

namespace {

double read_number(const char* path) {
  std::ifstream f(path);
  double v = 0;
  f >> v;
  return f ? v : 0.0;
}

// vm.dirty_background_bytes, or vm.dirty_background_ratio percent of the memory the kernel counts
// as dirtyable (approximated by MemAvailable).
double dirty_background_bytes() {
  const double bytes = read_number("/proc/sys/vm/dirty_background_bytes");
  if (bytes > 0) return bytes;
  const double ratio = read_number("/proc/sys/vm/dirty_background_ratio");
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return ratio / 100.0 * kib * 1024.0;
  return 0;
}

}  // namespace

HostRates measure_host_rates() {
  // One core's large memcpy, best of a few (the other engineers' builds share this machine).
  constexpr std::size_t kBytes = 64u << 20;
  PinnedBuffer a(kBytes), b(kBytes);
  double best_s = 1e9;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), kBytes);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best_s = std::min(best_s, s);
  }
  HostRates r;
  r.memcpy_gbps = double(kBytes) / best_s / 1e9;
  r.dirty_background_bytes = dirty_background_bytes();
  return r;
}

// ---- prediction on the event engine -------------------------------------------------------------

namespace {

class PlanSim {
 public:
  PlanSim(const ReplayPlan& plan, const SsdModel& drive, const HostRates& host)
      : plan_(plan), drive_(drive) {
    engine_.enable_trace(true);
    using sim::WorkUnit;
    namespace resource = sim::resource;
    nvme_ = &engine_.add_resource(resource::kNvme.at(), WorkUnit::kSeconds, 1.0);
    // The replay's "PCIe link" is a host memcpy.
    copy_ =
        &engine_.add_resource(resource::kPcieH2d.at(), WorkUnit::kBytes, host.memcpy_gbps * 1e9);
    gpu_ = &engine_.add_resource(resource::kGpu.at(), WorkUnit::kSeconds, 1.0);
    host_ = &engine_.add_resource(resource::kCpu.at(), WorkUnit::kSeconds, 1.0);
    slots_ = std::make_unique<sim::Semaphore>(engine_, plan.prefetch_layers + 1);
    swaps_ = std::make_unique<sim::Semaphore>(engine_, static_cast<int>(plan.swap_buffers));
    for (std::size_t i = 0; i < plan.steps.size(); ++i) ready_.emplace_back(engine_);
  }

  ReplayPrediction run() {
    engine_.spawn(fetch());
    engine_.spawn(compute());
    engine_.run();
    ReplayPrediction p;
    p.times.total_s = engine_.now();
    p.times.prefill_s = prefill_end_s_;
    p.times.decode_s = p.times.total_s - prefill_end_s_;
    p.read_gbps = drive_timing(plan_, drive_, double(plan_.largest_module_bytes)).read_gbps;
    sim::RunResult r;
    sim::collect_usage(engine_, p.times.total_s, r);
    p.timeline = std::move(r.timeline);
    return p;
  }

 private:
  sim::Task copy(std::size_t i) {
    const ReplayStep& st = plan_.steps[i];
    co_await copy_->use(double(st.nvme_bytes),
                        sim::Tag{sim::activity::kWeightsBounce, st.pass, st.module});
    swaps_->release();
    ready_[i].set();
  }

  sim::Task fetch() {
    for (std::size_t i = 0; i < plan_.steps.size(); ++i) {
      const ReplayStep& st = plan_.steps[i];
      if (st.nvme_bytes == 0) {
        ready_[i].set();
        continue;
      }
      co_await slots_->acquire();
      if (st.tensors > 0)
        co_await host_->use(st.tensors * plan_.fetch_overhead_s,
                            sim::Tag{sim::activity::kFetchOverhead, st.pass, st.module});
      const double read_s = read_time_s(plan_, drive_, double(st.nvme_bytes));
      if (plan_.io_path == IoPath::kAio) {
        co_await swaps_->acquire();
        co_await nvme_->use(read_s, sim::Tag{sim::activity::kWeightsNvme, st.pass, st.module});
        engine_.spawn(copy(i));
      } else {
        co_await nvme_->use(read_s, sim::Tag{sim::activity::kWeightsNvme, st.pass, st.module});
        ready_[i].set();
      }
    }
  }

  sim::Task compute() {
    for (std::size_t i = 0; i < plan_.steps.size(); ++i) {
      const ReplayStep& st = plan_.steps[i];
      co_await ready_[i].wait();
      co_await gpu_->use(st.compute_s, sim::Tag{sim::activity::kCompute, st.pass, st.module});
      if (st.nvme_bytes > 0) slots_->release();
      if (st.pass == 0) prefill_end_s_ = engine_.now();
    }
  }

  const ReplayPlan& plan_;
  const SsdModel& drive_;
  sim::Engine engine_;
  sim::Resource* nvme_ = nullptr;
  sim::Resource* copy_ = nullptr;
  sim::Resource* gpu_ = nullptr;
  sim::Resource* host_ = nullptr;
  std::unique_ptr<sim::Semaphore> slots_, swaps_;
  std::deque<sim::Flag> ready_;
  double prefill_end_s_ = 0;
};

}  // namespace

ReplayPrediction predict_replay(const ReplayPlan& plan, const SsdModel& drive,
                                const HostRates& host) {
  PlanSim sim(plan, drive, host);
  return sim.run();
}

// ---- the real run -------------------------------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;

// Holds a thread until `deadline`: sleeps while far away, spins the last stretch so short compute
// stages are not rounded up to the scheduler's tick.
void hold_until(Clock::time_point deadline) {
  constexpr auto kSpin = std::chrono::microseconds(200);
  auto now = Clock::now();
  if (deadline - now > kSpin) std::this_thread::sleep_until(deadline - kSpin);
  while (Clock::now() < deadline) {
  }
}

// One contiguous read handed to every reader: reader r moves its share of the blocks.
struct ReadBatch {
  std::mutex mu;
  std::condition_variable cv;
  std::uint64_t generation = 0;
  std::uint64_t file_offset_bytes = 0;
  char* buffer = nullptr;
  std::uint64_t bytes = 0;
  unsigned remaining = 0;
  bool quit = false;
  std::exception_ptr error;
};

class Replayer {
 public:
  Replayer(const ReplayPlan& plan, const CalibrationFile& file, const std::atomic<bool>* stop)
      : plan_(plan),
        file_(file),
        stop_(stop),
        slots_(plan.prefetch_layers + 1),
        swaps_(static_cast<std::ptrdiff_t>(plan.swap_buffers)) {
    slot_bytes_ =
        round_up(std::max<std::uint64_t>(plan.largest_module_bytes, 4096), plan.block_bytes);
    const std::size_t n_slots = static_cast<std::size_t>(plan.prefetch_layers + 1);
    dest_ = PinnedBuffer(n_slots * slot_bytes_);
    // AIO reads land in bounce buffers and are copied on; the direct path reads straight into the
    // destination, so that is the pool the readers register.
    if (plan.io_path == IoPath::kAio) bounce_ = PinnedBuffer(plan.swap_buffers * slot_bytes_);
  }

  ReplayMeasurement run() {
    const PinnedBuffer& pool = plan_.io_path == IoPath::kAio ? bounce_ : dest_;
    const std::vector<iovec> pieces = block_pieces(pool, plan_.block_bytes);
    // Engines are created up front so io_uring setup is not timed and fails before any thread runs.
    pool_base_ = pool.data();
    for (unsigned r = 0; r < plan_.threads; ++r) {
      EngineSetup setup;
      setup.fd = file_.fd();
      setup.direction = IoDirection::read;
      setup.queue_depth = plan_.queue_depth;
      setup.buffers = pieces;
      engines_.push_back(make_engine(EngineKind::io_uring, setup));
    }
    t0_ = Clock::now();
    std::vector<std::thread> readers;
    for (unsigned r = 1; r < plan_.threads; ++r) readers.emplace_back([this, r] { reader(r); });
    std::thread copier([this] {
      // The copy stands in for a GPU copy engine's DMA, which takes no CPU from the thread
      // submitting and reaping the reads. At normal priority the memcpy delayed that thread's
      // wake-ups on this 2-vCPU machine (balanced AIO case: replay read at a median 0.95 of the
      // bracketing probes, 0.86-1.02; 0.97, 0.95-1.03 with the copier at SCHED_IDLE). Best
      // effort: without it the copier runs at normal priority.
      sched_param idle{};
      pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
      copy_loop();
    });
    std::thread computer([this] { compute_loop(); });
    std::exception_ptr fetch_error;
    try {
      fetch_loop();
    } catch (...) {
      fetch_error = std::current_exception();
      abort_.store(true);
      // Let the compute thread run out: nothing more will be fetched.
      std::lock_guard lk(ready_mu_);
      ready_upto_ = plan_.steps.size();
      ready_cv_.notify_all();
    }
    {
      std::lock_guard lk(batch_.mu);
      batch_.quit = true;
      batch_.cv.notify_all();
    }
    for (auto& t : readers) t.join();
    {
      std::lock_guard lk(copy_mu_);
      copy_quit_ = true;
      copy_cv_.notify_all();
    }
    copier.join();
    computer.join();
    if (fetch_error) std::rethrow_exception(fetch_error);

    ReplayMeasurement m;
    m.times.total_s = end_s_;
    m.times.prefill_s = prefill_end_s_;
    m.times.decode_s = end_s_ - prefill_end_s_;
    m.read_bytes = read_bytes_;
    m.read_busy_s = read_busy_s_;
    m.pinned = dest_.locked() && (plan_.io_path != IoPath::kAio || bounce_.locked());
    m.file = file_.path();
    for (auto* v : {&fetch_spans_, &copy_spans_, &compute_spans_})
      m.timeline.insert(m.timeline.end(), v->begin(), v->end());
    std::sort(m.timeline.begin(), m.timeline.end(),
              [](const sim::TimelineSpan& a, const sim::TimelineSpan& b) {
                return a.start_s < b.start_s;
              });
    return m;
  }

 private:
  double now_s() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

  // Reader r's contiguous share of a module, in whole blocks: each ring streams its own part.
  void move_share(unsigned r, std::uint64_t off, char* buffer, std::uint64_t bytes) {
    const std::uint64_t blocks = (bytes + plan_.block_bytes - 1) / plan_.block_bytes;
    const std::uint64_t per = (blocks + plan_.threads - 1) / plan_.threads;
    const std::uint64_t first = std::min(blocks, per * r) * plan_.block_bytes;
    const std::uint64_t last = std::min(bytes, std::min(blocks, per * (r + 1)) * plan_.block_bytes);
    if (last > first)
      transfer_blocks(*engines_[r], off + first, buffer + first, pool_base_, last - first,
                      plan_.block_bytes, plan_.queue_depth);
  }

  // Readers 1..threads-1; the fetch thread itself is reader 0.
  void reader(unsigned r) {
    std::uint64_t seen = 0;
    for (;;) {
      std::uint64_t off = 0, bytes = 0;
      char* buffer = nullptr;
      {
        std::unique_lock lk(batch_.mu);
        batch_.cv.wait(lk, [&] { return batch_.quit || batch_.generation != seen; });
        if (batch_.quit) return;
        seen = batch_.generation;
        off = batch_.file_offset_bytes;
        buffer = batch_.buffer;
        bytes = batch_.bytes;
      }
      std::exception_ptr err;
      try {
        move_share(r, off, buffer, bytes);
      } catch (...) {
        err = std::current_exception();
      }
      std::lock_guard lk(batch_.mu);
      if (err && !batch_.error) batch_.error = err;
      if (--batch_.remaining == 0) batch_.cv.notify_all();
    }
  }

  // The fetch thread moves the first share itself rather than handing it to a sleeping reader: on
  // a VM each hand-off is a wake-up of an idle vCPU, paid once per module before the first request
  // reaches the drive.
  void read(std::uint64_t file_offset_bytes, char* buffer, std::uint64_t bytes) {
    if (plan_.threads > 1) {
      std::lock_guard lk(batch_.mu);
      batch_.file_offset_bytes = file_offset_bytes;
      batch_.buffer = buffer;
      batch_.bytes = bytes;
      batch_.remaining = plan_.threads - 1;
      ++batch_.generation;
      batch_.cv.notify_all();
    }
    std::exception_ptr err;
    try {
      move_share(0, file_offset_bytes, buffer, bytes);
    } catch (...) {
      err = std::current_exception();
    }
    if (plan_.threads > 1) {
      std::unique_lock lk(batch_.mu);
      batch_.cv.wait(lk, [&] { return batch_.remaining == 0; });
      if (!err) err = batch_.error;
    }
    if (err) std::rethrow_exception(err);
  }

  void mark_ready(std::size_t i) {
    std::lock_guard lk(ready_mu_);
    ready_upto_ = std::max(ready_upto_, i + 1);
    ready_cv_.notify_all();
  }

  void fetch_loop() {
    for (std::size_t i = 0; i < plan_.steps.size(); ++i) {
      if (stop_ && stop_->load(std::memory_order_relaxed)) throw Interrupted("replay interrupted");
      const ReplayStep& st = plan_.steps[i];
      if (st.nvme_bytes == 0) {
        // Modules that are not streamed take no slot (as in the simulator); order is kept because
        // readiness is a prefix.
        mark_ready(i);
        continue;
      }
      slots_.acquire();
      const std::size_t slot = slot_index_++ % static_cast<std::size_t>(plan_.prefetch_layers + 1);
      char* dest = dest_.data() + slot * slot_bytes_;
      const double t_host = now_s();
      if (st.tensors > 0) {
        hold_until(Clock::now() +
                   std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(st.tensors * plan_.fetch_overhead_s)));
        fetch_spans_.push_back(sim::timeline_span(sim::resource::kCpu.name(),
                                                  sim::activity::kFetchOverhead, t_host, now_s(),
                                                  st.pass, st.module));
      }
      const std::uint64_t file_off = file_.region_offset_bytes() + st.file_offset_bytes;
      if (plan_.io_path == IoPath::kAio) {
        swaps_.acquire();
        const std::size_t b = swap_index_++ % plan_.swap_buffers;
        char* bounce = bounce_.data() + b * slot_bytes_;
        const double t_read = now_s();
        read(file_off, bounce, st.nvme_bytes);
        const double t_end = now_s();
        note_read(t_read, t_end, st);
        std::lock_guard lk(copy_mu_);
        copies_.push_back({i, bounce, dest, st.nvme_bytes});
        copy_cv_.notify_all();
      } else {
        const double t_read = now_s();
        read(file_off, dest, st.nvme_bytes);
        note_read(t_read, now_s(), st);
        mark_ready(i);
      }
    }
  }

  void note_read(double start_s, double end_s, const ReplayStep& st) {
    fetch_spans_.push_back(sim::timeline_span(sim::resource::kNvme.name(),
                                              sim::activity::kWeightsNvme, start_s, end_s, st.pass,
                                              st.module));
    read_bytes_ += double(st.nvme_bytes);
    read_busy_s_ += end_s - start_s;  // one batch at a time: the intervals do not overlap
  }

  // The AIO path's second hop: bounce buffer -> "GPU" buffer, then the bounce buffer is free.
  void copy_loop() {
    for (;;) {
      Copy c;
      {
        std::unique_lock lk(copy_mu_);
        copy_cv_.wait(lk, [&] { return copy_quit_ || !copies_.empty(); });
        if (copies_.empty()) return;
        c = copies_.front();
        copies_.pop_front();
      }
      const ReplayStep& st = plan_.steps[c.step];
      const double t = now_s();
      std::memcpy(c.dest, c.bounce, c.bytes);
      copy_spans_.push_back(sim::timeline_span(sim::resource::kPcieH2d.name(),
                                               sim::activity::kWeightsBounce, t, now_s(), st.pass,
                                               st.module));
      swaps_.release();
      mark_ready(c.step);
    }
  }

  void compute_loop() {
    for (std::size_t i = 0; i < plan_.steps.size(); ++i) {
      {
        std::unique_lock lk(ready_mu_);
        ready_cv_.wait(lk, [&] { return ready_upto_ > i; });
      }
      const ReplayStep& st = plan_.steps[i];
      if (!abort_.load()) {
        const double t = now_s();
        hold_until(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(st.compute_s)));
        compute_spans_.push_back(sim::timeline_span(
            sim::resource::kGpu.name(), sim::activity::kCompute, t, now_s(), st.pass, st.module));
      }
      if (st.nvme_bytes > 0) slots_.release();
      if (st.pass == 0) prefill_end_s_ = now_s();
    }
    end_s_ = now_s();
  }

  struct Copy {
    std::size_t step = 0;
    char* bounce = nullptr;
    char* dest = nullptr;
    std::uint64_t bytes = 0;
  };

  const ReplayPlan& plan_;
  const CalibrationFile& file_;
  const std::atomic<bool>* stop_;
  std::counting_semaphore<1024> slots_;
  std::counting_semaphore<1024> swaps_;
  std::uint64_t slot_bytes_ = 0;
  PinnedBuffer dest_, bounce_;
  std::vector<std::unique_ptr<IoEngine>>
      engines_;                      // one ring per reader; engines_[0] is the fetch thread's
  const char* pool_base_ = nullptr;  // the registered buffers the rings read into
  Clock::time_point t0_;
  ReadBatch batch_;
  std::mutex copy_mu_;
  std::condition_variable copy_cv_;
  std::deque<Copy> copies_;
  bool copy_quit_ = false;
  std::mutex ready_mu_;
  std::condition_variable ready_cv_;
  std::size_t ready_upto_ = 0;
  std::atomic<bool> abort_{false};
  std::size_t slot_index_ = 0, swap_index_ = 0;
  // Each vector is written by one thread only and read after the joins.
  std::vector<sim::TimelineSpan> fetch_spans_, copy_spans_, compute_spans_;
  double read_bytes_ = 0, read_busy_s_ = 0;
  double prefill_end_s_ = 0, end_s_ = 0;
};

}  // namespace

namespace {

// Checked before the file is laid out, so a plan that cannot run writes nothing.
void check_plan(const ReplayPlan& plan) {
  if (plan.steps.empty()) throw ModelError("empty replay plan");
  if (plan.block_bytes % 4096 != 0)
    throw ModelError("replay block size must be a multiple of 4 KiB");
}

}  // namespace

CalibrationFile create_replay_file(const ReplayPlan& plan, const ReplayOptions& options) {
  check_plan(plan);
  FileOptions fo;
  fo.region_bytes = plan.file_bytes;
  fo.direct = true;
  fo.keep = options.keep_files;
  fo.deferred_removal = options.deferred_removal;
  fo.stop = options.stop;
  fo.limits.reserve_free_bytes = options.reserve_free_bytes;
  fo.limits.free_bytes = statvfs_free_bytes;
  // No results database here, so no registry: leftovers of a killed replay are not provably
  // tiersim's and stay (calibrate/target.hpp).
  // Index 900 keeps the replay file apart from a calibration run's files in the same directory.
  return CalibrationFile::create_in_dir(options.target_dir, 900, fo);
}

ReplayMeasurement run_replay(const ReplayPlan& plan, const CalibrationFile& file,
                             const ReplayOptions& options) {
  check_plan(plan);
  if (file.region_bytes() < plan.file_bytes)
    throw ModelError("replay file " + file.path() + " holds " +
                     std::to_string(file.region_bytes()) + " bytes; the plan needs " +
                     std::to_string(plan.file_bytes));
  Replayer r(plan, file, options.stop);
  return r.run();
}

ReplayMeasurement run_replay(const ReplayPlan& plan, const ReplayOptions& options) {
  const CalibrationFile file = create_replay_file(plan, options);
  return run_replay(plan, file, options);
}

}  // namespace tiersim::replay
