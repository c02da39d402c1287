// The io_uring and pread/pwrite engines behind the IoEngine interface.
#include "calibrate/io_engine.hpp"

#include <liburing.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tiersim::calibrate {

const char* engine_name(EngineKind kind) { return kind == EngineKind::io_uring ? "io_uring" : "sync"; }

EngineKind parse_engine(const std::string& name) {
  if (name == "io_uring" || name == "uring") return EngineKind::io_uring;
  if (name == "sync" || name == "psync") return EngineKind::sync;
  throw Error("unknown engine '" + name + "' (valid engines: io_uring, sync)");
}

namespace {

std::string errno_text(int err) { return std::string(std::strerror(err)) + " (errno " + std::to_string(err) + ")"; }

std::string unavailable_message(int err) {
  return "io_uring is unavailable here: io_uring_queue_init failed with " + errno_text(err) +
         (err == EPERM || err == ENOSYS
              ? "; the kernel lacks io_uring, a seccomp filter (container) blocks it, or "
                "kernel.io_uring_disabled is set. Use --engine sync for the pread/pwrite engine."
              : ". Use --engine sync for the pread/pwrite engine.");
}

class UringEngine final : public IoEngine {
 public:
  explicit UringEngine(const EngineSetup& setup) : fd_(setup.fd), direction_(setup.direction) {
    unsigned entries = 2;
    while (entries < setup.queue_depth) entries <<= 1;
    const int ret = io_uring_queue_init(entries, &ring_, 0);
    if (ret < 0) {
      if (ret == -ENOSYS || ret == -EPERM || ret == -EACCES) throw EngineUnavailable(unavailable_message(-ret), -ret);
      throw IoError("io_uring_queue_init(" + std::to_string(entries) + ") failed: " + errno_text(-ret));
    }
    caps_ = kCapAsync | kCapBatchedSubmit;
    // Registration is an optimisation: when the locked-memory limit refuses it, plain buffers and
    // descriptors still work, only slower, and caps() says so.
    if (io_uring_register_files(&ring_, &fd_, 1) == 0) {
      caps_ |= kCapRegisteredFiles;
    }
    if (!setup.buffers.empty() &&
        io_uring_register_buffers(&ring_, setup.buffers.data(),
                                  static_cast<unsigned>(setup.buffers.size())) == 0) {
      caps_ |= kCapRegisteredBuffers;
    }
  }
  ~UringEngine() override { io_uring_queue_exit(&ring_); }
  UringEngine(const UringEngine&) = delete;
  UringEngine& operator=(const UringEngine&) = delete;

  const char* name() const override { return "io_uring"; }
  unsigned caps() const override { return caps_; }

  bool prepare(const IoRequest& r) override {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) return false;
    const bool read = r.direction.value_or(direction_) == IoDirection::read;
    const bool fixed_file = (caps_ & kCapRegisteredFiles) != 0;
    const int fd = fixed_file ? 0 : fd_;
    if (caps_ & kCapRegisteredBuffers) {
      const int index = static_cast<int>(r.slot);
      if (read) {
        io_uring_prep_read_fixed(sqe, fd, r.buffer, r.length_bytes, r.offset_bytes, index);
      } else {
        io_uring_prep_write_fixed(sqe, fd, r.buffer, r.length_bytes, r.offset_bytes, index);
      }
    } else if (read) {
      io_uring_prep_read(sqe, fd, r.buffer, r.length_bytes, r.offset_bytes);
    } else {
      io_uring_prep_write(sqe, fd, r.buffer, r.length_bytes, r.offset_bytes);
    }
    if (fixed_file) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, r.slot);
    return true;
  }

  int submit(unsigned wait_nr) override {
    const int ret = io_uring_submit_and_wait(&ring_, wait_nr);
    if (ret >= 0) return 0;
    // Interrupted by a signal, or the kernel is short of resources / the completion queue is
    // full: the unsubmitted entries stay in the ring, so reaping and calling again is correct.
    if (ret == -EINTR || ret == -EAGAIN || ret == -EBUSY) return ret;
    throw IoError("io_uring_submit_and_wait failed: " + errno_text(-ret));
  }

  unsigned reap(std::span<IoCompletion> out) override {
    io_uring_cqe* cqes[256];
    const unsigned want = static_cast<unsigned>(std::min<std::size_t>(out.size(), 256));
    const unsigned n = io_uring_peek_batch_cqe(&ring_, cqes, want);
    for (unsigned i = 0; i < n; ++i) {
      out[i].slot = static_cast<std::uint32_t>(io_uring_cqe_get_data64(cqes[i]));
      out[i].result = cqes[i]->res;
    }
    io_uring_cq_advance(&ring_, n);
    return n;
  }

 private:
  io_uring ring_{};
  int fd_;
  IoDirection direction_;
  unsigned caps_ = 0;
};

class SyncEngine final : public IoEngine {
 public:
  explicit SyncEngine(const EngineSetup& setup)
      : fd_(setup.fd), direction_(setup.direction), depth_(std::max(1u, setup.queue_depth)) {
    pending_.reserve(depth_);
    done_.reserve(depth_);
  }
  const char* name() const override { return "sync"; }
  unsigned caps() const override { return 0; }

  bool prepare(const IoRequest& r) override {
    if (pending_.size() >= depth_) return false;
    pending_.push_back(r);
    return true;
  }

  // Runs each request to completion in order. A short transfer or EINTR is reported as is, so the
  // shared loop handles it exactly as it does for io_uring.
  int submit(unsigned) override {
    for (const auto& r : pending_) {
      const ssize_t n = r.direction.value_or(direction_) == IoDirection::read
                            ? ::pread(fd_, r.buffer, r.length_bytes, static_cast<off_t>(r.offset_bytes))
                            : ::pwrite(fd_, r.buffer, r.length_bytes, static_cast<off_t>(r.offset_bytes));
      done_.push_back({r.slot, n < 0 ? -errno : static_cast<std::int32_t>(n)});
    }
    pending_.clear();
    return 0;
  }

  unsigned reap(std::span<IoCompletion> out) override {
    const std::size_t n = std::min(out.size(), done_.size());
    std::copy_n(done_.begin(), n, out.begin());
    done_.erase(done_.begin(), done_.begin() + static_cast<std::ptrdiff_t>(n));
    return static_cast<unsigned>(n);
  }

 private:
  int fd_;
  IoDirection direction_;
  unsigned depth_;
  std::vector<IoRequest> pending_;
  std::vector<IoCompletion> done_;
};

}  // namespace

std::unique_ptr<IoEngine> make_engine(EngineKind kind, const EngineSetup& setup) {
  if (setup.fd < 0) throw IoError("I/O engine needs an open file");
  if (kind == EngineKind::io_uring) return std::make_unique<UringEngine>(setup);
  return std::make_unique<SyncEngine>(setup);
}

std::string io_uring_unavailable_reason() {
  io_uring ring{};
  const int ret = io_uring_queue_init(2, &ring, 0);
  if (ret < 0) return unavailable_message(-ret);
  io_uring_queue_exit(&ring);
  return {};
}

}  // namespace tiersim::calibrate
