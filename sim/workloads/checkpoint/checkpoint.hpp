#pragma once
// Checkpoint writers on the event engine: torch.save-like (one thread per writer: pageable copy
// out of the GPU, serialisation with a CRC-32 over every byte, buffered write() into the page
// cache, kernel writeback, fsync at the end) and FastPersist (pinned double buffers, O_DIRECT
// asynchronous writes overlapped with the next copy, writers spread over data-parallel ranks).
// Used standalone (workload kind checkpoint) and inside training (periodic checkpoints that
// share the training's links and drives).
#include <vector>

#include "model/perf.hpp"
#include "model/scenario.hpp"
#include "model/units.hpp"
#include "sim/engine/engine.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/checkpoint/names.hpp"

namespace tiersim::sim {

// [GB/s] One thread faulting in a fresh allocation on `host` and freeing it again
// (model/perf.hpp fresh_pages_s: the fault-in rate of the host's virtual_machine label, or its
// own measurement, plus the free).
inline double fresh_allocation_rate_gbps(const HostSpec& host) {
  return 1.0 / fresh_pages_s(host, ExecutionModel{}, units::kGiga, 1.0);
}

// Single-core rates of the torch.save path. Properties of the software stack (PyTorch's
// serialisers, glibc, the Linux page cache, CPython) on a core of the host, not of any one
// published case. Estimates, or measured where the comment says so; checkpoint_software() puts in
// what the host's catalog entry measures.
struct CheckpointSoftware {
  // A pageable device-to-host copy lands in the driver's pinned staging buffers and is copied by
  // one CPU thread into the pageable destination: one core's large memcpy, ~8 GB/s (estimate,
  // for hosts without a measured pageable copy rate, HostSpec::pageable_copy_gbps).
  double pageable_copy_gbps = 8.0;
  // The driver DMAs the next staging chunk while the thread copies the last one out, so the copy
  // runs at the slower of the link and the thread's memcpy, not at their sum (the measured
  // pageable rates of an H200 and an H100 host, 10-16 GB/s, are far below their pinned 55 GB/s:
  // tools/gpu/h200-copy-bandwidth.csv, h100-copy-bandwidth.csv). The replay's stand-in for the
  // DMA is a memcpy on the writer's own thread, which does not overlap (replay/ckpt_writer.cpp).
  bool staged_copy_overlaps_dma = true;
  // torch.save's zip writer (miniz) computes a table-driven, byte-at-a-time CRC-32 over every
  // record: a dependent table lookup per byte, ~1-1.5 GB/s on a 2-3.5 GHz server core. The
  // legacy format has no CRC.
  double crc32_gbps = 1.2;
  // Both formats copy each GPU storage into a freshly allocated pageable CPU storage
  // (`storage.cpu()`, `.to("cpu")`) and free it after the write: fresh mmap()ed pages, faulted
  // in and unmapped on one thread. checkpoint_software() sets it from the host (model/perf.hpp
  // fresh_pages_s: the fault-in rate of the host's virtual_machine label, or its own, plus the
  // free); the default is a virtual machine's.
  double fresh_allocation_gbps = fresh_allocation_rate_gbps([] {
    HostSpec vm;
    vm.virtual_machine = true;
    return vm;
  }());
  // Parsing Python source when the legacy pickler records a module class's source
  // (inspect.getsourcelines: ast.parse of the whole defining file, then tokenising the class).
  // Measured with tools/host/source_parse_cost.py (CPython 3.11, 12 standard-library modules of
  // 12-120 kB, same guest): per-run medians 350-470 ns per byte of the defining file.
  double source_parse_s_per_byte = 400e-9;
  // Buffered write(): copying into freshly allocated page-cache pages (allocation, LRU insertion,
  // dirty accounting) runs at ~3 GB/s on one core, below a plain memcpy (estimate, with the
  // memcpy at pageable_copy_gbps: the kernel's work per page is the rest, 1/3 - 1/8 s/GB).
  double page_cache_write_gbps = 3.0;
  // Kernel writeback of one file: the flusher submits merged requests of up to max_sectors_kb
  // (1 MiB) with a modest number in flight.
  AioConfig writeback{1024.0 * 1024.0, 32, 1, 1};
};

// The torch.save rates on a core of `host`. Where the catalog measures the host's pageable copy
// (HostSpec::pageable_copy_gbps), its staging copy runs at that rate and so does the copy part of
// a buffered write(): the page cache's own work per page (allocation, LRU insertion, dirty
// accounting) stays what the estimates leave for it, 1/page_cache_write_gbps - 1/pageable_copy_gbps
// of the defaults.
CheckpointSoftware checkpoint_software(const HostSpec& host);

// What one node writes, split over its writers.
struct CheckpointPlan {
  CheckpointWorkload::Writer writer = CheckpointWorkload::Writer::kTorchSave;
  int writers = 1;                // writer processes on this node
  double gpu_bytes = 0;           // per writer: state resident in GPU memory
  double host_bytes = 0;          // per writer: state resident in host DRAM
  double nvme_bytes = 0;          // per writer: state on the local NVMe (read back first)
  double tensor_bytes = 64e6;     // typical tensor: torch.save's unit of work
  double io_buffer_bytes = 256.0 * 1024 * 1024;
  CheckpointWorkload::Serialization serialization = CheckpointWorkload::Serialization::kZipfile;
  double pickled_source_bytes = 0;  // per writer: source the pickler parses before any storage
  double total_bytes() const { return (gpu_bytes + host_bytes + nvme_bytes) * writers; }
};

// The parts of a plan the workload fixes (writer, format, buffers, pickled source) for `writers`
// writers; the caller fills in where the bytes are and the tensor size.
CheckpointPlan plan_for(const CheckpointWorkload& c, int writers);

// Bytes of one full checkpoint of the job (all nodes): model weights at the checkpoint's dtype,
// plus the optimizer states when included; `size_bytes` overrides.
double checkpoint_bytes(const Scenario& s);
// Average parameter tensor of the model at `bytes_per_param`.
double average_tensor_bytes(const LlmSpec& m, double bytes_per_param);

// The node's resources a checkpoint uses. Storage rates are whole-node rates; d2h has one link
// per writer (writer i copies out of GPU i).
struct CheckpointResources {
  std::vector<Resource*> d2h;      // one per writer
  std::vector<Resource*> threads;  // one CPU thread per writer (unit: s)
  Resource* nvme = nullptr;        // local array (unit: s)
  Resource* net_node = nullptr;    // network file system: this node's client (bytes)
  Resource* net_servers = nullptr; // network file system: this node's share of the servers (bytes)
  double direct_write_gbps = 0;    // local array under O_DIRECT asynchronous writes
  double buffered_write_gbps = 0;  // local array under kernel writeback
  double read_gbps = 0;            // local array reads (states kept on NVMe)
  // The drives' load at each of those rates (model/power.hpp nvme_load), for the bookings' tags.
  double direct_write_load = 1, buffered_write_load = 1, read_load = 1;
};

// Runs one checkpoint of `plan` on `res`; `done` is set when every byte is durable.
class CheckpointRun {
 public:
  // Throws ModelError (naming workload.io_buffer) when a writer's chunks would be more than one
  // simulated transfer may have (sim/workloads/workload.hpp), before any event is scheduled.
  CheckpointRun(Engine& engine, CheckpointPlan plan, CheckpointResources res,
                CheckpointSoftware sw);
  Task run(Flag* done);

 private:
  Task torch_save_writer(int w, Latch* finished);
  Task fast_persist_writer(int w, Latch* finished);
  Task store(double bytes, bool direct, Latch* written, Semaphore* buffer);
  Task pickle(Resource* thread);
  // torch.save's DMA into the driver's staging buffers, alongside the thread's copy out of them.
  Task pageable_dma(Resource* d2h, double bytes, int chunk, Latch* done);
  Engine& engine_;
  CheckpointPlan plan_;
  CheckpointResources res_;
  CheckpointSoftware sw_;
};

// Builds the node-level resources of a checkpoint on `engine` (links for `writers` GPUs, their
// threads, the storage target); `d2h0`, when given, is writer 0's link (shared with training).
CheckpointResources make_checkpoint_resources(Engine& engine, const Scenario& s, int writers,
                                              Resource* d2h0 = nullptr, Resource* nvme = nullptr);

RunResult simulate_checkpoint(const Scenario& scenario, const SimOptions& options);

}  // namespace tiersim::sim
