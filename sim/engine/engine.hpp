#pragma once
// The discrete-event engine. Simulation processes are C++20 coroutines (sim::Task) that read as
// straight-line code: `co_await engine.delay(dt)`, `co_await link.transfer(bytes)`,
// `co_await flag.wait()`. Events are ordered by time, then by sequence number, so the same input
// gives the same output, bit for bit.
//
// Resources are non-preemptive first-come-first-served servers with one or more channels and a
// service rate (bytes, FLOPs or seconds per second). A request reserves the earliest free channel
// when it is made; a flow that needs several resources at once (a DMA that crosses the NVMe array,
// host memory and a PCIe link) reserves all of them for the time the slowest one needs. Each
// reservation is one event, which keeps the engine fast while contention, queueing and overlap
// still come out of the timeline rather than a formula.
#include <algorithm>
#include <array>
#include <atomic>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/frame_pool.hpp"
#include "sim/engine/kinds.hpp"
#include "sim/engine/span_log.hpp"

namespace tiersim::sim {

class Engine;
class Flag;
struct ProcessPromise;  // sim/engine.cpp: the frame of a detached process

// A lazily started coroutine. Awaiting a Task runs it to completion and resumes the awaiter;
// Engine::spawn runs it as an independent process.
class [[nodiscard]] Task {
 public:
  struct promise_type {
    std::coroutine_handle<> continuation;
    std::exception_ptr exception;
    // Frames come from the engine's frame pool (sim/engine/frame_pool.hpp).
    static void* operator new(std::size_t bytes) { return frame_pool::allocate(bytes); }
    static void operator delete(void* frame, std::size_t bytes) noexcept {
      frame_pool::deallocate(frame, bytes);
    }
    Task get_return_object() {
      return Task(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct FinalAwaiter {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
        auto c = h.promise().continuation;
        return c ? c : std::noop_coroutine();
      }
      void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() { exception = std::current_exception(); }
  };
  using Handle = std::coroutine_handle<promise_type>;

  explicit Task(Handle h) : handle_(h) {}
  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      if (handle_) handle_.destroy();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() {
    if (handle_) handle_.destroy();
  }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiter) noexcept {
    handle_.promise().continuation = awaiter;
    return handle_;
  }
  void await_resume() const {
    if (handle_.promise().exception) std::rethrow_exception(handle_.promise().exception);
  }
  Handle handle() const { return handle_; }

 private:
  Handle handle_;
};

// One busy interval of a resource, kept only when tracing.
struct TraceSpan {
  int resource = 0;  // index into Engine::resources()
  int channel = 0;
  double start_s = 0;
  double end_s = 0;
  Activity activity;  // what the work was ("" when untagged)
  int phase = 0;      // workload-defined (e.g. pass number)
  int item = 0;       // workload-defined (e.g. layer number)
  Stage stage = Stage::kNone;  // the part of the run the work served (Tag::stage)
  // [s] the resource's own work in the span (amount / rate, plus fixed time): less than
  // end_s - start_s when a slower resource of the same flow held the span open.
  double work_s = 0;
};

// Tag for a trace span: what, in which phase, on which item; and for the power model, how hard
// the work drives the resource and which part of the run it serves.
struct Tag {
  Activity activity;
  int phase = 0;
  int item = 0;
  // Fraction of the resource's dynamic power range (active minus idle power) the work draws while
  // it runs, 0..1: a GPU kernel bound by memory draws less than one at full compute
  // (model/power.hpp gpu_power_limited), a drive reading below its rated rate less than at it
  // (nvme_load). 1, full power, for work that does not say.
  double load = 1.0;
  Stage stage = Stage::kNone;
};

// A demand given by its amount and the work it costs a resource (Resource::work), worked out once
// for work reserved again and again (Engine::reserve_work_from).
struct Work {
  double amount = 0;  // in the resource's unit: bytes, or service seconds
  double s = 0;       // [s] Resource::work_s(amount)
};

class Resource {
 public:
  Resource(Engine& engine, int id, ResourceSpec spec, WorkUnit unit, double rate_per_s,
           int channels);

