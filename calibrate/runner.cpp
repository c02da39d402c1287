// The benchmark loop shared by every engine, and the sampling coordinator around it.
#include "calibrate/runner.hpp"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <thread>

#include "calibrate/rng.hpp"
#include "calibrate/target.hpp"

namespace tiersim::calibrate {

JobSpec parse_rw(const std::string& rw) {
  JobSpec j;
  if (rw == "read") {
    j.direction = IoDirection::read;
    j.pattern = Pattern::sequential;
  } else if (rw == "write") {
    j.direction = IoDirection::write;
    j.pattern = Pattern::sequential;
  } else if (rw == "randread") {
    j.direction = IoDirection::read;
    j.pattern = Pattern::random;
  } else if (rw == "randwrite") {
    j.direction = IoDirection::write;
    j.pattern = Pattern::random;
  } else if (const std::size_t digits = rw.find_first_of("0123456789");
             digits != std::string::npos && (rw.substr(0, digits) == "randrw" ||
                                             rw.substr(0, digits) == "rw")) {
    const std::string pct = rw.substr(digits);
    if (pct.size() > 3 || pct.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(pct) > 100)
      throw Error("--rw '" + rw + "': the read percentage after randrw must be 0..100 (randrw70)");
    j.pattern = rw[0] == 'r' && rw[1] == 'a' ? Pattern::random : Pattern::sequential;
    j.rwmix_read_pct = std::stoi(pct);
  } else {
    throw Error("unknown --rw '" + rw +
                "' (valid: read, write, randread, randwrite, randrw<read percent> as randrw70)");
  }
  return j;
}

std::string rw_name(const JobSpec& job) {
  std::string s = job.pattern == Pattern::random ? "rand" : "";
  if (job.mixed()) return s + "rw" + std::to_string(job.rwmix_read_pct);
  return s + (job.direction == IoDirection::read ? "read" : "write");
}

namespace {

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Counters one worker publishes and the coordinator samples; a cache line each so the workers do
// not slow each other down.
struct alignas(64) WorkerCounters {
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> ios{0};
  std::atomic<std::uint64_t> read_bytes{0};  // of bytes, the reads' (a mixed point's split)
  std::atomic<std::uint64_t> read_ios{0};
};

struct Shared {
  std::atomic<bool> measuring{false};
  std::atomic<bool> stop{false};
};

class Worker {
 public:
  Worker(EngineKind kind, const PointTarget& target, const JobSpec& job, unsigned index, std::uint64_t seed,
         Shared& shared, WorkerCounters& counters)
      : kind_(kind), target_(target), job_(job), shared_(shared), counters_(counters), rng_(seed),
        mix_rng_(seed ^ 0x6d69786564ull) {
    // The sync engine has one request in flight per thread, whatever the queue depth asked for.
    depth_ = kind == EngineKind::sync ? 1u : std::max(1u, job.queue_depth);
    buffer_ = AlignedBuffer(static_cast<std::size_t>(depth_) * job.block_bytes, job.buffer_pages);
    Rng fill(seed ^ 0xb0ffe4ull);
    fill.fill(buffer_.data(), buffer_.size());  // incompressible write data
    huge_fraction_ = huge_page_fraction(buffer_.data(), buffer_.size());
    blocks_ = target.region_bytes / job.block_bytes;
    if (blocks_ == 0) throw IoError("target region smaller than one block");
    // Sequential threads each stream through their own slice, as fio's numjobs with offsets.
    const std::uint64_t per_thread = std::max<std::uint64_t>(1, blocks_ / std::max(1u, job.threads));
    first_block_ = std::min<std::uint64_t>(blocks_ - 1, per_thread * index);
    end_block_ = job.threads > 1 ? std::min(blocks_, first_block_ + per_thread) : blocks_;
    cursor_ = first_block_;
    slots_.resize(depth_);
  }

  void run() {
    try {
      loop();
    } catch (...) {
      error_ = std::current_exception();
      shared_.stop.store(true, std::memory_order_relaxed);
    }
    try {
      drain();
    } catch (...) {
      if (!error_) error_ = std::current_exception();
    }
  }

  void rethrow_if_failed() const {
    if (error_) std::rethrow_exception(error_);
  }
  const LatencyHistogram& histogram() const { return hist_; }
  const LatencyHistogram& histogram(IoDirection d) const {
    return d == IoDirection::read ? read_hist_ : write_hist_;
  }
  unsigned depth() const { return depth_; }
  unsigned caps() const { return caps_; }
  std::uint64_t short_ios() const { return short_ios_; }
  std::uint64_t retries() const { return retries_; }
  double huge_fraction() const { return huge_fraction_; }

