// Load-time checks of the checkpoint workload (config/scenario_check.hpp).
#include "sim/workloads/checkpoint/checks.hpp"

namespace tiersim::config {

void check_checkpoint_writer(const ScenarioCheck& c) {
  const CheckpointWorkload& w = c.scenario().checkpoint;
  if (w.writer == CheckpointWorkload::Writer::kFastPersist) {
    // FastPersist's overlapped storage writes hook into torch's legacy serialiser only.
    if (c.given("workload.serialization") &&
        w.serialization != CheckpointWorkload::Serialization::kLegacy)
      c.fail("workload.serialization",
             "fast_persist writes the legacy format only (its storage hook exists in the "
             "legacy serialiser); use legacy or leave the key out");
  }
}

namespace {

void check_keys(const ScenarioCheck& c) {
  const Scenario& s = c.scenario();
  check_checkpoint_writer(c);
  if (s.checkpoint.target.kind == StorageTarget::Kind::kLocalNvme && s.hardware.nvme.count <= 0)
    c.fail("workload.target.kind", "local_nvme needs NVMe drives (hardware.nvme)");
}

}  // namespace

const WorkloadChecks checkpoint_checks{&check_keys, nullptr};

}  // namespace tiersim::config