  ResourceRole role() const { return role_; }        // what energy charges its busy time to
  const std::string& name() const { return name_; }  // the name the workload gave it
  WorkUnit unit() const { return unit_; }            // what `amount` counts: bytes or seconds
  double rate_per_s() const { return rate_per_s_; }  // units of `amount` per second
  int channels() const { return static_cast<int>(free_at_.size()); }
  int id() const { return id_; }
  // [s] a demand of `amount` keeps this resource busy: amount / rate, 0 for a resource without a
  // rate (as a reservation counts it). For work reserved again and again: see reserve_work_from.
  double work_s(double amount) const { return rate_per_s_ > 0 ? amount / rate_per_s_ : 0.0; }
  Work work(double amount) const { return {amount, work_s(amount)}; }

  // Channel-seconds of work done at this resource's own rate; utilization = busy_s / (channels *
  // makespan). A flow held back by a slower resource occupies this one longer than busy_s counts,
  // so the narrowest link of a flow, not every link it crosses, shows up as the bottleneck.
  double busy_s() const { return busy_s_; }
  // Busy seconds weighted by each reservation's Tag::load [s]: what the power model charges at
  // the resource's full dynamic power.
  double load_s() const { return load_s_; }
  // Busy and load-weighted seconds of the work of one Tag::stage [s].
  double busy_s(Stage stage) const { return busy_by_stage_[static_cast<std::size_t>(stage)]; }
  double load_s(Stage stage) const { return load_by_stage_[static_cast<std::size_t>(stage)]; }
  // Work done over the run in the resource's unit (unit()): the bytes a link moved
  // (WorkUnit::kBytes), the service seconds of a kSeconds resource. Fixed time (a latency) is
  // no amount. Counted as the demands were made, not rebuilt from busy time and rate.
  double amount() const { return amount_; }

  // Awaitable: occupies one channel for amount / rate seconds (plus `fixed_s`).
  auto use(double amount, Tag tag = {}, double fixed_s = 0.0);

  // The channel that is free first (the lowest-numbered of those free equally soon). Low-level:
  // used by Engine::reserve_from. Inline, with a one-channel fast path: it runs for every
  // reservation, tens of thousands per simulated generation.
  int earliest_channel() const { return one_channel_ ? 0 : earliest_of_several_channels(); }
  double channel_free_at(int c) const { return free_at_[static_cast<std::size_t>(c)]; }
  // Occupies `channel` over [start_s, end_s], counting `work_s` [s] as busy (under tag.activity)
  // and `amount` as work done.
  inline void reserve(int channel, double start_s, double end_s, double work_s, double amount,
                      const Tag& tag);

 private:
  Engine& engine_;
  int id_;
  ResourceRole role_;
  std::string name_;
  WorkUnit unit_;
  double rate_per_s_;
  std::vector<double> free_at_;
  bool one_channel_ = true;  // free_at_.size() == 1, kept for earliest_channel
  // The engine's spans_kept(), kept here by Engine::enable_trace and keep_spans: reserve asks on
  // every call.
  bool tracing_ = false;
  friend class Engine;
  double busy_s_ = 0;
  double load_s_ = 0;
  double amount_ = 0;
  std::array<double, kStageCount> busy_by_stage_{};
  std::array<double, kStageCount> load_by_stage_{};
  int earliest_of_several_channels() const;
  // reserve's span, where the engine keeps them: out of line, so that reserve itself stays
  // small enough to be inlined into the loops that reserve on every tensor (a call per
  // reservation was a tenth of a sweep point's time).
  void record(int channel, double start_s, double end_s, double work_s, const Tag& tag);
};

// A demand on one resource inside a multi-resource flow.
struct Demand {
  Resource* resource;
  double amount;
};

class Engine {
 public:
  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  ~Engine();

  double now() const { return now_s_; }
  std::uint64_t events_processed() const { return events_; }

