// A raw transfer between the NVMe array and a CPU or GPU buffer, as DeepSpeed's ds_io measures it:
// the check that the array model (drives, striping, host I/O path, PCIe hop) matches measurements
// before any LLM is involved.
#include "model/errors.hpp"
#include "model/units.hpp"
#include "sim/simulate.hpp"
#include "sim/economics.hpp"  // energy and cost metrics on every result

namespace tiersim::sim {
namespace {

Task transfer(Engine& engine, Resource& nvme, Resource& link, const IoWorkload& io,
              double nvme_s) {
  const Tag tag{io.write ? "write" : "read", 0, 0};
  switch (io.buffer) {
    case IoWorkload::Buffer::kCpu:
      co_await nvme.use(nvme_s, tag);
      break;
    case IoWorkload::Buffer::kGpuBounce:
      // One pinned bounce buffer: the PCIe copy and the drive transfer take turns.
      if (io.write) {
        co_await link.use(io.bytes, tag);
        co_await nvme.use(nvme_s, tag);
      } else {
        co_await nvme.use(nvme_s, tag);
        co_await link.use(io.bytes, tag);
      }
      break;
    case IoWorkload::Buffer::kGpuDirect:
    {
      // GCC 12 cannot keep a braced initializer list alive across co_await; name the demands.
      std::vector<Demand> demands{Demand{&nvme, nvme_s}, Demand{&link, io.bytes}};
      co_await engine.use_all(std::move(demands), tag);
    }
      break;
  }
}

}  // namespace

RunResult simulate_io(const Scenario& s, const SimOptions& options) {
  RunResult result;
  result.workload = "io";
  if (s.hardware.nvme.count <= 0) throw ModelError("an io workload needs hardware.nvme.count >= 1");
  Engine engine;
  engine.enable_trace(options.trace);
  const IoWorkload& io = s.io;
  const auto timing = nvme_array_timing(s.hardware.nvme, s.hardware.host, s.policy.aio, io.bytes);
  const double gbps = io.write ? timing.write_gbps : timing.read_gbps;
  const double latency = io.write ? timing.write_latency_s : timing.read_latency_s;
  Resource& nvme = engine.add_resource("nvme", "s", 1.0);
  const double link_gbps = io.write ? d2h_gbps(s.hardware.gpu, s.hardware.host)
                                    : h2d_gbps(s.hardware.gpu, s.hardware.host);
  Resource& link = engine.add_resource(io.write ? "pcie-d2h" : "pcie-h2d", "bytes",
                                       units::gbps_to_bytes_per_s(link_gbps));
  engine.spawn(transfer(engine, nvme, link, io, latency + io.bytes / units::gbps_to_bytes_per_s(gbps)));
  engine.run();
  const double total = engine.now();
  result.set("total_s", total, "s");
  result.set(io.write ? "write_gbps" : "read_gbps", total > 0 ? io.bytes / total / units::kGB : 0,
             "GB/s");
  result.set("array_gbps_model", gbps, "GB/s");
  collect_usage(engine, total, result);
  return result;
}

RunResult simulate(const Scenario& scenario, const SimOptions& options) {
  switch (scenario.kind) {
    case WorkloadKind::kInference: return with_energy_and_cost(scenario, simulate_inference(scenario, options));
    case WorkloadKind::kIo: return with_energy_and_cost(scenario, simulate_io(scenario, options));
    case WorkloadKind::kTraining:
    case WorkloadKind::kCheckpoint: break;
  }
  throw ModelError(std::string("workload kind '") + to_string(scenario.kind) +
                   "' is not simulated yet");
}

}  // namespace tiersim::sim
