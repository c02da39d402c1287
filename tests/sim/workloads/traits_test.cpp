// The workloads' traits (sim/workloads/traits.hpp) and the rule they serve: code outside
// sim/workloads/ treats workloads differently by the capabilities they declare, never by their
// kind. The last test reads the source tree to hold the rule.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "config/scenario_check.hpp"
#include "sim/workloads/traits.hpp"
#include "sim/workloads/workload.hpp"
#include "tests/support.hpp"

namespace tiersim::sim_workloads_traits_test {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The project's own source files (C++ sources, headers, registry lists, CMake files), as paths
// relative to the source folder, outside tests/, build trees and hidden folders.
std::vector<std::string> production_sources() {
  const fs::path root = TIERSIM_SOURCE_DIR;
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path& p = it->path();
    if (it->is_directory()) {
      const std::string name = p.filename().string();
      if (name == "tests" || name.front() == '.' || fs::exists(p / "CMakeCache.txt"))
        it.disable_recursion_pending();
      continue;
    }
    const std::string ext = p.extension().string();
    if (ext == ".cpp" || ext == ".hpp" || ext == ".def" || p.filename() == "CMakeLists.txt")
      out.push_back(fs::relative(p, root).generic_string());
  }
  return out;
}

}  // namespace

TEST_CASE("every registered workload has traits, checks and an ops table of its kind",
          "[workloads]") {
  for (int i = 0; i < kWorkloadKindCount; ++i) {
    const auto kind = static_cast<WorkloadKind>(i);
    CAPTURE(to_string(kind));
    CHECK(sim::workload_ops(kind).kind == kind);
    CHECK(find_workload_traits(to_string(kind)) == &workload_traits(kind));
    // Every table is generated from registry.def: a kind without traits or checks fails to link.
    (void)config::workload_checks(kind);
  }
  CHECK(find_workload_traits("offline") == nullptr);
}

TEST_CASE("capabilities say what a workload does", "[workloads]") {
  // Requests over time: the capacity search varies their rate; a fixed batch has a roofline and a
  // capacity model; training searches the largest model.
  const WorkloadTraits& serving = workload_traits(WorkloadKind::kServing);
  CHECK(serving.has(kCapArrivalRate));
  CHECK_FALSE(serving.has(kCapFixedBatch));
  const WorkloadTraits& inference = workload_traits(WorkloadKind::kInference);
  CHECK(inference.has(kCapFixedBatch));
  CHECK(inference.has(kCapFlexGen));
  CHECK_FALSE(inference.has(kCapArrivalRate));
  CHECK(workload_traits(WorkloadKind::kTraining).has(kCapZeroTraining));
  // The same Scenario fields mean different things per workload: the entries read the right one.
  Scenario s;
  s.kind = WorkloadKind::kIo;
  s.policy.io_path = IoPath::kGds;
  s.io.buffer = IoWorkload::Buffer::kCpu;
  CHECK_FALSE(reads_nvme_to_gpu(s));  // the transfer's buffer decides, not policy.io_path
  s.io.buffer = IoWorkload::Buffer::kGpuDirect;
  CHECK(reads_nvme_to_gpu(s));
  s.kind = WorkloadKind::kInference;
  CHECK(reads_nvme_to_gpu(s));  // policy.io_path: gds
}

TEST_CASE("a capability decides a loader rule for every workload that declares it",
          "[workloads][config]") {
  // kCapKvCache: a KV cache on the CPU needs a stack whose attention runs there, for inference
  // and serving alike (the first rule to fail for both); the io benchmark keeps no KV cache, so
  // the key changes nothing there.
  const auto scenario = [](const std::string& workload) {
    return R"(
name: kv-on-cpu
hardware:
  gpu: {model: H100-SXM}
  nvme: {model: generic-gen4, count: 1}
model: {name: llama-3-8b}
workload: )" + workload + R"(
policy: {kv_cache: cpu, stack: optimized}
)";
  };
  CHECK_NOTHROW(test::load_yaml(scenario("{kind: io, size: 1GiB}")));
  for (const char* workload : {"{kind: inference, batch: 1, prompt_tokens: 128, gen_tokens: 8}",
                               "{kind: serving, arrival_rate: 1}"}) {
    CAPTURE(workload);
    CHECK_THROWS_WITH(test::load_yaml(scenario(workload)),
                      Catch::Contains("attention on the GPU only"));
  }
}

TEST_CASE("no code outside sim/workloads/ branches on a workload's kind", "[workloads]") {
  // A comparison with a WorkloadKind enumerator, a case label of one, or a comparison of a
  // workload's name with a registered name.
  std::string names;
  for (int i = 0; i < kWorkloadKindCount; ++i)
    names += std::string(i ? "|" : "") + to_string(static_cast<WorkloadKind>(i));
  const std::regex branch("([!=]=\\s*WorkloadKind::k\\w+|WorkloadKind::k\\w+\\s*[!=]=|"
                          "case\\s+WorkloadKind::|workload\\s*[!=]=\\s*\"(" +
                          names + ")\")");
  std::vector<std::string> offenders;
  for (const std::string& file : production_sources()) {
    if (file.rfind("sim/workloads/", 0) == 0) continue;
    if (std::regex_search(read_file(fs::path(TIERSIM_SOURCE_DIR) / file), branch))
      offenders.push_back(file);
  }
  CAPTURE(offenders);
  CHECK(offenders.empty());
}

}  // namespace tiersim