  // A resource with the role and name the workload gives it (`spec`), serving `rate_per_s` units
  // of `unit` per second on each of `channels`.
  Resource& add_resource(ResourceSpec spec, WorkUnit unit, double rate_per_s, int channels = 1);
  const std::vector<std::unique_ptr<Resource>>& resources() const { return resources_; }

  // Starts `task` as an independent process at the current time. Its frame is freed when it
  // finishes (or when the engine is destroyed, for a process left waiting forever).
  void spawn(Task task);
  // Starts `task` as an independent process at `t_s` [s] (>= now) instead of now: for work whose
  // first step is already known to happen then (e.g. a transfer that lands at a reserved time).
  void spawn_at(double t_s, Task task);
  // Sets `flag` at `t_s` [s] (>= now): one event, in the same place in the order as a process
  // spawned then to set it, without the process's frames.
  void set_at(double t_s, Flag& flag);
  // Runs the events due at or before `t_s` [s] in time order, leaves later ones queued, and then
  // sets the clock to t_s (nothing happens in between, and a process spawned next starts at t_s).
  // Rethrows the first exception a process raised.
  void run_until(double t_s);
  // Runs until no event is left: run_until(infinity), except that the clock stays at the last
  // event, which is the makespan the workloads report.
  void run();

  void enable_trace(bool on) {
    tracing_ = on;
    update_span_recording();
  }
  // Keeps every busy interval (spans()) without tracing(): for the time breakdown
  // (sim/breakdown.hpp), which reads the spans after the run. Unlike tracing, it changes no
  // workload's path (inference's run_direct stays on), so the results are the same with or
  // without it.
  void keep_spans(bool on) {
    keep_spans_ = on;
    update_span_recording();
  }
  // Whether spans() holds every busy interval of the run (tracing or keep_spans).
  bool spans_kept() const { return tracing_ || keep_spans_; }
  // Polls `*flag` every kStopPollEvents events while running and throws Interrupted once it is
  // set; null (the default): never stops early. The flag belongs to the caller (the Python
  // module's Ctrl-C, sim::SimOptions::stop) and must outlive the run.
  void stop_when(const std::atomic<bool>* flag) { stop_ = flag; }
  static constexpr std::uint64_t kStopPollEvents = 4096;
  // Throws Interrupted when that flag is set: for a workload that drives time with a loop of its
  // own (the serving scheduler books resources without events) to call once per step.
  void poll_stop() const;
  bool tracing() const { return tracing_; }
  // Every busy interval with its phase and item numbers, while tracing (the timeline).
  const std::vector<TraceSpan>& trace() const { return trace_; }
  // Every busy interval, compactly, while spans_kept() (the time breakdown's input).
  const SpanLog& spans() const { return spans_; }
  void record(const TraceSpan& span) {
    if (tracing_) trace_.push_back(span);
    if (spans_kept())
      spans_.add(span.resource, span.channel, span.start_s, span.end_s, span.work_s,
                 span.activity, span.stage);
  }

  // Resumes `h` at absolute time `t_s` (>= now).
  void schedule(double t_s, std::coroutine_handle<> h);

  // Awaitable: resumes at absolute time `t_s` [s] (>= now; at once, after the events already due
  // now, if t_s <= now). For a process that worked out when it is next needed itself: now + (t -
  // now) need not round back to t, so this is not delay(t - now).
  auto until(double t_s) {
    struct Awaiter {
      Engine& engine;
      double t_s;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> h) { engine.schedule(t_s, h); }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this, t_s};
  }

  // Awaitable: resumes after `dt_s` seconds.
  auto delay(double dt_s) {
    struct Awaiter {
      Engine& engine;
      double dt_s;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> h) { engine.schedule(engine.now() + dt_s, h); }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this, dt_s};
  }

