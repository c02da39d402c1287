// The names workloads give their resources and activities: stable output, read back by the
// results store and the sweep cache, and each resource registered with its role for energy.
#include <catch2/catch.hpp>
#include <string>

#include "sim/result.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/checkpoint/names.hpp"
#include "sim/workloads/inference/names.hpp"
#include "sim/workloads/io/names.hpp"
#include "sim/workloads/names.hpp"
#include "sim/workloads/serving/names.hpp"
#include "sim/workloads/training/names.hpp"
#include "tests/support.hpp"

namespace sim_workloads_names_test {

using namespace tiersim;
using namespace tiersim::sim;

TEST_CASE("resource names are made from kind and index and read back", "[workloads][names]") {
  // These names are stable output (run --json, traces, the results store).
  CHECK(resource::kGpu.name() == "gpu");
  CHECK(resource::kGpu.name(0) == "gpu0");
  CHECK(resource::kPcieH2d.name(1) == "pcie-h2d1");
  CHECK(resource::kPcieD2h.name() == "pcie-d2h");
  CHECK(resource::kGpuPeer.name(3) == "gpu-peer3");
  CHECK(resource::kCkptD2h.name(0) == "ckpt-d2h0");
  CHECK(resource::kStorageServers.name() == "storage-servers");
  CHECK(resource::kPcieSwitch.name() == "pcie-switch");
  for (const ResourceKind* k :
       {&resource::kGpu, &resource::kPcieH2d, &resource::kPcieD2h, &resource::kGpuPeer,
        &resource::kNvme, &resource::kCpu, &resource::kNetwork, &resource::kCkptD2h,
        &resource::kCkptThread, &resource::kStorageClient, &resource::kStorageServers,
        &resource::kPcieSwitch})
    for (int index : {kNoIndex, 0, 12}) {
      const auto id = parse_resource_name(k->name(index));
      REQUIRE(id);
      CHECK(id->kind == k);
      CHECK(id->index == index);
      const ResourceSpec spec = k->at(index);
      CHECK(spec.role == k->role);
      CHECK(spec.name == k->name(index));
    }
  // "gpu-peer" is not GPU number "-peer".
  CHECK(parse_resource_name("gpu-peer")->kind == &resource::kGpuPeer);
  CHECK_FALSE(parse_resource_name("gpux"));
  CHECK_FALSE(parse_resource_name("gpu-1"));
  CHECK_FALSE(parse_resource_name(""));
}

TEST_CASE("each resource kind has the role energy charges it by", "[workloads][names]") {
  CHECK(resource::kGpu.role == ResourceRole::kGpu);
  CHECK(resource::kCpu.role == ResourceRole::kCpu);
  CHECK(resource::kNvme.role == ResourceRole::kNvme);
  CHECK(resource::kPcieH2d.role == ResourceRole::kPcieH2d);
  CHECK(resource::kPcieD2h.role == ResourceRole::kPcieD2h);
  for (const ResourceKind* k : {&resource::kGpuPeer, &resource::kNetwork, &resource::kStorageClient,
                                &resource::kStorageServers})
    CHECK(k->role == ResourceRole::kNetwork);
  // Not charged: the switch uplink carries bytes the GPUs' own links count; a checkpoint writer's
  // thread and copy are not in the power model.
  for (const ResourceKind* k :
       {&resource::kPcieSwitch, &resource::kCkptD2h, &resource::kCkptThread})
    CHECK(k->role == ResourceRole::kOther);
  // A usage read back from storage gets its role from its name.
  CHECK(usage_from_name("pcie-d2h2", "bytes", 1, 0.1).role == ResourceRole::kPcieD2h);
  CHECK(usage_from_name("ckpt-thread0", "s", 1, 0.1).role == ResourceRole::kOther);
}

TEST_CASE("every activity has a distinct name that reads back", "[workloads][names]") {
  const Activity all[] = {Activity{},
                          activity::kWeightsNvme,
                          activity::kWeightsCpu,
                          activity::kWeightsBounce,
                          activity::kFetchOverhead,
                          activity::kCompute,
                          activity::kKvToHost,
                          activity::kAttentionCpu,
                          activity::kAttentionOut,
                          activity::kKvOffload,
                          activity::kAllreduce,
                          activity::kActivations,
                          activity::kAllgatherParams,
                          activity::kParamFetchFwd,
                          activity::kParamFetchBwd,
                          activity::kReduceScatterGrads,
                          activity::kAllreduceGrads,
                          activity::kGradOffload,
                          activity::kGradOffloadChecks,
                          activity::kGradSwapOut,
                          activity::kOptimizer,
                          activity::kOptimSwapIn,
                          activity::kGradSwapIn,
                          activity::kGradToHost,
                          activity::kOptimSwapOut,
                          activity::kParamUpdate,
                          activity::kParamSwapOut,
                          activity::kForward,
                          activity::kBackward,
                          activity::kAllgatherUpdated,
                          activity::kCheckpointWrite,
                          activity::kCkptPickleSource,
                          activity::kCkptD2hPageable,
                          activity::kCkptStagingCopy,
                          activity::kCkptRead,
                          activity::kCkptSerialiseWrite,
                          activity::kCkptD2hPinned,
                          activity::kCkptCopy,
                          activity::kRead,
                          activity::kWrite,
                          activity::kKvLoadHost,
                          activity::kKvLoadNvme,
                          activity::kKvStoreHost,
                          activity::kKvStoreNvme};
  for (const Activity a : all) {
    const auto back = parse_activity(to_string(a));
    REQUIRE(back);
    CHECK(*back == a);
    int same = 0;
    for (const Activity b : all) same += a == b ? 1 : 0;
    CHECK(same == 1);
  }
  CHECK(std::string(to_string(activity::kWeightsNvme)) == "weights-nvme");
  CHECK(std::string(to_string(activity::kCkptSerialiseWrite)) == "ckpt-serialise-write");
  CHECK_FALSE(parse_activity("no-such-activity"));
  CHECK(is_weight_fetch(activity::kWeightsBounce));
  CHECK_FALSE(is_weight_fetch(activity::kActivations));
}

TEST_CASE("a workload's run reports its resources with the roles it registered",
          "[workloads][names]") {
  const Scenario s = test::load_yaml(R"(
name: io
hardware:
  gpu: {model: A100-80GB}
  nvme: {model: generic-gen4, count: 4}
model: {name: llama-3-8b}
workload: {kind: io, size: 1GiB, buffer: gpu_bounce}
)");
  const RunResult r = simulate(s);
  int found = 0;
  for (const ResourceUsage& u : r.utilization) {
    if (u.name == "nvme") {
      CHECK(u.role == ResourceRole::kNvme);
      ++found;
    }
    if (u.name == "pcie-h2d") {
      CHECK(u.role == ResourceRole::kPcieH2d);
      ++found;
    }
  }
  CHECK(found == 2);
  // Energy saw the array by its role: the drives drew more than their idle power.
  const NvmeArray& nvme = s.hardware.nvme;
  REQUIRE(nvme.drive.active_w > nvme.drive.idle_w);
  CHECK(r.get("energy_j_nvme") > nvme.count * nvme.drive.idle_w * r.get("total_s") * 1.01);
}

TEST_CASE("resources and activities read for people", "[workloads][names]") {
  CHECK(resource_label("gpu5") == "GPU 5");
  CHECK(resource_label("gpu") == "GPU");
  CHECK(resource_label("pcie-h2d1") == "PCIe host-to-GPU 1");
  CHECK(resource_label("pcie-d2h") == "PCIe GPU-to-host");
  CHECK(resource_label("gpu-peer3") == "GPU-to-GPU link 3");
  CHECK(resource_label("nvme") == "NVMe array");
  CHECK(resource_label("no-such-thing") == "no-such-thing");
  CHECK(activity_label("kv-offload") == "KV cache write-back to host");
  CHECK(activity_label("weights-nvme") == "weight stream from NVMe");
  CHECK(activity_label("kv-load-nvme") == "KV tier loads from NVMe");
  CHECK(activity_label("kv-store-host") == "KV tier stores to host DRAM");
  CHECK(activity_label("") == "untagged work");
  CHECK(activity_label("no-such-activity") == "no-such-activity");
  // Every declared activity has a label of its own, and every resource kind one.
  for (const Activity a : declared_activities()) {
    INFO(a.name());
    if (*a.name() != '\0') CHECK(activity_label(a.name()) != a.name());
  }
  for (const ResourceKind* k :
       {&resource::kGpu, &resource::kPcieH2d, &resource::kPcieD2h, &resource::kGpuPeer,
        &resource::kNvme, &resource::kCpu, &resource::kNetwork, &resource::kCkptD2h,
        &resource::kCkptThread, &resource::kStorageClient, &resource::kStorageServers,
        &resource::kPcieSwitch}) {
    INFO(k->base);
    CHECK(resource_label(k->name()) != k->name());
  }
}
}  // namespace sim_workloads_names_test
