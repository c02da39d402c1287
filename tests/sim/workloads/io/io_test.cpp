// The io workload's bounce-buffer blocks: counted in 64-bit arithmetic and checked before any event.
#include <catch2/catch.hpp>

#include "model/errors.hpp"
#include "sim/simulate.hpp"
#include "tests/support.hpp"

namespace sim_workloads_io_io_test {

using namespace tiersim;

namespace {

const char* kBounce = R"(
name: io
hardware:
  gpu: {model: A100-80GB}
  nvme: {model: generic-gen4, count: 4}
model: {name: llama-3-8b}
workload: {kind: io, size: 2TiB, buffer: gpu_bounce}
)";

}  // namespace

TEST_CASE("2 TiB in 1 KiB blocks is an error naming the block size, not 1.4e8 GB/s",
          "[io][workloads]") {
  try {
    sim::simulate(test::load_yaml(kBounce, {"policy.aio.block_size=1KiB"}));
    FAIL("no error");
  } catch (const ModelError& e) {
    CHECK_THAT(e.what(), Catch::Contains("policy.aio.block_size"));
  }
  // In 16 MiB blocks (131,072 of them) it runs, at no more than the drives deliver.
  const sim::RunResult r = sim::simulate(test::load_yaml(kBounce, {"workload.size=64GiB"}));
  CHECK(r.get("read_gbps") > 1);
  CHECK(r.get("read_gbps") < 4 * 8);
}
}  // namespace sim_workloads_io_io_test
