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

void check_checkpoint_target(const ScenarioCheck& c, const char* needed_by) {
  const Scenario& s = c.scenario();
  const StorageTarget& t = s.checkpoint.target;
  const char* kind_key = c.given("workload.target.kind") ? "workload.target.kind" : needed_by;
  if (t.kind == StorageTarget::Kind::kLocalNvme && s.hardware.nvme.count <= 0)
    c.fail(kind_key,
           "checkpoints to workload.target.kind: local_nvme (the default) need NVMe drives "
           "(hardware.nvme); add drives or write to a network target (workload.target.kind: "
           "network with its per_node_gbps and aggregate_gbps)");
  if (t.kind == StorageTarget::Kind::kNetwork) {
    if (t.per_node_gbps <= 0)
      c.fail(c.given("workload.target.per_node_gbps") ? "workload.target.per_node_gbps" : kind_key,
             "a network checkpoint target needs workload.target.per_node_gbps > 0 (what one "
             "node's client can push)");
    if (t.aggregate_gbps <= 0)
      c.fail(
          c.given("workload.target.aggregate_gbps") ? "workload.target.aggregate_gbps" : kind_key,
          "a network checkpoint target needs workload.target.aggregate_gbps > 0 (what the "
          "storage servers absorb in total)");
  }
}

namespace {

void check_keys(const ScenarioCheck& c) {
  check_checkpoint_writer(c);
  check_checkpoint_target(c, "workload.kind");
}

}  // namespace

const WorkloadChecks checkpoint_checks{&check_keys, nullptr};

}  // namespace tiersim::config
