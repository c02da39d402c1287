// The checkpoint writers' chunk counts: checked before any event, in 64-bit arithmetic.
#include <catch2/catch.hpp>

#include "model/errors.hpp"
#include "model/hardware.hpp"
#include "model/perf.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/checkpoint/checkpoint.hpp"
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

// torch.save of Phi-3-mini's fp32 state dict from one H200 on the ND-H200-v5 host, whose catalog
// entry measures its pageable copy rate (15 GB/s).
const char* kTorchSaveH200 = R"(
name: t
hardware:
  gpu: {model: H200, count: 1}
  host: {model: azure-nd-h200-v5}
  nvme: {model: generic-gen5, count: 8}
model: {name: phi-3-mini}
workload: {kind: checkpoint, writer: torch_save, weights_dtype: fp32, include_optimizer: false,
           serialization: legacy}
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

TEST_CASE("torch.save runs its copies at the host's measured pageable copy rate",
          "[checkpoint][workloads]") {
  const sim::CheckpointSoftware defaults;
  HostSpec unmeasured;
  const sim::CheckpointSoftware same = sim::checkpoint_software(unmeasured);
  CHECK(same.pageable_copy_gbps == Approx(defaults.pageable_copy_gbps));
  CHECK(same.page_cache_write_gbps == Approx(defaults.page_cache_write_gbps));
  // A host that copies at 16 GB/s: the staging copy at that rate, and a buffered write() its copy
  // at that rate plus the page cache's own work per byte, which the host does not change.
  HostSpec measured;
  measured.pageable_copy_gbps = 16;
  const sim::CheckpointSoftware fast = sim::checkpoint_software(measured);
  CHECK(fast.pageable_copy_gbps == Approx(16));
  const double kernel_s_per_gb =
      1 / defaults.page_cache_write_gbps - 1 / defaults.pageable_copy_gbps;
  CHECK(1 / fast.page_cache_write_gbps == Approx(1.0 / 16 + kernel_s_per_gb));
  CHECK(fast.page_cache_write_gbps > defaults.page_cache_write_gbps);
  // The fresh storages fault in at the host's rate: its label's (a HostSpec is bare metal by
  // default) plus the free, on the one writer thread.
  CHECK(1 / fast.fresh_allocation_gbps == Approx(1 / ExecutionModel{}.bare_metal_page_fault_gbps +
                                                 1 / ExecutionModel{}.fresh_page_free_gbps));
  HostSpec vm;
  vm.virtual_machine = true;
  CHECK(sim::checkpoint_software(vm).fresh_allocation_gbps ==
        Approx(defaults.fresh_allocation_gbps));
  CHECK(fast.fresh_allocation_gbps > defaults.fresh_allocation_gbps);
  // The rest of torch.save's path is the software's, whatever the host.
  CHECK(fast.crc32_gbps == Approx(defaults.crc32_gbps));

  // End to end on the ND-H200-v5: one writer thread does everything but the link's DMA, so the
  // checkpoint takes the pickle, then per byte the staging copy, the fresh pages and the write().
  const Scenario s = test::load_yaml(kTorchSaveH200);
  REQUIRE(s.hardware.host.pageable_copy_gbps == Approx(15));
  const sim::RunResult r = sim::simulate(s);
  const double bytes = r.get("checkpoint_bytes");
  const sim::CheckpointSoftware h200 = sim::checkpoint_software(s.hardware.host);
  const double per_byte_s = 1 / (h200.pageable_copy_gbps * 1e9) +
                            1 / (h200.fresh_allocation_gbps * 1e9) +
                            1 / (h200.page_cache_write_gbps * 1e9);
  CHECK(r.get("checkpoint_s") == Approx(bytes * per_byte_s).epsilon(0.02));
}

TEST_CASE("torch.save's pageable copy overlaps the link's DMA with the thread's staging copy",
          "[checkpoint][workloads]") {
  // The driver DMAs the next staging chunk while the thread copies the last one out: a slower
  // link changes nothing while it stays faster than the thread (15 GB/s copy and the fresh pages),
  // and sets the pace once it is slower than the thread's whole per-byte work.
  const double fast = sim::simulate(test::load_yaml(kTorchSaveH200)).get("checkpoint_s");
  const double slower =
      sim::simulate(test::load_yaml(kTorchSaveH200, {"hardware.gpu.pcie_d2h_gbps=20"}))
          .get("checkpoint_s");
  CHECK(slower == Approx(fast).epsilon(1e-9));
  // A link at 0.5 GB/s, below the thread's ~1.1 GB/s of copy and faults: the copy takes the
  // link's time, and the thread's serialisation of each tensor still follows its copy.
  const Scenario crawl = test::load_yaml(kTorchSaveH200, {"hardware.gpu.pcie_d2h_gbps=0.5"});
  const sim::RunResult r = sim::simulate(crawl);
  const double bytes = r.get("checkpoint_bytes");
  const sim::CheckpointSoftware sw = sim::checkpoint_software(crawl.hardware.host);
  const double expected_s = bytes / 0.5e9 + bytes / (sw.page_cache_write_gbps * 1e9);
  CHECK(r.get("checkpoint_s") == Approx(expected_s).epsilon(0.02));
}

TEST_CASE("torch.save's DMA holds a shared link for its bytes only, not the thread's copy",
          "[checkpoint][workloads]") {
  // Two writers on one GPU share its link. Each thread copies and faults at ~1.1 GB/s while the
  // link moves ~50 GB/s, so the writers run side by side: each takes its half of the bytes at
  // the one-thread rate. A link held for each thread's whole copy would run them one at a time.
  const Scenario s = test::load_yaml(kTorchSaveH200, {"workload.writers_per_node=2"});
  const sim::RunResult r = sim::simulate(s);
  const double bytes = r.get("checkpoint_bytes");
  const sim::CheckpointSoftware sw = sim::checkpoint_software(s.hardware.host);
  const double per_byte_s = 1 / (sw.pageable_copy_gbps * 1e9) +
                            1 / (sw.fresh_allocation_gbps * 1e9) +
                            1 / (sw.page_cache_write_gbps * 1e9);
  CHECK(r.get("checkpoint_s") == Approx(bytes / 2 * per_byte_s).epsilon(0.03));
}

}  // namespace sim_workloads_checkpoint_checkpoint_test
