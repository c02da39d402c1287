// The checkpoint writers' chunk counts: checked before any event, in 64-bit arithmetic.
#include <catch2/catch.hpp>

#include "model/errors.hpp"
#include "sim/simulate.hpp"
#include "tests/support.hpp"

namespace sim_workloads_checkpoint_checkpoint_test {

using namespace tiersim;

namespace {

// Phi-3-mini's states (about 6.7 GB in this layout) written by eight FastPersist writers.
const char* kFastPersist = R"(
name: c
hardware:
  gpu: {model: A100-80GB, count: 8}
  host: {model: generic-2s-ddr4}
  nvme: {model: generic-gen4, count: 8}
model: {name: phi-3-mini}
workload: {kind: checkpoint, writer: fast_persist, writers_per_node: 8}
)";

}  // namespace

TEST_CASE("a tiny io_buffer is an error naming it, not a wrapped chunk count",
          "[checkpoint][workloads]") {
  // 1 byte: the chunk count wrapped an int and the checkpoint took "4e-10 s"; 64 bytes ran for
  // minutes.
  for (const char* buffer : {"workload.io_buffer=1", "workload.io_buffer=64"}) {
    INFO(buffer);
    try {
      sim::simulate(test::load_yaml(kFastPersist, {buffer}));
      FAIL("no error");
    } catch (const ModelError& e) {
      CHECK_THAT(e.what(), Catch::Contains("workload.io_buffer") && Catch::Contains("x 8"));
    }
  }
  const sim::RunResult r = sim::simulate(test::load_yaml(kFastPersist, {"workload.io_buffer=64MiB"}));
  CHECK(r.get("checkpoint_s") > 0.1);
}
}  // namespace sim_workloads_checkpoint_checkpoint_test
