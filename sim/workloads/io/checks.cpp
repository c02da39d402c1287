// Load-time checks of the io workload (config/scenario_check.hpp).
#include "config/scenario_check.hpp"

namespace tiersim::config {

namespace {

void check_keys(const ScenarioCheck& c) {
  const Scenario& s = c.scenario();
  if (s.hardware.nvme.count <= 0)
    c.fail("workload.kind", "an io workload needs NVMe drives (hardware.nvme)");
  if (s.io.buffer == IoWorkload::Buffer::kGpuDirect && !s.hardware.gpu.gds)
    c.fail("workload.buffer",
           "GPU '" + s.hardware.gpu.name + "' does not support GPUDirect Storage");
}

}  // namespace

const WorkloadChecks io_checks{&check_keys, nullptr};

}  // namespace tiersim::config
