#include <catch2/catch.hpp>

#include "sim/engine/kinds.hpp"

using namespace tiersim::sim;

TEST_CASE("resource names are made from kind and index and read back", "[engine]") {
  // These names are stable output (run --json, traces, the results store).
  CHECK(resource_name(ResourceKind::kGpu) == "gpu");
  CHECK(resource_name(ResourceKind::kGpu, 0) == "gpu0");
  CHECK(resource_name(ResourceKind::kPcieH2d, 1) == "pcie-h2d1");
  CHECK(resource_name(ResourceKind::kPcieD2h) == "pcie-d2h");
  CHECK(resource_name(ResourceKind::kGpuPeer, 3) == "gpu-peer3");
  CHECK(resource_name(ResourceKind::kCkptD2h, 0) == "ckpt-d2h0");
  CHECK(resource_name(ResourceKind::kStorageServers) == "storage-servers");
  CHECK(resource_name(ResourceKind::kPcieSwitch) == "pcie-switch");
  for (ResourceKind k :
       {ResourceKind::kGpu, ResourceKind::kPcieH2d, ResourceKind::kPcieD2h, ResourceKind::kGpuPeer,
        ResourceKind::kNvme, ResourceKind::kCpu, ResourceKind::kNetwork, ResourceKind::kCkptD2h,
        ResourceKind::kCkptThread, ResourceKind::kStorageClient, ResourceKind::kStorageServers,
        ResourceKind::kPcieSwitch})
    for (int index : {kNoIndex, 0, 12}) {
      const auto id = parse_resource_name(resource_name(k, index));
      REQUIRE(id);
      CHECK(id->kind == k);
      CHECK(id->index == index);
    }
  // "gpu-peer" is not GPU number "-peer".
  CHECK(parse_resource_name("gpu-peer")->kind == ResourceKind::kGpuPeer);
  CHECK_FALSE(parse_resource_name("gpux"));
  CHECK_FALSE(parse_resource_name("gpu-1"));
  CHECK_FALSE(parse_resource_name(""));
}

TEST_CASE("every activity has a distinct name that reads back", "[engine]") {
  for (std::size_t i = 0; i < kActivityCount; ++i) {
    const auto a = static_cast<Activity>(i);
    const auto back = parse_activity(to_string(a));
    REQUIRE(back);
    CHECK(*back == a);
  }
  CHECK(std::string(to_string(Activity::kWeightsNvme)) == "weights-nvme");
  CHECK(std::string(to_string(Activity::kCkptSerialiseWrite)) == "ckpt-serialise-write");
  CHECK(is_weight_fetch(Activity::kWeightsBounce));
  CHECK_FALSE(is_weight_fetch(Activity::kActivations));
}
