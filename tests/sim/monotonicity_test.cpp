// Property tests over the shipped inference scenarios: better hardware never makes a run slower.
// Each knob is raised by a few factors on every shipped inference scenario (scenarios/), and total_s may
// not grow (nor throughput fall). The simulator's resources are FCFS servers that a faster part
// can only free earlier, so a slowdown points at a scheduling anomaly (a reservation order that
// depends on timing), not at physics. A scenario that is expected to break one of these for a
// reason it can explain says so in a comment line `# not monotonic in <key>: <why>`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "config/catalog.hpp"
#include "config/scenario_loader.hpp"
#include "sim/simulate.hpp"

namespace sim_monotonicity_test {

using namespace tiersim;

namespace {

const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";

std::string read_text(const std::string& file) {
  std::ifstream in(file);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every shipped scenario file (not the catalogs, sweeps, plans or comparisons) of kind inference.
std::vector<std::string> inference_scenarios() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kData)) {
    if (e.path().extension() != ".yaml" || e.path().parent_path().filename() == "catalog") continue;
    const std::string text = read_text(e.path().string());
    const bool not_a_scenario = text.find("\ngrid:") != std::string::npos ||
                                text.find("\ncompare:") != std::string::npos ||
                                text.rfind("compare:", 0) == 0;
    if (!not_a_scenario && text.find("kind: inference") != std::string::npos)
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const config::Catalog& catalog() {
  static const config::Catalog c = config::Catalog::load(kData);
  return c;
}

Scenario load(const std::string& file, const std::vector<std::string>& sets = {}) {
  config::LoadOptions o;
  o.catalog = &catalog();
  o.overrides = sets;
  return config::load_scenario(file, o);
}

// True when the scenario file documents why it is not monotonic in `key`.
bool documented_exception(const std::string& file, const std::string& key) {
  return read_text(file).find("# not monotonic in " + key + ":") != std::string::npos;
}

std::string num(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

// The overrides that make a variant better in one way, from the resolved base scenario; empty
// when the knob does not apply (no drives, nothing to raise).
using Variant = std::function<std::vector<std::string>(const Scenario&, double factor)>;

// Runs every scenario and its variants for each factor and checks that none is slower.
void check_monotonic(const std::string& key, const std::vector<double>& factors, const Variant& variant) {
  const auto files = inference_scenarios();
  REQUIRE(files.size() >= 20);  // the shipped set; fewer means the folder was not found
  int compared = 0;
  for (const auto& file : files) {
    const bool exception = documented_exception(file, key);
    const Scenario base = load(file);
    REQUIRE(base.kind == WorkloadKind::kInference);
    const sim::RunResult r0 = sim::simulate(base);
    if (!r0.fits) continue;
    bool slower_somewhere = false;
    for (double f : factors) {
      const auto sets = variant(base, f);
      if (sets.empty()) continue;
      const sim::RunResult r = sim::simulate(load(file, sets));
      INFO(file << " with " << key << " x" << f);
      REQUIRE(r.fits);  // better hardware does not shrink any tier
      const bool slower =
          r.get("total_s") > r0.get("total_s") * (1 + 1e-12) ||
          r.get("throughput_tokens_per_s") < r0.get("throughput_tokens_per_s") * (1 - 1e-12);
      slower_somewhere = slower_somewhere || slower;
      if (!exception) {
        CHECK(r.get("total_s") <= r0.get("total_s") * (1 + 1e-12));
        CHECK(r.get("throughput_tokens_per_s") >= r0.get("throughput_tokens_per_s") * (1 - 1e-12));
        ++compared;
      }
    }
    // A documented exception that no longer happens would only hide the next regression: the
    // comment must go once the model no longer shows it.
    INFO(file << " documents that it is not monotonic in " << key
              << ", but none of the factors makes it slower: remove the stale comment");
    if (exception) CHECK(slower_somewhere);
  }
  CHECK(compared > 0);
}

}  // namespace

TEST_CASE("more drives never make a shipped inference scenario slower", "[inference][monotonic]") {
  check_monotonic("hardware.nvme.count", {1.5, 2, 4}, [](const Scenario& s, double f) {
    const int n = s.hardware.nvme.count;
    if (n <= 0) return std::vector<std::string>{};
    return std::vector<std::string>{"hardware.nvme.count=" + std::to_string(std::max(n + 1, int(std::lround(n * f))))};
  });
}

TEST_CASE("faster drives never make a shipped inference scenario slower", "[inference][monotonic]") {
  check_monotonic("hardware.nvme.read_gbps", {1.125, 1.5, 2}, [](const Scenario& s, double f) {
    if (s.hardware.nvme.count <= 0) return std::vector<std::string>{};
    return std::vector<std::string>{"hardware.nvme.read_gbps=" + num(s.hardware.nvme.drive.read_gbps * f)};
  });
}

TEST_CASE("more GPU compute never makes a shipped inference scenario slower", "[inference][monotonic]") {
  check_monotonic("hardware.gpu.fp16_tflops", {1.25, 1.625, 2}, [](const Scenario& s, double f) {
    return std::vector<std::string>{"hardware.gpu.fp16_tflops=" + num(s.hardware.gpu.fp16_tflops * f)};
  });
}

TEST_CASE("more GPU memory bandwidth never makes a shipped inference scenario slower", "[inference][monotonic]") {
  check_monotonic("hardware.gpu.hbm_gbps", {1.25, 1.625, 2}, [](const Scenario& s, double f) {
    return std::vector<std::string>{"hardware.gpu.hbm_gbps=" + num(s.hardware.gpu.hbm_gbps * f)};
  });
}

TEST_CASE("more PCIe bandwidth never makes a shipped inference scenario slower", "[inference][monotonic]") {
  // The GPU's host link is min(measured copy rate, 80% of the link) (model/perf.cpp): widen the
  // link and raise the measured rates together so that the factor takes effect.
  check_monotonic("hardware.gpu.pcie_lanes", {1.5, 2}, [](const Scenario& s, double f) {
    const auto& g = s.hardware.gpu;
    std::vector<std::string> sets{"hardware.gpu.pcie_lanes=" +
                                  std::to_string(std::min(32, int(std::lround(g.pcie_lanes * f))))};
    if (g.pcie_h2d_gbps > 0) sets.push_back("hardware.gpu.pcie_h2d_gbps=" + num(g.pcie_h2d_gbps * f));
    if (g.pcie_d2h_gbps > 0) sets.push_back("hardware.gpu.pcie_d2h_gbps=" + num(g.pcie_d2h_gbps * f));
    return sets;
  });
}
}  // namespace sim_monotonicity_test