 private:
  struct Slot {
    std::uint64_t offset = 0;
    std::uint32_t length = 0;
    std::uint32_t done = 0;
    std::uint64_t start_ns = 0;
    IoDirection direction = IoDirection::read;
  };

  std::uint64_t next_offset() {
    std::uint64_t block;
    if (job_.pattern == Pattern::random) {
      block = rng_.below(blocks_);
    } else {
      block = cursor_++;
      if (cursor_ >= end_block_) cursor_ = first_block_;
    }
    return target_.region_offset_bytes + block * job_.block_bytes;
  }

  IoRequest request_for(std::uint32_t slot) const {
    const Slot& s = slots_[slot];
    IoRequest r;
    r.slot = slot;
    r.offset_bytes = s.offset + s.done;
    r.length_bytes = s.length - s.done;
    r.buffer = static_cast<char*>(buffer_.data()) + static_cast<std::size_t>(slot) * job_.block_bytes + s.done;
    r.direction = s.direction;
    return r;
  }

  // Prepares the queued slots; a full submission queue is flushed once and the rest wait.
  void prepare_queued() {
    while (!queued_.empty()) {
      const std::uint32_t slot = queued_.back();
      if (!engine_->prepare(request_for(slot))) {
        const int ret = engine_->submit(0);
        if (ret == -EINTR || ret == -EAGAIN || ret == -EBUSY || !engine_->prepare(request_for(slot))) return;
      }
      queued_.pop_back();
      ++inflight_;
    }
  }

  void start_new(std::uint32_t slot, std::uint64_t t_ns) {
    Slot& s = slots_[slot];
    s.offset = next_offset();
    s.length = job_.block_bytes;
    s.done = 0;
    s.start_ns = t_ns;
    // A mixed stream draws each request's direction, so reads and writes interleave in the queue
    // in the asked proportion (fio's rwmixread draws the same way).
    s.direction = job_.mixed() ? (mix_rng_.below(100) < static_cast<std::uint64_t>(job_.rwmix_read_pct)
                                      ? IoDirection::read
                                      : IoDirection::write)
                               : job_.direction;
    queued_.push_back(slot);
  }

  [[noreturn]] void fail(const Slot& s, int err) const {
    const char* op = s.direction == IoDirection::read ? "read" : "write";
    std::string msg = std::string(op) + " of " + std::to_string(s.length - s.done) + " bytes at offset " +
                      std::to_string(s.offset + s.done) + " failed: " + std::strerror(err) + " (errno " +
                      std::to_string(err) + ")";
    if (err == EINVAL) {
      throw DirectIoUnsupported(msg + "; with O_DIRECT this means the file system or device rejects the "
                                      "alignment or direct I/O itself. Try another directory or --buffered.");
    }
    throw IoError(msg);
  }

  // One completion: count it, resubmit what is left of a short transfer, retry transient errors.
  void complete(const IoCompletion& c, std::uint64_t t_ns, bool measuring) {
    Slot& s = slots_[c.slot];
    if (c.result < 0) {
      const int err = -c.result;
      if ((err == EAGAIN || err == EINTR) && ++retries_ < 1000000) {
        queued_.push_back(c.slot);
        return;
      }
      fail(s, err);
    }
    if (c.result == 0) {
      fail(s, s.direction == IoDirection::read ? EIO : ENOSPC);  // end of file / no progress
    }
    s.done += static_cast<std::uint32_t>(c.result);
    bytes_ += static_cast<std::uint64_t>(c.result);
    if (s.direction == IoDirection::read) read_bytes_ += static_cast<std::uint64_t>(c.result);
    if (s.done < s.length) {
      ++short_ios_;
      queued_.push_back(c.slot);
      return;
    }
    ++ios_;
    if (s.direction == IoDirection::read) ++read_ios_;
    if (measuring) {
      hist_.record_ns(t_ns - s.start_ns);
      (s.direction == IoDirection::read ? read_hist_ : write_hist_).record_ns(t_ns - s.start_ns);
    }
    if (!shared_.stop.load(std::memory_order_relaxed)) start_new(c.slot, t_ns);
  }

