#pragma once
// Checkpoint replay: the two writers of sim/workloads/checkpoint/checkpoint.hpp run for real on a drive.
//  - torch.save-like: one thread; per tensor a copy out of the "GPU" (source buffer) into a pinned
//    staging buffer, a copy into pageable memory, a serialisation pass (one memcpy, standing in
//    for the record framing and CRC), buffered write()s of a few MiB, fsync at the end.
//  - FastPersist-like: several writers, each with two pinned buffers: one is filled (the copy out
//    of the GPU) while the other's O_DIRECT io_uring writes are in flight.
// Files are tiersim-owned (calibrate/target.hpp) and removed afterwards; the checkpoint is written
// behind the small header region, extending the file as a fresh torch.save file would.
#include <atomic>
#include <cstdint>
#include <string>

#include "calibrate/io_blocks.hpp"
#include "replay/replay.hpp"
#include "model/scenario.hpp"
#include "model/ssd_model.hpp"

namespace tiersim::replay {

struct CheckpointReplayOptions {
  std::string target_dir;
  std::uint64_t size_bytes = 256ull << 20;
  CheckpointWorkload::Writer writer = CheckpointWorkload::Writer::kTorchSave;
  unsigned writers = 2;                          // FastPersist: parallel writers
  std::uint64_t io_buffer_bytes = 32ull << 20;   // FastPersist: each of the two pinned buffers
  std::uint32_t block_bytes = 1u << 20;          // FastPersist: O_DIRECT request size
  unsigned queue_depth = 8;                      // FastPersist: per writer
  std::uint64_t tensor_bytes = 16ull << 20;      // torch.save: one record
  std::uint64_t write_chunk_bytes = 4ull << 20;  // torch.save: buffered write() size
  const std::atomic<bool>* stop = nullptr;
  std::uint64_t reserve_free_bytes = 1ull << 30;
  DeferredRemoval* deferred_removal = nullptr;  // see calibrate/target.hpp
  // The state "in GPU memory", at least size_bytes; null: each run allocates and fills its own.
  // A caller that brackets runs with probes passes one: freeing 512 MiB of just-touched memory at
  // the end of a run handed the next page-cache writes warm pages (5x faster on a VM whose guest
  // memory is backed on first touch).
  const calibrate::PinnedBuffer* source = nullptr;
};

struct CheckpointMeasurement {
  double total_s = 0;
  double bytes = 0;
  double write_gbps() const { return total_s > 0 ? bytes / total_s / 1e9 : 0; }
};

// A checkpoint's worth of incompressible state for CheckpointReplayOptions::source.
calibrate::PinnedBuffer make_checkpoint_source(std::uint64_t size_bytes);

CheckpointMeasurement run_checkpoint_replay(const CheckpointReplayOptions& options);

// torch.save's write path on this host and target, for a fresh file of `probe_bytes`: write()s
// into the page cache, then the fsync that drains it.
struct WritebackRates {
  double page_cache_gbps = 0;  // bytes / time in write(): page allocation, copy, dirty throttling
  double flush_gbps = 0;       // bytes / time in fsync(): kernel writeback to the drive
  double total_gbps() const { return page_cache_gbps > 0 && flush_gbps > 0 ? 1 / (1 / page_cache_gbps + 1 / flush_gbps) : 0; }
};
WritebackRates measure_writeback(const CheckpointReplayOptions& options, std::uint64_t probe_bytes = 128ull << 20);

// Rate at which the FastPersist writers' O_DIRECT rings alone write fresh files on the target
// (each writer's share of `size_bytes`, the same blocks, depth and preallocation, nothing copied):
// the operating point of the FastPersist writes. Fresh blocks are what a checkpoint gets; on thin-
// provisioned or `discard`-mounted volumes they write slower than the calibration file's.
double measure_direct_write_gbps(const CheckpointReplayOptions& options);

// The simulator's checkpoint workload (sim::CheckpointRun) with the calibrated drive and this
// host's copy rate in place of the GPU link and CPU stages the replay stands in for.
double predict_checkpoint_s(const CheckpointReplayOptions& options, const SsdModel& drive, const HostRates& host);

}  // namespace tiersim::replay
