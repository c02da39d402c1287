// A raw transfer between the NVMe array and a CPU or GPU buffer, as DeepSpeed's ds_io measures it:
// the check that the array model (drives, striping, host I/O path, PCIe hop) matches measurements
// before any LLM is involved.
#include <algorithm>
#include <cmath>

#include "model/errors.hpp"
#include "model/perf.hpp"
#include "model/power.hpp"
#include "model/units.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/io/metrics.hpp"
#include "sim/workloads/io/names.hpp"
#include "sim/workloads/workload.hpp"

namespace tiersim::sim {
namespace {

Task bounce_copy(Resource& link, double bytes, Tag tag, Semaphore& buffers, Latch& done) {
  co_await link.use(bytes, tag);
  buffers.release();
  done.count_down();
}

Task bounce_drive(Resource& nvme, double seconds, Tag tag, Semaphore& buffers, Latch& done) {
  co_await nvme.use(seconds, tag);
  buffers.release();
  done.count_down();
}

// Through pinned bounce buffers, one block at a time: with one buffer the drive transfer and the
// PCIe copy take turns; with several they overlap (double buffering and beyond).
Task bounce_transfer(Engine& engine, Resource& nvme, Resource& link, const NvmeArray& array,
                     const IoWorkload& io, double block_bytes, int blocks, int swap_buffers,
                     double nvme_s_per_byte, double latency_s) {
  const Tag tag{io.write ? activity::kWrite : activity::kRead, 0, 0};
  const IoDirection dir = io.write ? IoDirection::kWrite : IoDirection::kRead;
  Semaphore buffers(engine, std::max(1, swap_buffers));
  Latch done(engine, blocks);
  for (int b = 0; b < blocks; ++b) {
    const double bytes = std::min(block_bytes, io.bytes - b * block_bytes);
    const double drive_s = (b == 0 ? latency_s : 0.0) + bytes * nvme_s_per_byte;
    // The drives' part, with its load on them (model/power.hpp nvme_load).
    const Tag drive_tag{tag.activity, 0, 0, nvme_load(array, dir, bytes, drive_s)};
    co_await buffers.acquire();
    if (io.write) {
      co_await link.use(bytes, tag);
      engine.spawn(bounce_drive(nvme, drive_s, drive_tag, buffers, done));
    } else {
      co_await nvme.use(drive_s, drive_tag);
      engine.spawn(bounce_copy(link, bytes, tag, buffers, done));
    }
  }
  co_await done.wait();
}

Task direct_transfer(Engine& engine, Resource& nvme, Resource& link, const NvmeArray& array,
                     const IoWorkload& io, double nvme_s) {
  // The load is the drives' (model/power.hpp nvme_load); the power model reads a link's bytes.
  const Tag tag{io.write ? activity::kWrite : activity::kRead, 0, 0,
                nvme_load(array, io.write ? IoDirection::kWrite : IoDirection::kRead, io.bytes,
                          nvme_s)};
  if (io.buffer == IoWorkload::Buffer::kCpu) {
    co_await nvme.use(nvme_s, tag);
  } else {
    // GPUDirect: the drive and the GPU's link carry the same bytes at once.
    // GCC 12 cannot keep a braced initializer list alive across co_await; name the demands.
    std::vector<Demand> demands{Demand{&nvme, nvme_s}, Demand{&link, io.bytes}};
    co_await engine.use_all(std::move(demands), tag);
  }
}

RunResult simulate_io(const Scenario& s, const SimOptions& options) {
  RunResult result;
  result.workload = "io";
  if (s.hardware.nvme.count <= 0) throw ModelError("an io workload needs hardware.nvme.count >= 1");
  Engine engine;
  engine.enable_trace(options.trace);
  engine.keep_spans(options.breakdown);
  engine.stop_when(options.stop);
  const IoWorkload& io = s.io;
  const auto timing = nvme_array_timing(s.hardware.nvme, s.hardware.host, s.policy.aio, io.bytes);
  const double gbps = io.write ? timing.write_gbps : timing.read_gbps;
  const double latency = io.write ? timing.write_latency_s : timing.read_latency_s;
  Resource& nvme = engine.add_resource(resource::kNvme.at(), WorkUnit::kSeconds, 1.0);
  const double link_gbps = io.write ? d2h_gbps(s.hardware.gpu, s.hardware.host)
                                    : h2d_gbps(s.hardware.gpu, s.hardware.host);
  Resource& link = engine.add_resource((io.write ? resource::kPcieD2h : resource::kPcieH2d).at(),
                                       WorkUnit::kBytes, units::gbps_to_bytes_per_s(link_gbps));
  if (io.buffer == IoWorkload::Buffer::kGpuBounce)
    engine.spawn(bounce_transfer(engine, nvme, link, s.hardware.nvme, io,
                                 s.policy.aio.block_size_bytes,
                                 transfer_pieces(io.bytes, s.policy.aio.block_size_bytes,
                                                 "policy.aio.block_size"),
                                 s.policy.aio.swap_buffers,
                                 1.0 / units::gbps_to_bytes_per_s(gbps), latency));
  else
    engine.spawn(direct_transfer(engine, nvme, link, s.hardware.nvme, io,
                                 io.write ? timing.write_s(io.bytes) : timing.read_s(io.bytes)));
  engine.run();
  const double total = engine.now();
  result.set(metric::kTotalS, total);
  result.set(io.write ? metric::kWriteGbps : metric::kReadGbps,
             total > 0 ? io.bytes / total / units::kGB : 0);
  // DeepSpeed's ds_io reports GB/s as 2^30 bytes per second; report both.
  result.set(io.write ? metric::kWriteGibps : metric::kReadGibps,
             total > 0 ? io.bytes / total / units::kGiB : 0);
  result.set(metric::kArrayGbpsModel, gbps);
  result.work.nvme_gbps_model = gbps;
  collect_usage(engine, total, result);
  return result;
}

}  // namespace

namespace workloads {
const WorkloadOps io_workload{
    "io", WorkloadKind::kIo,
    "a raw transfer between the NVMe array and a CPU or GPU buffer (DeepSpeed's ds_io)",
    &simulate_io};
}  // namespace workloads

}  // namespace tiersim::sim