  void loop() {
    EngineSetup setup;
    setup.fd = target_.fd;
    setup.direction = job_.direction;
    setup.queue_depth = depth_;
    for (unsigned i = 0; i < depth_; ++i) {
      setup.buffers.push_back({static_cast<char*>(buffer_.data()) + static_cast<std::size_t>(i) * job_.block_bytes,
                               job_.block_bytes});
    }
    engine_ = make_engine(kind_, setup);
    caps_ = engine_->caps();
    const std::uint64_t t0 = now_ns();
    for (std::uint32_t i = 0; i < depth_; ++i) start_new(depth_ - 1 - i, t0);
    IoCompletion done[256];
    while (!shared_.stop.load(std::memory_order_relaxed)) {
      prepare_queued();
      const int ret = engine_->submit(inflight_ > 0 ? 1u : 0u);
      if (ret == -EINTR) continue;  // a signal: look at the stop flag, then go on
      const unsigned n = engine_->reap(done);
      if (n == 0) continue;
      const std::uint64_t t = now_ns();  // one clock read per batch of completions
      const bool measuring = shared_.measuring.load(std::memory_order_relaxed);
      // The whole batch has left the kernel, even if one of them throws below: drain() must not
      // wait for completions that were already reaped.
      inflight_ -= n;
      for (unsigned i = 0; i < n; ++i) complete(done[i], t, measuring);
      counters_.bytes.store(bytes_, std::memory_order_relaxed);
      counters_.ios.store(ios_, std::memory_order_relaxed);
      counters_.read_bytes.store(read_bytes_, std::memory_order_relaxed);
      counters_.read_ios.store(read_ios_, std::memory_order_relaxed);
    }
  }

  // The kernel may still be writing into the buffers: wait for every request before freeing them.
  void drain() {
    if (!engine_) return;
    queued_.clear();
    IoCompletion done[256];
    int spins = 0;
    while (inflight_ > 0) {
      const int ret = engine_->submit(1);
      if (ret == -EINTR && ++spins > 1000000) break;
      const unsigned n = engine_->reap(done);
      inflight_ -= std::min<unsigned>(n, inflight_);
    }
  }

  EngineKind kind_;
  PointTarget target_;
  JobSpec job_;
  Shared& shared_;
  WorkerCounters& counters_;
  Rng rng_;
  Rng mix_rng_;  // directions of a mixed stream, apart from the offsets
  unsigned depth_ = 1;
  AlignedBuffer buffer_;
  std::uint64_t blocks_ = 0, first_block_ = 0, end_block_ = 0, cursor_ = 0;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> queued_;
  unsigned inflight_ = 0;
  std::unique_ptr<IoEngine> engine_;
  unsigned caps_ = 0;
  std::uint64_t bytes_ = 0, ios_ = 0, short_ios_ = 0, retries_ = 0;
  std::uint64_t read_bytes_ = 0, read_ios_ = 0;
  LatencyHistogram hist_, read_hist_, write_hist_;
  double huge_fraction_ = 0;
  std::exception_ptr error_;
};

struct Sample {
  std::uint64_t t_ns, bytes, ios, read_bytes, read_ios;
};

// The latency fields of a whole point (PointResult) or of one direction (DirectionResult).
template <class Result>
void set_latency(Result& d, const LatencyHistogram& h) {
  d.lat_mean_us = h.mean_ns() / 1e3;
  d.lat_p50_us = h.percentile_ns(50) / 1e3;
  d.lat_p90_us = h.percentile_ns(90) / 1e3;
  d.lat_p99_us = h.percentile_ns(99) / 1e3;
  d.lat_p999_us = h.percentile_ns(99.9) / 1e3;
  d.lat_max_us = h.max_ns() / 1e3;
}

}  // namespace

PointResult run_point(EngineKind engine, const std::vector<PointTarget>& targets, const JobSpec& job,
                      const RunLimits& limits, const std::atomic<bool>* stop, std::uint64_t seed) {
  if (targets.empty()) throw Error("no targets to measure");
  if (job.block_bytes == 0 || job.block_bytes % 512 != 0) {
    throw Error("block size must be a positive multiple of 512 bytes, got " + std::to_string(job.block_bytes));
  }
  const unsigned threads = std::max(1u, job.threads);
  Shared shared;
  const std::size_t n_workers = targets.size() * threads;
  std::vector<WorkerCounters> counters(n_workers);
  std::vector<std::unique_ptr<Worker>> workers;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    for (unsigned i = 0; i < threads; ++i) {
      const std::size_t w = t * threads + i;
      workers.push_back(std::make_unique<Worker>(engine, targets[t], job, i, seed * 7919 + w, shared, counters[w]));
    }
  }
  std::vector<std::thread> pool;
  pool.reserve(n_workers);
  for (auto& w : workers) pool.emplace_back([&w] { w->run(); });

