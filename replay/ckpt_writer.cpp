#include "replay/ckpt_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <limits>
#include <semaphore>
#include <thread>
#include <vector>

#include "calibrate/io_blocks.hpp"
#include "calibrate/rng.hpp"
#include "calibrate/runner.hpp"
#include "calibrate/target.hpp"
#include "model/errors.hpp"
#include "model/perf.hpp"
#include "sim/workloads/checkpoint/checkpoint.hpp"

namespace tiersim::replay {

// Replay runs on calibrate's I/O engines, buffers, target files and fits.
using namespace tiersim::calibrate;
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

FileOptions owned_file_options(const CheckpointReplayOptions& o, bool direct) {
  FileOptions fo;
  // Only the header region is pre-filled: the checkpoint itself extends the file behind it.
  fo.region_bytes = kRegionOffsetBytes;
  fo.direct = direct;
  fo.stop = o.stop;
  fo.limits.reserve_free_bytes = o.reserve_free_bytes;
  fo.limits.free_bytes = statvfs_free_bytes;
  fo.deferred_removal = o.deferred_removal;
  return fo;
}

void check_size(const CheckpointReplayOptions& o) {
  if (o.size_bytes == 0 || o.size_bytes % 4096 != 0) throw ModelError("checkpoint size must be a positive multiple of 4 KiB");
}

void check_stop(const CheckpointReplayOptions& o) {
  if (o.stop && o.stop->load(std::memory_order_relaxed)) throw Interrupted("checkpoint replay interrupted");
}

// torch.save: everything on one thread, page cache in the way, durable only at the fsync.
CheckpointMeasurement torch_save(const CheckpointReplayOptions& o, const char* source) {
  const CalibrationFile file = CalibrationFile::create_in_dir(o.target_dir, 910, owned_file_options(o, false));
  const std::uint64_t base = file.region_offset_bytes() + file.region_bytes();
  const std::size_t record = static_cast<std::size_t>(o.tensor_bytes);
  PinnedBuffer staging(record);                 // the driver's pinned staging buffer
  std::vector<char> pageable(record), serialised(record);  // ordinary heap memory
  const auto t0 = Clock::now();
  for (std::uint64_t done = 0; done < o.size_bytes; done += record) {
    check_stop(o);
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(record, o.size_bytes - done));
    std::memcpy(staging.data(), source + done, n);        // device -> pinned staging (DMA stand-in)
    std::memcpy(pageable.data(), staging.data(), n);      // staging -> pageable tensor copy
    std::memcpy(serialised.data(), pageable.data(), n);   // serialisation pass
    for (std::size_t w = 0; w < n;) {
      const std::size_t len = std::min<std::size_t>(static_cast<std::size_t>(o.write_chunk_bytes), n - w);
      const ssize_t r = ::pwrite(file.fd(), serialised.data() + w, len, static_cast<off_t>(base + done + w));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) throw IoError("checkpoint write failed: " + std::string(std::strerror(errno)));
      w += static_cast<std::size_t>(r);
    }
  }
  if (::fsync(file.fd()) != 0) throw IoError("fsync failed: " + std::string(std::strerror(errno)));
  return {seconds_since(t0), double(o.size_bytes)};
}

// One FastPersist writer: a copy thread fills the two pinned buffers in turn while this writer's
// ring drains the other one with O_DIRECT writes. Without a source (the write probe) the buffers
// are written as they are and nothing is copied.
void fast_persist_writer(const CheckpointReplayOptions& o, const CalibrationFile& file, IoEngine& engine,
                         const PinnedBuffer& pool, const char* source, std::uint64_t share_bytes) {
  const std::uint64_t base = file.region_offset_bytes() + file.region_bytes();
  const std::uint64_t chunk = o.io_buffer_bytes;
  // Extending O_DIRECT writes are serialised by ext4 and XFS (each one updates the file size under
  // the inode lock), which caps a writer at queue depth 1. Reserving the extent first, as
  // preallocating writers do, keeps the queue full; it is metadata only and part of the timing.
  const std::uint64_t padded = (share_bytes + 4095) / 4096 * 4096;
  if (padded > 0 && ::posix_fallocate(file.fd(), static_cast<off_t>(base), static_cast<off_t>(padded)) != 0)
    throw IoError("posix_fallocate of the checkpoint failed in " + file.path());
  std::counting_semaphore<2> free_buffers(2), filled(0);
  std::exception_ptr copy_error;
  std::atomic<bool> abort{false};
  std::thread copier([&] {
    try {
      std::uint64_t i = 0;
      for (std::uint64_t done = 0; done < share_bytes; done += chunk, ++i) {
        free_buffers.acquire();
        if (abort.load()) return;
        const std::uint64_t n = std::min(chunk, share_bytes - done);
        if (source) std::memcpy(pool.data() + (i % 2) * chunk, source + done, static_cast<std::size_t>(n));
        filled.release();
      }
    } catch (...) {
      copy_error = std::current_exception();
    }
  });
  std::exception_ptr io_error;
  try {
    std::uint64_t i = 0;
    for (std::uint64_t done = 0; done < share_bytes; done += chunk, ++i) {
      check_stop(o);
      filled.acquire();
      // O_DIRECT needs 4 KiB multiples; the tail is padded (a real writer pads its last record).
      const std::uint64_t n = (std::min(chunk, share_bytes - done) + 4095) / 4096 * 4096;
      transfer_blocks(engine, base + done, pool.data() + (i % 2) * chunk, pool.data(), n, o.block_bytes,
                      o.queue_depth);
      free_buffers.release();
    }
  } catch (...) {
    io_error = std::current_exception();
    abort.store(true);
    free_buffers.release(2);
  }
  copier.join();
  if (io_error) std::rethrow_exception(io_error);
  if (copy_error) std::rethrow_exception(copy_error);
  if (::fdatasync(file.fd()) != 0) throw IoError("fdatasync failed: " + std::string(std::strerror(errno)));
}