  // Awaitable: occupies one channel of every resource in `demands` over the same interval, which
  // starts when all of them are free and lasts as long as the slowest needs (plus `fixed_s`).
  // Models a transfer crossing several links, whose rate is that of the narrowest.
  auto use_all(std::vector<Demand> demands, Tag tag = {}, double fixed_s = 0.0) {
    struct Awaiter {
      Engine& engine;
      std::vector<Demand> demands;
      Tag tag;
      double fixed_s;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> h) {
        engine.schedule(engine.reserve_all(demands, tag, fixed_s), h);
      }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this, std::move(demands), tag, fixed_s};
  }
  // use_all for the common two-resource flow (a DMA over a link and a drive, or a copy that also
  // holds the CPU), without allocating: the demands live in the awaiter.
  auto use_pair(Demand first, Demand second, Tag tag = {}, double fixed_s = 0.0) {
    struct Awaiter {
      Engine& engine;
      std::array<Demand, 2> demands;
      Tag tag;
      double fixed_s;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> h) {
        engine.schedule(
            engine.reserve_all(demands.data(), demands.data() + demands.size(), tag, fixed_s), h);
      }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this, {first, second}, tag, fixed_s};
  }
  // Reserves as use_all does; returns the end time [s]. Any number of demands.
  double reserve_all(const std::vector<Demand>& demands, const Tag& tag, double fixed_s);
  double reserve_all(const Demand* begin, const Demand* end, const Tag& tag, double fixed_s) {
    return reserve_from(now_s_, begin, end, tag, fixed_s);
  }
  // Reserves as reserve_all does for a flow that is ready at `ready_s` [s] rather than now; returns
  // the end time [s]. Only for resources one process uses alone and reserves in the order of their
  // ready times, which may lie ahead of now or behind it: a first-come-first-served resource serves
  // requests in the order they are made, so a reservation made early for later work must not
  // overtake one another process would make meanwhile, nor one made late be overtaken.
  // Inline: the inference fetcher makes one or two per tensor.
  inline double reserve_from(double ready_s, const Demand* begin, const Demand* end, const Tag& tag,
                             double fixed_s);
  // reserve_from for a flow on one resource (the same arithmetic, without the loops).
  inline double reserve_from(double ready_s, const Demand& demand, const Tag& tag, double fixed_s);
  // reserve_from without fixed time for demands given by their work (Resource::work of the
  // amount, worked out once): the same arithmetic, so the same times to the bit, without a
  // division per reservation. For a process that reserves the same amounts many times over (the
  // inference fetcher: every tensor of every pass).
  inline double reserve_work_from(double ready_s, Resource& r, const Work& work, const Tag& tag);
  inline double reserve_work_from(double ready_s, Resource& a, const Work& a_work, Resource& b,
                                  const Work& b_work, const Tag& tag);

 private:
  struct Event {
    double t_s;
    std::uint64_t seq;
    std::coroutine_handle<> handle;  // the process to resume, or
    Flag* flag = nullptr;            // the flag to set (set_at)
  };
  void push(const Event& e);
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.t_s != b.t_s ? a.t_s > b.t_s : a.seq > b.seq;
    }
  };
  friend struct ProcessPromise;
  // reserve_from's arithmetic, with room for what it works out per resource in `choices`.
  // Left uninitialised (reserve_flow writes each before reading it): zeroing room for
  // kInlineDemands on every reservation cost more than the reservation's arithmetic.
  struct Choice {
    int channel;
    double work_s;  // [s] of the resource's own work: amount / rate, plus fixed_s
  };
  inline double reserve_flow(double ready_s, const Demand* begin, const Demand* end, const Tag& tag,
                             double fixed_s, Choice* choices);
  // Flows of up to kInlineDemands resources keep their channel choices on the stack; longer ones
  // (never truncated) on the heap, in reserve_many_from.
  static constexpr std::size_t kInlineDemands = 8;
  double reserve_many_from(double ready_s, const Demand* begin, const Demand* end, const Tag& tag,
                           double fixed_s);
  double now_s_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t events_ = 0;
  const std::atomic<bool>* stop_ = nullptr;
  std::vector<Event> queue_;  // a heap of events after now_s_ (and some at now_s_)
  // Events scheduled for the current time (a spawn, a flag set, a released semaphore): they carry
  // increasing sequence numbers, so a FIFO keeps their order without the heap's O(log n). run_until
  // merges it with the heap by (time, sequence), so the order is exactly the heap-only order.
  std::deque<Event> now_queue_;
  // Live detached processes, as an intrusive list threaded through their promises.
  ProcessPromise* live_head_ = nullptr;
  std::exception_ptr failure_;
  std::vector<std::unique_ptr<Resource>> resources_;
  bool tracing_ = false;
  bool keep_spans_ = false;
  void update_span_recording() {
    for (auto& r : resources_) r->tracing_ = spans_kept();
    // A traced run keeps tens of thousands of spans (41,184 for
    // scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml). Grown by doubling, the log was
    // copied a dozen times into fresh memory, and the page faults of touching twice its size
    // were a third of `tiersim run`'s time. Capacity reserved up front is address space until a
    // span is written into it, so the log fills it in place (beyond it, it grows as before).
    if (tracing_ && trace_.capacity() < kReservedSpans) trace_.reserve(kReservedSpans);
  }
  // 262,144 spans, 14 MiB of address space: six times the spans of that run, and little enough
  // to commit where the system does not overcommit memory.
  static constexpr std::size_t kReservedSpans = std::size_t{1} << 18;
  std::vector<TraceSpan> trace_;
  SpanLog spans_;
};