  auto sample = [&] {
    Sample s{now_ns(), 0, 0, 0, 0};
    for (const auto& c : counters) {
      s.bytes += c.bytes.load(std::memory_order_relaxed);
      s.ios += c.ios.load(std::memory_order_relaxed);
      s.read_bytes += c.read_bytes.load(std::memory_order_relaxed);
      s.read_ios += c.read_ios.load(std::memory_order_relaxed);
    }
    return s;
  };
  auto interrupted = [&] { return stop != nullptr && stop->load(std::memory_order_relaxed); };
  const auto window = std::chrono::duration<double>(limits.window_s);

  const std::uint64_t begin = now_ns();
  while (!interrupted() && !shared.stop.load() && static_cast<double>(now_ns() - begin) * 1e-9 < limits.warmup_s) {
    std::this_thread::sleep_for(std::min(window, std::chrono::duration<double>(limits.warmup_s)));
  }
  const Sample s0 = sample();
  shared.measuring.store(true);
  Sample last = s0;
  std::deque<double> cumulative;
  bool converged = false;
  while (!interrupted() && !shared.stop.load()) {
    std::this_thread::sleep_for(window);
    last = sample();
    const double elapsed_s = static_cast<double>(last.t_ns - s0.t_ns) * 1e-9;
    const double bw = static_cast<double>(last.bytes - s0.bytes) / std::max(elapsed_s, 1e-9);
    cumulative.push_back(bw);
    if (cumulative.size() > static_cast<std::size_t>(limits.converge_windows)) cumulative.pop_front();
    if (limits.max_bytes > 0 && last.bytes - s0.bytes >= limits.max_bytes) break;
    if (elapsed_s >= limits.max_s) break;
    if (limits.stop_on_convergence && elapsed_s >= limits.min_s && last.ios - s0.ios >= 64 &&
        cumulative.size() == static_cast<std::size_t>(limits.converge_windows)) {
      const auto [lo, hi] = std::minmax_element(cumulative.begin(), cumulative.end());
      if (*hi - *lo <= limits.converge_tolerance * bw) {
        converged = true;
        break;
      }
    }
  }
  shared.stop.store(true);
  for (auto& t : pool) t.join();
  for (const auto& w : workers) w->rethrow_if_failed();
  if (interrupted()) throw Interrupted("calibration interrupted");

  PointResult r;
  r.duration_s = static_cast<double>(last.t_ns - s0.t_ns) * 1e-9;
  r.bytes = last.bytes - s0.bytes;
  r.ios = last.ios - s0.ios;
  r.bandwidth_gbps = r.duration_s > 0 ? static_cast<double>(r.bytes) / r.duration_s / 1e9 : 0;
  r.iops = r.duration_s > 0 ? static_cast<double>(r.ios) / r.duration_s : 0;
  r.converged = converged;
  LatencyHistogram hist, read_hist, write_hist;
  for (const auto& w : workers) {
    hist.merge(w->histogram());
    read_hist.merge(w->histogram(IoDirection::read));
    write_hist.merge(w->histogram(IoDirection::write));
    r.short_ios += w->short_ios();
    r.retries += w->retries();
    // Every worker's buffer has the same size: the plain mean is the share of all buffer bytes.
    r.buffer_huge_fraction += w->huge_fraction() / static_cast<double>(workers.size());
  }
  r.effective_queue_depth = workers.front()->depth();
  r.engine_caps = workers.front()->caps();
  set_latency(r, hist);
  // Each direction's share: its bytes and completions over the same interval, its own latency.
  r.read.bytes = last.read_bytes - s0.read_bytes;
  r.read.ios = last.read_ios - s0.read_ios;
  r.write.bytes = r.bytes - r.read.bytes;
  r.write.ios = r.ios - r.read.ios;
  for (DirectionResult* d : {&r.read, &r.write}) {
    d->bandwidth_gbps = r.duration_s > 0 ? static_cast<double>(d->bytes) / r.duration_s / 1e9 : 0;
    d->iops = r.duration_s > 0 ? static_cast<double>(d->ios) / r.duration_s : 0;
  }
  set_latency(r.read, read_hist);
  set_latency(r.write, write_hist);
  return r;
}

}  // namespace tiersim::calibrate
