// The skeleton workload is the template for new workloads: these tests show that a workload
// defined in its own folder and listed once in sim/workloads/registry.def loads from YAML, runs
// through sim::simulate with what its capabilities ask for, and is found by name.
#include <catch2/catch.hpp>

#include "model/errors.hpp"
#include "model/llm.hpp"
#include "model/perf.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/workload.hpp"
#include "tests/support.hpp"

namespace tiersim {
namespace {

const char* kSkeletonYaml = R"(
name: skeleton-h100
hardware:
  gpu: {model: H100-SXM}
model: {name: llama-3-8b}
workload: {kind: skeleton}
)";

}  // namespace

TEST_CASE("a workload registered by one line loads from YAML and runs", "[workloads][skeleton]") {
  const Scenario s = test::load_yaml(kSkeletonYaml);
  REQUIRE(s.kind == WorkloadKind::kSkeleton);
  const sim::RunResult r = sim::simulate(s);
  CHECK(r.workload == "skeleton");
  REQUIRE(r.fits);
  // One decode step = every layer's GEMMs at the roofline, one after another.
  const double layer_s =
      gpu_kernel_s(s.hardware.gpu, sim::SimOptions{}.exec, layer_gemm_flops(s.model, 1.0),
                   layer_active_params(s.model) * bytes_per_weight(16));
  CHECK(r.get("total_s") == Approx(layer_s * s.model.layers).epsilon(1e-12));
  CHECK(r.bottleneck == "gpu");
  // kCapEnergyAndCost: simulate() added the energy metrics observed from the GPU's busy time.
  CHECK(r.has("energy_j"));
  CHECK(r.get("energy_j_gpu") > 0);
}

TEST_CASE("a workload reports what does not fit instead of simulating it",
          "[workloads][skeleton]") {
  const Scenario s = test::load_yaml(kSkeletonYaml, {"model.name=llama-3-70b"});
  const sim::RunResult r = sim::simulate(s);
  CHECK_FALSE(r.fits);
  REQUIRE(r.memory.size() == 1);
  CHECK(r.memory[0].required_bytes > r.memory[0].capacity_bytes);
  CHECK_FALSE(r.has("total_s"));
}

TEST_CASE("the registry lists every kind in registry.def order and names the valid ones",
          "[workloads]") {
  const auto& all = sim::workload_registry();
  REQUIRE(all.size() == static_cast<std::size_t>(kWorkloadKindCount));
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(static_cast<std::size_t>(all[i]->kind) == i);
    CHECK(all[i]->name == to_string(all[i]->kind));
    CHECK(all[i]->run != nullptr);
    CHECK(&sim::find_workload(all[i]->name) == all[i]);
  }
  CHECK_THROWS_WITH(
      sim::find_workload("offline"),
      Catch::Contains("valid: inference, training, checkpoint, io, skeleton, serving"));
}

TEST_CASE("an unknown workload kind in a scenario file lists the registered kinds",
          "[workloads][config]") {
  std::string yaml = kSkeletonYaml;
  yaml.replace(yaml.find("skeleton}"), 8, "servng");
  CHECK_THROWS_WITH(test::load_yaml(yaml), Catch::Contains("skeleton"));
}

}  // namespace tiersim