inline void Resource::reserve(int channel, double start_s, double end_s, double work_s,
                              double amount, const Tag& tag) {
  free_at_[static_cast<std::size_t>(channel)] = end_s;
  busy_s_ += work_s;
  amount_ += amount;
  const double loaded_s = work_s * tag.load;
  load_s_ += loaded_s;
  const auto stage = static_cast<std::size_t>(tag.stage);
  busy_by_stage_[stage] += work_s;
  load_by_stage_[stage] += loaded_s;
  if (tracing_) [[unlikely]]
    record(channel, start_s, end_s, work_s, tag);
}

// A flow starts when the last of its resources is free and lasts as long as the slowest needs;
// each resource counts its own work (amount / rate, plus fixed_s) as busy.
inline double Engine::reserve_flow(double ready_s, const Demand* begin, const Demand* end,
                                   const Tag& tag, double fixed_s, Choice* choices) {
  const std::size_t n = static_cast<std::size_t>(end - begin);
  double start = ready_s;
  double duration = fixed_s;
  for (std::size_t i = 0; i < n; ++i) {
    const Resource& r = *begin[i].resource;
    Choice& c = choices[i];
    c.channel = r.earliest_channel();
    start = std::max(start, r.channel_free_at(c.channel));
    c.work_s = fixed_s + (r.rate_per_s() > 0 ? begin[i].amount / r.rate_per_s() : 0);
    if (r.rate_per_s() > 0) duration = std::max(duration, c.work_s);
  }
  const double finish = start + duration;
  for (std::size_t i = 0; i < n; ++i)
    begin[i].resource->reserve(choices[i].channel, start, finish, choices[i].work_s,
                               begin[i].amount, tag);
  return finish;
}

inline double Engine::reserve_from(double ready_s, const Demand* begin, const Demand* end,
                                   const Tag& tag, double fixed_s) {
  if (static_cast<std::size_t>(end - begin) > kInlineDemands)
    return reserve_many_from(ready_s, begin, end, tag, fixed_s);
  Choice choices[kInlineDemands];
  return reserve_flow(ready_s, begin, end, tag, fixed_s, choices);
}

inline double Engine::reserve_from(double ready_s, const Demand& d, const Tag& tag,
                                   double fixed_s) {
  const int channel = d.resource->earliest_channel();
  const double start = std::max(ready_s, d.resource->channel_free_at(channel));
  const double rate = d.resource->rate_per_s();
  const double work = fixed_s + (rate > 0 ? d.amount / rate : 0);
  const double finish = start + (rate > 0 ? std::max(fixed_s, work) : fixed_s);
  d.resource->reserve(channel, start, finish, work, d.amount, tag);
  return finish;
}

