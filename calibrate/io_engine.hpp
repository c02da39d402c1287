#pragma once
// I/O engines for the calibration benchmarks. Like fio's ioengine_ops, an engine is a small set
// of operations (prepare, submit, reap) plus capability flags; the benchmark loop in runner.cpp
// is the same for every engine and handles short I/O, retries and errors once.
//
//  - io_uring: asynchronous, registered buffers and files, batched submission. What tiersim's
//    NVMe path and GPUDirect-style loaders achieve.
//  - sync:     pread/pwrite, one request at a time per thread. The baseline that ordinary
//    (buffered or blocking) code gets; queue depth comes only from threads.
#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/errors.hpp"

namespace tiersim::calibrate {

enum class EngineKind { io_uring, sync };
const char* engine_name(EngineKind kind);
EngineKind parse_engine(const std::string& name);  // throws Error naming the valid engines

// Capability flags, as fio's FIO_* engine flags: the runner adapts to what an engine can do.
enum EngineCap : unsigned {
  kCapAsync = 1u << 0,              // more than one request in flight per thread
  kCapRegisteredBuffers = 1u << 1,  // buffers pinned once (no per-I/O page mapping)
  kCapRegisteredFiles = 1u << 2,    // file descriptor looked up once
  kCapBatchedSubmit = 1u << 3,      // one system call submits many requests and waits
};

enum class IoDirection { read, write };

struct IoRequest {
  std::uint32_t slot = 0;           // index of the buffer (and of the registered buffer)
  std::uint64_t offset_bytes = 0;
  std::uint32_t length_bytes = 0;
  void* buffer = nullptr;           // inside buffer `slot`
  // This request's direction; unset: the engine's (EngineSetup::direction). A mixed stream sets it
  // per request, as fio's randrw does.
  std::optional<IoDirection> direction;
};

struct IoCompletion {
  std::uint32_t slot = 0;
  std::int32_t result = 0;          // bytes moved, or -errno
};

// io_uring cannot be used here (kernel without it, seccomp, io_uring_disabled sysctl). Carries the
// errno so the command can offer `--engine sync`.
class EngineUnavailable : public IoError {
 public:
  EngineUnavailable(const std::string& message, int err) : IoError(message), errno_(err) {}
  int error_number() const { return errno_; }

 private:
  int errno_;
};

struct EngineSetup {
  int fd = -1;
  IoDirection direction = IoDirection::read;
  unsigned queue_depth = 1;
  std::vector<iovec> buffers;       // one per slot; registered when the engine can
};

class IoEngine {
 public:
  virtual ~IoEngine() = default;
  virtual const char* name() const = 0;
  virtual unsigned caps() const = 0;
  // Queues one request; false when the submission queue is full (submit, then try again).
  virtual bool prepare(const IoRequest& request) = 0;
  // Hands the prepared requests over and waits until at least `wait_nr` completions are ready.
  // Returns 0 on success, -EINTR / -EAGAIN / -EBUSY when the caller should reap and retry; throws
  // IoError on other failures.
  virtual int submit(unsigned wait_nr) = 0;
  // Moves ready completions into `out` without blocking; returns how many.
  virtual unsigned reap(std::span<IoCompletion> out) = 0;
};

// Throws EngineUnavailable when io_uring cannot be set up, IoError on other failures.
std::unique_ptr<IoEngine> make_engine(EngineKind kind, const EngineSetup& setup);

// Probes whether io_uring works in this process (a tiny ring). Empty when it does, otherwise the
// reason, worded for a user.
std::string io_uring_unavailable_reason();

}  // namespace tiersim::calibrate
