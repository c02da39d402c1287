#include "sim/engine/engine.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "model/errors.hpp"

namespace tiersim::sim {

Resource::Resource(Engine& engine, int id, ResourceSpec spec, WorkUnit unit, double rate_per_s,
                   int channels)
    : engine_(engine),
      id_(id),
      role_(spec.role),
      name_(std::move(spec.name)),
      unit_(unit),
      rate_per_s_(rate_per_s),
      free_at_(static_cast<std::size_t>(std::max(1, channels)), 0.0),
      one_channel_(free_at_.size() == 1) {}

int Resource::earliest_of_several_channels() const {
  std::size_t best = 0;
  for (std::size_t c = 1; c < free_at_.size(); ++c)
    if (free_at_[c] < free_at_[best]) best = c;
  return static_cast<int>(best);
}

// A detached process: owns the Task it runs, unlinks itself from the engine's live list and frees
// its frame when the Task finishes.
struct ProcessPromise;
struct Process {
  using promise_type = ProcessPromise;
  std::coroutine_handle<ProcessPromise> handle;
};

struct ProcessPromise {
  Engine* engine = nullptr;
  ProcessPromise* prev = nullptr;
  ProcessPromise* next = nullptr;
  static void* operator new(std::size_t bytes) { return frame_pool::allocate(bytes); }
  static void operator delete(void* frame, std::size_t bytes) noexcept {
    frame_pool::deallocate(frame, bytes);
  }
  Process get_return_object() {
    return Process{std::coroutine_handle<ProcessPromise>::from_promise(*this)};
  }
  std::suspend_always initial_suspend() noexcept { return {}; }
  std::suspend_never final_suspend() noexcept {
    unlink();
    return {};
  }
  void return_void() {}
  void unhandled_exception() {
    if (engine && !engine->failure_) engine->failure_ = std::current_exception();
  }
  void unlink() {
    if (!engine) return;
    if (prev)
      prev->next = next;
    else
      engine->live_head_ = next;
    if (next) next->prev = prev;
    engine = nullptr;
  }
};

namespace {
Process run_detached(Task task) {
  co_await task;
}
}  // namespace

Engine::~Engine() {
  // Processes left waiting (a deadlock, or a run stopped by an exception) are freed here.
  while (live_head_) {
    ProcessPromise* p = live_head_;
    p->unlink();
    std::coroutine_handle<ProcessPromise>::from_promise(*p).destroy();
  }
}

Resource& Engine::add_resource(ResourceSpec spec, WorkUnit unit, double rate_per_s, int channels) {
  int id = static_cast<int>(resources_.size());
  resources_.push_back(
      std::make_unique<Resource>(*this, id, std::move(spec), unit, rate_per_s, channels));
  resources_.back()->tracing_ = spans_kept();
  return *resources_.back();
}

void Engine::schedule(double t_s, std::coroutine_handle<> h) {
  push(Event{t_s, seq_++, h});
}

void Engine::set_at(double t_s, Flag& flag) {
  push(Event{t_s, seq_++, nullptr, &flag});
}

void Engine::push(const Event& e) {
  if (e.t_s <= now_s_) {
    now_queue_.push_back(e);
    now_queue_.back().t_s = now_s_;
    return;
  }
  queue_.push_back(e);
  std::push_heap(queue_.begin(), queue_.end(), Later{});
}

void Engine::spawn(Task task) {
  spawn_at(now_s_, std::move(task));
}

void Engine::spawn_at(double t_s, Task task) {
  Process p = run_detached(std::move(task));
  ProcessPromise& promise = p.handle.promise();
  promise.engine = this;
  promise.next = live_head_;
  if (live_head_) live_head_->prev = &promise;
  live_head_ = &promise;
  schedule(t_s, p.handle);
}

void Engine::poll_stop() const {
  if (stop_ && stop_->load(std::memory_order_relaxed))
    throw Interrupted("the simulation was stopped on request at simulated time " +
                      std::to_string(now_s_) + " s");
}

void Resource::record(int channel, double start_s, double end_s, double work_s, const Tag& tag) {
  engine_.record(TraceSpan{id_, channel, start_s, end_s, tag.activity, tag.phase, tag.item,
                           tag.stage, work_s});
}

void Engine::run() {
  run_until(std::numeric_limits<double>::infinity());
}

void Engine::run_until(double t_s) {
  // The heap's front is the earliest event (Later orders the latest first). Events in now_queue_
  // are at now_s_; a heap event at now_s_ with a lower sequence number goes before them.
  for (;;) {
    Event e;
    if (!now_queue_.empty() && now_s_ <= t_s &&
        (queue_.empty() || Later{}(queue_.front(), now_queue_.front()))) {
      e = now_queue_.front();
      now_queue_.pop_front();
    } else if (!queue_.empty() && queue_.front().t_s <= t_s) {
      std::pop_heap(queue_.begin(), queue_.end(), Later{});
      e = queue_.back();
      queue_.pop_back();
    } else {
      break;
    }
    now_s_ = e.t_s;
    ++events_;
    if (stop_ && events_ % kStopPollEvents == 0) poll_stop();  // no flag: no per-event modulo
    if (e.flag)
      e.flag->set();
    else
      e.handle.resume();
    if (failure_) std::rethrow_exception(failure_);
  }
  if (t_s < std::numeric_limits<double>::infinity()) now_s_ = std::max(now_s_, t_s);
}

double Engine::reserve_all(const std::vector<Demand>& demands, const Tag& tag, double fixed_s) {
  return reserve_all(demands.data(), demands.data() + demands.size(), tag, fixed_s);
}

double Engine::reserve_many_from(double ready_s, const Demand* begin, const Demand* end,
                                 const Tag& tag, double fixed_s) {
  std::vector<Choice> choices(static_cast<std::size_t>(end - begin));
  return reserve_flow(ready_s, begin, end, tag, fixed_s, choices.data());
}

void Flag::set() {
  if (set_) return;
  set_ = true;
  if (!first_waiter_) return;
  engine_->schedule(engine_->now(), std::exchange(first_waiter_, {}));
  for (auto h : more_waiters_) engine_->schedule(engine_->now(), h);
  more_waiters_.clear();
}

void Semaphore::release() {
  if (head_ < waiters_.size()) {
    auto h = waiters_[head_++];
    if (head_ == waiters_.size()) {
      waiters_.clear();
      head_ = 0;
    }
    engine_->schedule(engine_->now(), h);
  } else {
    ++free_;
  }
}

}  // namespace tiersim::sim
