#pragma once
// Shared by the replays: pinned host memory and one contiguous transfer split into blocks with a
// bounded number in flight on an IoEngine (calibrate/io_engine.hpp), short I/O resubmitted.
#include <cstdint>
#include <memory>
#include <vector>

#include "calibrate/io_engine.hpp"
#include "calibrate/target.hpp"

namespace tiersim::calibrate {

// Page-aligned memory, mlock'ed when the RLIMIT_MEMLOCK allows: the stand-in for pinned (page-
// locked) host buffers. Unlocked when destroyed.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t size_bytes);
  PinnedBuffer(PinnedBuffer&& other) noexcept = default;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept = default;
  ~PinnedBuffer();
  char* data() const { return static_cast<char*>(buffer_.data()); }
  std::size_t size() const { return buffer_.size(); }
  bool locked() const { return locked_; }

 private:
  AlignedBuffer buffer_;
  bool locked_ = false;
};

// The registered-buffer table of an engine over `pool`: one iovec per `block_bytes` piece, so a
// request's buffer index is simply its offset / block (and unique while it is in flight).
std::vector<iovec> block_pieces(const PinnedBuffer& pool, std::uint32_t block_bytes);

// Moves `bytes` between the file at `file_offset_bytes` and `buffer` (block-aligned inside the
// pool the engine registered, starting at `pool_base`) in requests of at most `block_bytes`,
// keeping up to `queue_depth` in flight. Short transfers are resubmitted, -EAGAIN/-EINTR retried;
// other errors throw IoError naming errno.
void transfer_blocks(IoEngine& engine, std::uint64_t file_offset_bytes, char* buffer, const char* pool_base,
                     std::uint64_t bytes, std::uint32_t block_bytes, unsigned queue_depth);

}  // namespace tiersim::calibrate