// reserve_from's arithmetic with fixed_s = 0: each resource's work is 0 + amount / rate (the
// addition changes no value), the duration the largest of 0 and the works.
inline double Engine::reserve_work_from(double ready_s, Resource& r, const Work& work,
                                        const Tag& tag) {
  const int channel = r.earliest_channel();
  const double start = std::max(ready_s, r.channel_free_at(channel));
  const double finish = start + std::max(0.0, work.s);
  r.reserve(channel, start, finish, work.s, work.amount, tag);
  return finish;
}

inline double Engine::reserve_work_from(double ready_s, Resource& a, const Work& a_work,
                                        Resource& b, const Work& b_work, const Tag& tag) {
  const int a_channel = a.earliest_channel();
  const int b_channel = b.earliest_channel();
  const double start =
      std::max(std::max(ready_s, a.channel_free_at(a_channel)), b.channel_free_at(b_channel));
  const double finish = start + std::max(std::max(0.0, a_work.s), b_work.s);
  a.reserve(a_channel, start, finish, a_work.s, a_work.amount, tag);
  b.reserve(b_channel, start, finish, b_work.s, b_work.amount, tag);
  return finish;
}

inline auto Resource::use(double amount, Tag tag, double fixed_s) {
  struct Awaiter {
    Engine& engine;
    Resource& resource;
    double amount;
    Tag tag;
    double fixed_s;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      // reserve_all's arithmetic for one demand, without its loops (every compute step).
      engine.schedule(engine.reserve_from(engine.now(), Demand{&resource, amount}, tag, fixed_s),
                      h);
    }
    void await_resume() const noexcept {}
  };
  return Awaiter{engine_, *this, amount, tag, fixed_s};
}

// A one-shot condition: processes wait until it is set. Setting resumes them at the current time.
class Flag {
 public:
  explicit Flag(Engine& engine) : engine_(&engine) {}
  bool is_set() const { return set_; }
  void set();
  auto wait() {
    struct Awaiter {
      Flag& flag;
      bool await_ready() const noexcept { return flag.set_; }
      void await_suspend(std::coroutine_handle<> h) {
        if (!flag.first_waiter_)
          flag.first_waiter_ = h;
        else
          flag.more_waiters_.push_back(h);
      }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this};
  }

 private:
  Engine* engine_;
  bool set_ = false;
  // The first waiter is kept inline: most flags (a module's weights ready, a stage's input) have
  // exactly one, and a vector for it was an allocation and a free per flag, 4% of a sweep point.
  std::coroutine_handle<> first_waiter_;
  std::vector<std::coroutine_handle<>> more_waiters_;  // the others, in the order they came
};

// A counting semaphore (buffer slots): acquire waits for a free unit, FIFO.
class Semaphore {
 public:
  Semaphore(Engine& engine, int units) : engine_(&engine), free_(units) {}
  int available() const { return free_; }
  void release();
  auto acquire() {
    struct Awaiter {
      Semaphore& sem;
      bool await_ready() const noexcept {
        if (sem.free_ > 0 && sem.head_ == sem.waiters_.size()) {
          --sem.free_;
          return true;
        }
        return false;
      }
      void await_suspend(std::coroutine_handle<> h) { sem.waiters_.push_back(h); }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this};
  }

 private:
  Engine* engine_;
  int free_;
  std::vector<std::coroutine_handle<>> waiters_;  // FIFO; front at head_
  std::size_t head_ = 0;
};

// Waits until `count` completions have been signalled (joins parallel sub-processes).
class Latch {
 public:
  Latch(Engine& engine, int count) : flag_(engine), remaining_(count) {
    if (count <= 0) flag_.set();
  }
  void count_down() {
    if (--remaining_ == 0) flag_.set();
  }
  auto wait() { return flag_.wait(); }

 private:
  Flag flag_;
  int remaining_;
};

}  // namespace tiersim::sim
