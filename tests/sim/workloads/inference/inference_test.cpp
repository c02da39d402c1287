#include <sys/resource.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "tests/support.hpp"
#include "config/scenario_loader.hpp"
#include "model/capacity.hpp"
#include "model/layout.hpp"
#include "model/perf.hpp"
#include "model/units.hpp"
#include "sim/simulate.hpp"
#include "study/validation.hpp"

using namespace tiersim;

namespace {

Scenario load(const std::string& yaml, std::vector<std::string> sets = {}) {
  return test::load_yaml(yaml, std::move(sets));
}

const char* kNvmeScenario = R"(
name: t
hardware:
  gpu: {model: A100-80GB, count: 1}
  host: {model: generic-2s-ddr5}
  nvme: {model: generic-gen4, count: 2}
model: {name: llama-3-70b}
workload: {kind: inference, batch: 8, prompt_tokens: 128, gen_tokens: 8}
policy: {weights: nvme, kv_cache: gpu, io_path: gds}
)";

}  // namespace

TEST_CASE("an I/O-bound decode step takes the weight bytes over the array bandwidth", "[inference]") {
  const Scenario s = load(kNvmeScenario);
  const sim::RunResult r = sim::simulate(s);
  REQUIRE(r.fits);
  const double weights = model_weight_bytes(s.model, s.policy);
  const double array_gbps = r.metric("nvme_read_gbps_model");
  REQUIRE(array_gbps > 0);
  const double io_bound_step_s = weights / (array_gbps * units::kGB);
  // Compute and per-tensor overheads can only add to the streaming time, and with one layer of
  // prefetch they overlap with it almost entirely.
  const double step = r.metric("decode_s_per_token");
  CHECK(step >= io_bound_step_s * 0.999);
  CHECK(step <= io_bound_step_s * 1.15);
  CHECK(r.bottleneck == "nvme");
}

TEST_CASE("more drives stream faster until another resource limits", "[inference]") {
  double previous = 0;
  for (int drives : {1, 2, 4}) {
    const auto r = sim::simulate(load(kNvmeScenario, {"hardware.nvme.count=" + std::to_string(drives)}));
    const double tps = r.metric("throughput_tokens_per_s");
    CHECK(tps > previous * 1.5);
    previous = tps;
  }
}

TEST_CASE("prefetching overlaps weight fetches with compute", "[inference]") {
  const auto serial = sim::simulate(load(kNvmeScenario, {"policy.prefetch_layers=0", "workload.batch=64"}));
  const auto overlapped = sim::simulate(load(kNvmeScenario, {"policy.prefetch_layers=1", "workload.batch=64"}));
  CHECK(overlapped.metric("total_s") < serial.metric("total_s"));
}

TEST_CASE("the AIO bounce adds a PCIe copy that GDS does not need", "[inference]") {
  const auto gds = sim::simulate(load(kNvmeScenario, {"policy.io_path=gds"}));
  const auto aio = sim::simulate(load(kNvmeScenario, {"policy.io_path=aio", "policy.aio.swap_buffers=1"}));
  CHECK(aio.metric("total_s") > gds.metric("total_s"));
}

TEST_CASE("the same scenario gives the same result bit for bit", "[inference]") {
  const auto a = sim::simulate(load(kNvmeScenario));
  const auto b = sim::simulate(load(kNvmeScenario));
  REQUIRE(a.metrics.size() == b.metrics.size());
  for (std::size_t i = 0; i < a.metrics.size(); ++i) CHECK(a.metrics[i].value == b.metrics[i].value);
  CHECK(a.events == b.events);
}

TEST_CASE("a configuration that does not fit names the tier and the shortfall", "[inference][capacity]") {
  const auto r = sim::simulate(load(kNvmeScenario, {"policy.weights=gpu"}));
  REQUIRE_FALSE(r.fits);
  CHECK_THAT(r.shortfall, Catch::Contains("gpu needs"));
  CHECK_THAT(r.shortfall, Catch::Contains("weights (resident)"));
}

TEST_CASE("quantised weights move fewer bytes", "[inference]") {
  const Scenario s16 = load(kNvmeScenario);
  const Scenario s4 = load(kNvmeScenario, {"policy.weight_bits=4"});
  const double b16 = model_weight_bytes(s16.model, s16.policy);
  const double b4 = model_weight_bytes(s4.model, s4.policy);
  // 4 bits plus an fp16 scale and minimum per 64 weights is 0.5625 bytes; embeddings stay fp16.
  CHECK(b4 / b16 < 0.32);
  CHECK(b4 / b16 > 0.28);
  CHECK(sim::simulate(s4).metric("throughput_tokens_per_s") >
        2.5 * sim::simulate(s16).metric("throughput_tokens_per_s"));
}

TEST_CASE("CPU attention appears when the KV cache lives in host DRAM", "[inference]") {
  const auto r = sim::simulate(load(kNvmeScenario, {"policy.kv_cache=cpu", "policy.weights=cpu"}));
  REQUIRE(r.fits);
  CHECK(r.metric("cpu_attention_s") > 0);
}

TEST_CASE("tensor parallelism splits compute and adds all-reduce traffic", "[inference]") {
  const char* yaml = R"(
name: tp
hardware:
  gpu: {model: L40S, count: 4}
model: {name: opt-13b}
workload: {kind: inference, batch: 16, prompt_tokens: 256, gen_tokens: 8}
policy: {weights: gpu, parallelism: {tensor: 4}}
)";
  const auto r = sim::simulate(load(yaml));
  REQUIRE(r.fits);
  bool saw_peer = false;
  for (const auto& u : r.utilization)
    if (u.name == "gpu-peer" && u.busy_s > 0) saw_peer = true;
  CHECK(saw_peer);
}

TEST_CASE("published reference cases stay within 15% mean absolute error", "[validate]") {
  const auto v = sim::run_validation(sim::default_reference_dir(""), "");
  REQUIRE(v.rows.size() >= 30);
  INFO("MAPE " << v.mape_pct << "% over " << v.rows.size() << " rows; predictions only "
               << v.prediction_mape_pct << "% over " << v.prediction_rows << " rows");
  for (const auto& r : v.rows) {
    INFO(r.case_name << " " << r.metric << ": " << r.note);
    CHECK(r.note.empty());  // every reference configuration fits and is simulated
  }
  CHECK(v.mape_pct <= 15.0);
  CHECK(v.prediction_mape_pct <= 15.0);
  // The four calibration rows of scenarios/reference/README.md are marked, so they can be left out.
  CHECK(v.rows.size() - v.prediction_rows == 4);
}

TEST_CASE("a long generation does not keep per-step state", "[inference]") {
  // 82 modules x 30000 passes: the simulator used to hold two flags per module and pass
  // (about 75 bytes a step: 185 MB here); only the flags between fetch and compute are needed.
  const Scenario s = load(kNvmeScenario, {"workload.batch=1", "workload.gen_tokens=30000",
                                          "model.max_positions=40000"});
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  const sim::RunResult r = sim::simulate(s);
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  REQUIRE(r.fits);
  CHECK(r.metric("generated_tokens") == 30000);
  const long grown_kib = after.ru_maxrss - before.ru_maxrss;  // ru_maxrss is in KiB on Linux
  CHECK(grown_kib < 64 * 1024);
}
