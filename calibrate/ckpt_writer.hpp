#pragma once
// Checkpoint replay: the two writers of sim/checkpoint.hpp run for real on a drive.
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

#include "calibrate/replay.hpp"
#include "model/scenario.hpp"
#include "model/ssd_model.hpp"

namespace tiersim::calibrate {

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
};

struct CheckpointMeasurement {
  double total_s = 0;
  double bytes = 0;
  double write_gbps() const { return total_s > 0 ? bytes / total_s / 1e9 : 0; }
};

CheckpointMeasurement run_checkpoint_replay(const CheckpointReplayOptions& options);

// Rate at which this host's page cache drains into a fresh file on the target at fsync (buffered
// writes of `probe_bytes` and the fsync, timed together): the operating point of torch.save's writes.
double measure_writeback_gbps(const CheckpointReplayOptions& options, std::uint64_t probe_bytes = 128ull << 20);

// The simulator's checkpoint workload (sim::CheckpointRun) with the calibrated drive and this
// host's copy rate in place of the GPU link and CPU stages the replay stands in for.
double predict_checkpoint_s(const CheckpointReplayOptions& options, const SsdModel& drive, const HostRates& host);

}  // namespace tiersim::calibrate