CheckpointMeasurement fast_persist(const CheckpointReplayOptions& o, const char* source) {
  if (o.io_buffer_bytes % o.block_bytes != 0) throw ModelError("io buffer must be a multiple of the block size");
  const unsigned writers = std::max(1u, o.writers);
  std::vector<CalibrationFile> files;
  std::vector<PinnedBuffer> pools;
  std::vector<std::unique_ptr<IoEngine>> engines;
  for (unsigned w = 0; w < writers; ++w) {
    files.push_back(CalibrationFile::create_in_dir(o.target_dir, 920 + static_cast<int>(w), owned_file_options(o, true)));
    pools.emplace_back(static_cast<std::size_t>(2 * o.io_buffer_bytes));
    if (!source) Rng(0x9e11ull + w).fill(pools.back().data(), pools.back().size());  // incompressible
    EngineSetup setup;
    setup.fd = files.back().fd();
    setup.direction = IoDirection::write;
    setup.queue_depth = o.queue_depth;
    setup.buffers = block_pieces(pools.back(), o.block_bytes);
    engines.push_back(make_engine(EngineKind::io_uring, setup));
  }
  // Each writer owns a contiguous share of the state, in whole buffers, as ranks own partitions.
  const std::uint64_t per = (o.size_bytes / writers + 4095) / 4096 * 4096;
  std::vector<std::exception_ptr> errors(writers);
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < writers; ++w) {
    const std::uint64_t first = std::min<std::uint64_t>(o.size_bytes, per * w);
    const std::uint64_t share = std::min<std::uint64_t>(o.size_bytes, first + per) - first;
    threads.emplace_back([&, w, first, share] {
      try {
        fast_persist_writer(o, files[w], *engines[w], pools[w], source ? source + first : nullptr, share);
      } catch (...) {
        errors[w] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  const double total_s = seconds_since(t0);
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return {total_s, double(o.size_bytes)};
}

}  // namespace

WritebackRates measure_writeback(const CheckpointReplayOptions& o, std::uint64_t probe_bytes) {
  const CalibrationFile file = CalibrationFile::create_in_dir(o.target_dir, 930, owned_file_options(o, false));
  const std::uint64_t base = file.region_offset_bytes() + file.region_bytes();
  std::vector<char> chunk(static_cast<std::size_t>(o.write_chunk_bytes));
  Rng rng(0x3b1ull);
  rng.fill(chunk.data(), chunk.size());
  // The write()s are timed too: with a memory cgroup or a small dirty limit they are throttled to
  // the flush rate, and on a VM fresh page-cache pages may cost a host fault each.
  const auto t0 = Clock::now();
  for (std::uint64_t done = 0; done < probe_bytes; done += chunk.size()) {
    const ssize_t r = ::pwrite(file.fd(), chunk.data(), chunk.size(), static_cast<off_t>(base + done));
    if (r != static_cast<ssize_t>(chunk.size())) throw IoError("writeback probe write failed in " + file.path());
  }
  const double write_s = seconds_since(t0);
  const auto t1 = Clock::now();
  if (::fsync(file.fd()) != 0) throw IoError("fsync failed: " + std::string(std::strerror(errno)));
  const double fsync_s = seconds_since(t1);
  const double bytes = double(probe_bytes);
  return {bytes / std::max(write_s, 1e-9) / 1e9, bytes / std::max(fsync_s, 1e-9) / 1e9};
}

PinnedBuffer make_checkpoint_source(std::uint64_t size_bytes) {
  // Incompressible data, filled before any clock starts.
  PinnedBuffer source(static_cast<std::size_t>(size_bytes));
  Rng(0xc4e7ull).fill(source.data(), source.size());
  return source;
}

double measure_direct_write_gbps(const CheckpointReplayOptions& o) {
  check_size(o);
  check_stop(o);
  return fast_persist(o, nullptr).write_gbps();
}

CheckpointMeasurement run_checkpoint_replay(const CheckpointReplayOptions& o) {
  check_size(o);
  SafetyLimits limits;
  limits.reserve_free_bytes = o.reserve_free_bytes;
  limits.free_bytes = statvfs_free_bytes;
  check_free_space(o.target_dir, o.size_bytes, limits);
  PinnedBuffer own;
  if (o.source && o.source->size() < o.size_bytes) throw ModelError("checkpoint source smaller than the checkpoint");
  if (!o.source) own = make_checkpoint_source(o.size_bytes);
  const char* source = o.source ? o.source->data() : own.data();
  return o.writer == CheckpointWorkload::Writer::kTorchSave ? torch_save(o, source) : fast_persist(o, source);
}

double predict_checkpoint_s(const CheckpointReplayOptions& o, const SsdModel& drive, const HostRates& host) {
  const bool fp = o.writer == CheckpointWorkload::Writer::kFastPersist;
  const int writers = fp ? static_cast<int>(std::max(1u, o.writers)) : 1;
  sim::Engine engine;
  sim::CheckpointResources res;
  for (int w = 0; w < writers; ++w) {
    // The replay's "GPU link" is a host memcpy.
    res.d2h.push_back(&engine.add_resource(sim::resource::kCkptD2h.at(w), sim::WorkUnit::kBytes,
                                           host.memcpy_gbps * 1e9));
    res.threads.push_back(
        &engine.add_resource(sim::resource::kCkptThread.at(w), sim::WorkUnit::kSeconds, 1.0));
  }
  res.nvme = &engine.add_resource(sim::resource::kNvme.at(), sim::WorkUnit::kSeconds, 1.0);
  NvmeArray array;
  array.count = 1;
  array.model = drive;
  HostSpec h;  // the profile already includes this host's I/O path
  AioConfig aio;
  aio.block_size_bytes = o.block_bytes;
  aio.queue_depth = static_cast<int>(o.queue_depth);
  aio.threads = writers;
  sim::CheckpointSoftware sw;
  sw.pageable_copy_gbps = host.memcpy_gbps;
  sw.staged_copy_overlaps_dma = false;  // the DMA stand-in is a memcpy on the writer's thread
  sw.crc32_gbps = host.memcpy_gbps;  // the replay's serialisation pass is one memcpy
  // The replay allocates its buffers once: no fresh pages per tensor.
  sw.fresh_allocation_gbps = std::numeric_limits<double>::infinity();
  if (host.page_cache_write_gbps > 0) sw.page_cache_write_gbps = host.page_cache_write_gbps;
  const double buffer = fp ? double(o.io_buffer_bytes) : double(o.write_chunk_bytes);
  res.direct_write_gbps = nvme_array_timing(array, h, aio, buffer).write_gbps;
  // The fsync hands the whole file to writeback at once.
  const double writeback_gbps = nvme_array_timing(array, h, sw.writeback, double(o.size_bytes)).write_gbps;
  // The simulator lets kernel writeback drain while torch.save serialises (true for checkpoints of
  // many GB). Below the dirty-background threshold the kernel starts writing only at the fsync, so
  // the stages run one after the other: predict the CPU stages with an infinitely fast page cache
  // drain, then add the flush.
  const bool serial = !fp && double(o.size_bytes) < host.dirty_background_bytes;
  res.buffered_write_gbps = serial ? 1e9 : writeback_gbps;
  res.read_gbps = nvme_array_timing(array, h, aio, buffer).read_gbps;
  sim::CheckpointPlan plan;
  plan.writer = o.writer;
  plan.writers = writers;
  plan.gpu_bytes = double(o.size_bytes) / writers;
  plan.tensor_bytes = double(o.tensor_bytes);
  plan.io_buffer_bytes = double(o.io_buffer_bytes);
  sim::CheckpointRun run(engine, plan, res, sw);
  sim::Flag done(engine);
  engine.spawn(run.run(&done));
  engine.run();
  return engine.now() + (serial ? double(o.size_bytes) / (writeback_gbps * 1e9) : 0.0);
}

}  // namespace tiersim::replay
