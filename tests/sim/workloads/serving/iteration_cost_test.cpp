// The serving iteration's cost where the KV tier's loads and stores meet on the drives.
#include <catch2/catch.hpp>

#include "model/perf.hpp"
#include "sim/workloads/serving/iteration_cost.hpp"
#include "tests/support.hpp"

namespace tiersim::sim_workloads_serving_iteration_cost_test {
namespace {

const char* kYaml = R"(
name: iteration-cost-test
hardware:
  gpu: {model: H100-SXM}
  nvme: {model: generic-gen4, count: 1}
model: {name: llama-3-8b}
workload:
  kind: serving
  arrival_rate: 1
  requests: 10
  prompt_tokens: 256
  output_tokens: 32
  prefix_block_tokens: 256
)";

}  // namespace

TEST_CASE("a KV prefix load shares the drives with the stores issued beside it",
          "[workloads][serving][kv_tiers]") {
  const Scenario s = test::load_yaml(kYaml);
  const sim::IterationModel model(s, ExecutionModel{});
  sim::IterationShape load;
  load.kv_load_nvme_tokens = 4096;
  sim::IterationShape store;
  store.kv_store_nvme_tokens = 2048;
  sim::IterationShape both = load;
  both.kv_store_nvme_tokens = store.kv_store_nvme_tokens;
  const sim::IterationCost l = model.cost(load), w = model.cost(store), b = model.cost(both);
  // Stores alone do not hold up the iteration; beside a load they make it wait for the writes it
  // shared the drives with (as many bytes as it read, or all of them when fewer).
  CHECK(w.kv_load_s == 0);
  CHECK(b.kv_load_s > l.kv_load_s);
  CHECK(b.time_s - l.time_s == Approx(b.kv_load_s - l.kv_load_s));
  // The datasheet drive has no interference: the drives' busy time is each direction's alone,
  // less the writes' first-request latency, which the reads cover.
  const NvmeArrayTiming t =
      nvme_array_timing(s.hardware.nvme, s.hardware.host, s.policy.aio, 1.0);
  CHECK(b.nvme_s == Approx(l.nvme_s + w.nvme_s - t.write_latency_s).epsilon(1e-9));
  // More writes than reads: the load waits for the same number of write bytes as it reads.
  sim::IterationShape more = both;
  more.kv_store_nvme_tokens = 4 * load.kv_load_nvme_tokens;
  sim::IterationShape equal = both;
  equal.kv_store_nvme_tokens = load.kv_load_nvme_tokens;
  CHECK(model.cost(more).kv_load_s == Approx(model.cost(equal).kv_load_s).epsilon(1e-12));
  CHECK(model.cost(more).nvme_s > model.cost(equal).nvme_s);
}

}  // namespace tiersim::sim_workloads_serving_iteration_cost_test
