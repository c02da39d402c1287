#include "calibrate/io_blocks.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace tiersim::calibrate {

PinnedBuffer::PinnedBuffer(std::size_t size_bytes) : buffer_(size_bytes) {
  // Touch every page first so the lock (or, without it, the first transfer) does not pay faults.
  std::memset(buffer_.data(), 0, buffer_.size());
  locked_ = ::mlock(buffer_.data(), buffer_.size()) == 0;
}

PinnedBuffer::~PinnedBuffer() {
  if (locked_ && buffer_.data()) ::munlock(buffer_.data(), buffer_.size());
}

std::vector<iovec> block_pieces(const PinnedBuffer& pool, std::uint32_t block_bytes) {
  std::vector<iovec> pieces;
  for (std::size_t off = 0; off + block_bytes <= pool.size(); off += block_bytes)
    pieces.push_back({pool.data() + off, block_bytes});
  return pieces;
}

void transfer_blocks(IoEngine& engine, std::uint64_t file_offset_bytes, char* buffer, const char* pool_base,
                     std::uint64_t bytes, std::uint32_t block_bytes, unsigned queue_depth) {
  struct Pending {
    std::uint64_t offset = 0;
    std::uint32_t length = 0;
    std::uint32_t done = 0;
    char* buffer = nullptr;
  };
  const std::uint64_t blocks = (bytes + block_bytes - 1) / block_bytes;
  const std::uint32_t first_slot = static_cast<std::uint32_t>((buffer - pool_base) / block_bytes);
  std::vector<Pending> pending(blocks);
  std::vector<std::uint32_t> queued;  // block indices waiting for a submission-queue entry
  std::uint64_t next = 0, finished = 0;
  unsigned inflight = 0;
  const unsigned depth = std::max(1u, queue_depth);
  auto request = [&](std::uint64_t i) {
    const Pending& p = pending[i];
    IoRequest r;
    r.slot = first_slot + static_cast<std::uint32_t>(i);
    r.offset_bytes = p.offset + p.done;
    r.length_bytes = p.length - p.done;
    r.buffer = p.buffer + p.done;
    return r;
  };
  IoCompletion done[256];
  while (finished < blocks) {
    while (inflight + queued.size() < depth && next < blocks) {
      Pending& p = pending[next];
      p.offset = file_offset_bytes + next * block_bytes;
      p.length = static_cast<std::uint32_t>(std::min<std::uint64_t>(block_bytes, bytes - next * block_bytes));
      p.buffer = buffer + next * block_bytes;
      queued.push_back(static_cast<std::uint32_t>(next++));
    }
    std::size_t prepared = 0;
    while (prepared < queued.size() && engine.prepare(request(queued[prepared]))) ++prepared;
    queued.erase(queued.begin(), queued.begin() + static_cast<std::ptrdiff_t>(prepared));
    inflight += static_cast<unsigned>(prepared);
    const int ret = engine.submit(inflight > 0 ? 1u : 0u);
    if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
      throw IoError("io_uring submit failed: " + std::string(std::strerror(-ret)));
    const unsigned n = engine.reap(done);
    inflight -= n;
    for (unsigned k = 0; k < n; ++k) {
      const std::uint32_t i = done[k].slot - first_slot;
      Pending& p = pending[i];
      const std::int32_t res = done[k].result;
      if (res == -EAGAIN || res == -EINTR) {
        queued.push_back(i);
      } else if (res < 0) {
        throw IoError("replay I/O at offset " + std::to_string(p.offset) + " failed: " + std::strerror(-res));
      } else if (res == 0) {
        throw IoError("replay I/O at offset " + std::to_string(p.offset) + " hit end of file");
      } else {
        p.done += static_cast<std::uint32_t>(res);
        if (p.done < p.length) queued.push_back(i);  // short transfer: the rest again
        else ++finished;
      }
    }
  }
}

}  // namespace tiersim::calibrate
