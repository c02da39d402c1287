// The skeleton workload is the template for new workloads: these tests show that a workload
// defined in its own folder and listed once in sim/workloads/registry.def loads from YAML, runs
// through sim::simulate with what its capabilities ask for, is found by name, and that nothing
// outside its folder but that one line names it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "config/option_rows.hpp"
#include "config/options.hpp"
#include "config/scenario_check.hpp"
#include "model/errors.hpp"
#include "model/llm.hpp"
#include "model/perf.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/traits.hpp"
#include "sim/workloads/workload.hpp"
#include "tests/support.hpp"

namespace tiersim::sim_workloads_skeleton_skeleton_test {
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

TEST_CASE("the skeleton's ops, traits, checks and option rows are found through the registry",
          "[workloads][skeleton]") {
  // Each table is generated from registry.def and holds what the skeleton's folder defines.
  CHECK(&sim::workload_ops(WorkloadKind::kSkeleton) == &sim::workloads::skeleton_workload);
  CHECK(&workload_traits(WorkloadKind::kSkeleton) == &skeleton_traits);
  CHECK(&config::workload_checks(WorkloadKind::kSkeleton) == &config::skeleton_checks);
  // The capabilities it declares (skeleton/traits.cpp) are the ones simulate() applied above.
  CHECK(workload_traits(WorkloadKind::kSkeleton).capabilities == kCapEnergyAndCost);
  // The option table: workload.kind offers it, and its (empty) rows add no key of its own.
  const auto& kinds = config::workload_kind_names();
  CHECK(std::find(kinds.begin(), kinds.end(), "skeleton") != kinds.end());
  for (const config::Option& o : config::scenario_options())
    CHECK(o.kinds != config::kSkeleton);
}

TEST_CASE("the skeleton is its folder plus one line of registry.def", "[workloads][skeleton]") {
  // Outside sim/workloads/skeleton/ and the tests, only registry.def names the skeleton in code:
  // its enumerator, the symbols its folder defines, or its name.
  namespace fs = std::filesystem;
  const fs::path root = TIERSIM_SOURCE_DIR;
  const std::regex names("kSkeleton|skeleton_(workload|traits|checks|option_rows)|\"skeleton\"");
  std::vector<std::string> naming;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path& p = it->path();
    const std::string rel = fs::relative(p, root).generic_string();
    if (it->is_directory()) {
      // Tests, build trees, hidden folders and the skeleton's own folder.
      if (rel == "tests" || rel == "sim/workloads/skeleton" || p.filename().string()[0] == '.' ||
          fs::exists(p / "CMakeCache.txt"))
        it.disable_recursion_pending();
      continue;
    }
    const std::string ext = p.extension().string();
    if (ext != ".cpp" && ext != ".hpp" && ext != ".def" && p.filename() != "CMakeLists.txt")
      continue;
    std::ifstream in(p);
    std::ostringstream text;
    text << in.rdbuf();
    if (std::regex_search(text.str(), names)) naming.push_back(rel);
  }
  CHECK(naming == std::vector<std::string>{"sim/workloads/registry.def"});
}

TEST_CASE("an unknown workload kind in a scenario file lists the registered kinds",
          "[workloads][config]") {
  std::string yaml = kSkeletonYaml;
  yaml.replace(yaml.find("skeleton}"), 8, "servng");
  CHECK_THROWS_WITH(test::load_yaml(yaml), Catch::Contains("skeleton"));
}

}  // namespace tiersim
