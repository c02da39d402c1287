// FlexGen's runtime (policy.schedule: flexgen) on the event engine: placement, schedule, and the
// benchmark's projection.
#include <catch2/catch.hpp>

#include "model/perf.hpp"
#include "sim/simulate.hpp"
#include "tests/support.hpp"

namespace sim_workloads_inference_flexgen_sim_test {

using namespace tiersim;

namespace {

// bench_suite.py's 30b_1x1 case at prompt 512 (FlexGen README row), shortened for the test.
const char* kOpt30b = R"(
name: t
hardware:
  gpu: {model: T4, count: 1}
  host: {model: gcp-n1-highmem-32}
  nvme: {model: gcp-local-ssd-nvme, count: 4}
model: {name: opt-30b}
workload: {kind: inference, batch: 144, prompt_tokens: 512, gen_tokens: 8}
policy:
  schedule: flexgen
  flexgen: {w_gpu_percent: 20, w_cpu_percent: 80, cache_gpu_percent: 0, cache_cpu_percent: 100,
            act_gpu_percent: 0, act_cpu_percent: 100, gpu_batch_size: 48, num_gpu_batches: 3,
            cpu_cache_compute: true}
)";

double metric(const sim::RunResult& r, const char* name) {
  return r.get(name);
}

}  // namespace

TEST_CASE("FlexGen's OPT-30B policy fits a T4 and keeps ~8% of the weights on it",
          "[inference][flexgen]") {
  const sim::RunResult r = sim::simulate(test::load_yaml(kOpt30b));
  REQUIRE(r.fits);
  CHECK(metric(r, "weights_gpu_fraction") == Approx(1.0 / 12).margin(0.02));
  CHECK(metric(r, "throughput_tokens_per_s") > 0);
}

double busy_s(const sim::RunResult& r, const std::string& resource) {
  for (const auto& u : r.utilization)
    if (u.name == resource) return u.busy_s;
  return 0;
}

TEST_CASE("overlap hides loads behind compute; without CPU attention the cache crosses PCIe",
          "[inference][flexgen]") {
  const sim::RunResult base = sim::simulate(test::load_yaml(kOpt30b));
  const sim::RunResult serial =
      sim::simulate(test::load_yaml(kOpt30b, {"policy.flexgen.overlap=false"}));
  CHECK(metric(serial, "throughput_tokens_per_s") < metric(base, "throughput_tokens_per_s"));
  // Without --cpu-cache-compute the whole K/V prefix goes to the GPU every step, per layer and
  // GPU batch (SelfAttention.load_cache path 0), instead of O(gbs x h) bytes.
  const sim::RunResult shipped =
      sim::simulate(test::load_yaml(kOpt30b, {"policy.flexgen.cpu_cache_compute=false"}));
  REQUIRE(shipped.fits);
  const double decode_tokens = 7;                               // gen_tokens - 1
  const double prefix_bytes = 144.0 * 512 * 2 * 7168 * 2 * 48;  // K and V, all layers, fp16
  const double h2d_rate = 13.8e9;                               // the T4's catalog H2D rate
  CHECK(busy_s(shipped, "pcie-h2d") - busy_s(base, "pcie-h2d") >
        decode_tokens * prefix_bytes / h2d_rate);
  CHECK(metric(shipped, "cpu_attention_s") == 0);
  CHECK(metric(base, "cpu_attention_s") > 0);
}

TEST_CASE("fewer_batch projects every decode token from the first one's layers 10..19",
          "[inference][flexgen]") {
  const sim::RunResult full = sim::simulate(test::load_yaml(kOpt30b));
  const sim::RunResult projected =
      sim::simulate(test::load_yaml(kOpt30b, {"policy.flexgen.debug_fewer_batch=true"}));
  CHECK(projected.get("prefill_s") == Approx(full.get("prefill_s")));
  // The projection times the first decode token (the shortest context), so it is no slower per
  // token than the full run, and within a few percent of it for 8 tokens after a 512 prompt.
  CHECK(projected.get("decode_s_per_token") <= full.get("decode_s_per_token") * 1.05);
  CHECK(projected.get("decode_s_per_token") ==
        Approx(full.get("decode_s_per_token")).epsilon(0.15));
}

TEST_CASE("an achieved GEMM rate replaces the datasheet peak times the efficiency",
          "[model][perf][flexgen]") {
  GpuSpec gpu;
  gpu.fp16_tflops = 65;
  gpu.hbm_gbps = 320;
  ExecutionModel em;
  const double flops = 1e13;
  CHECK(gpu_kernel_s(gpu, em, flops, 0) == Approx(flops / (65e12 * em.gemm_efficiency)));
  gpu.fp16_achieved_tflops = 21.24;
  CHECK(gpu_kernel_s(gpu, em, flops, 0) == Approx(flops / 21.24e12));
}

TEST_CASE("decode GEMMs run at the GPU's decode rate, prefill GEMMs at the long-run rate",
          "[inference][flexgen]") {
  // Regression (issue 14): every FlexGen GEMM ran at fp16_achieved_tflops, FlexGen's prefill rate
  // (cost_model.py mm_flops_p), though its fitted T4 model times generation at mm_flops_g.
  const auto run = [](const char* tflops) {
    return sim::simulate(test::load_yaml(
        kOpt30b, {std::string("hardware.gpu.fp16_decode_achieved_tflops=") + tflops}));
  };
  const sim::RunResult one = run("1");
  const sim::RunResult two = run("2");
  const sim::RunResult catalog = sim::simulate(test::load_yaml(kOpt30b));
  CHECK(one.get("prefill_s") == Approx(catalog.get("prefill_s")));
  CHECK(one.get("decode_s_per_token") > two.get("decode_s_per_token"));
  // Both rates sit far below the T4's memory roofline for 48-token GEMMs, so the GPU's decode time
  // is the GEMM FLOPs over the rate. OPT-30B decode GEMMs per token and sequence: each of 48
  // layers 2 x (4 h^2 attention projections + 2 h ffn MLP), and the logits 2 vocab h; the cache
  // is on the CPU (cpu_cache_compute), so no attention FLOPs on the GPU. 144 sequences, 7 tokens.
  const double h = 7168, ffn = 28672, vocab = 50272;
  const double decode_gemm_flops = 144.0 * 7 * (48 * 2 * (4 * h * h + 2 * h * ffn) + 2 * vocab * h);
  CHECK(busy_s(one, "gpu") - busy_s(two, "gpu") ==
        Approx(decode_gemm_flops / 1e12 - decode_gemm_flops / 2e12).epsilon(0.01));
}

TEST_CASE("hidden-state copies run on the default stream, ahead of the step's compute",
          "[inference][flexgen]") {
  // flex_opt.py issues store_hidden and load_hidden outside any side-stream block, just before
  // compute_layer, so compute waits for them; and copies in one direction run in issue order, so
  // the hidden-state load also waits for the side stream's weight prefetch issued before it
  // (tools/gpu/copy_order_probe.py on an H100: an 8 MiB copy on another stream completed 0.16 ms
  // after a 1 GiB one issued first). Halving the H2D rate therefore lengthens the prefill by at
  // least the extra time of the hidden-state loads, though the prefill is compute-bound.
  const sim::RunResult base = sim::simulate(test::load_yaml(kOpt30b));
  const sim::RunResult slow =
      sim::simulate(test::load_yaml(kOpt30b, {"hardware.gpu.pcie_h2d_gbps=6.9"}));
  const double hidden_bytes = 48.0 * 512 * 7168 * 2;  // one GPU batch's prompt hidden states
  const double loads = (48.0 * 2 + 2) * 3;            // FlexGen layers x GPU batches
  const double extra_s = loads * (hidden_bytes / 6.9e9 - hidden_bytes / 13.8e9);
  CHECK(slow.get("prefill_s") - base.get("prefill_s") >= 0.95 * extra_s);
}

TEST_CASE("FlexGen pays a step's host work once per token and GPU batch, at its output embedding",
          "[inference][flexgen][step]") {
  // Kernels that stay within the T4's power limit (memory traffic drawing nothing): a compute-
  // bound step at its limit runs at a higher clock when a host wait lowers its average power
  // (model/power.hpp gpu_power_limited), which would hide part of the charge this test counts.
  const Scenario s = test::load_yaml(kOpt30b, {"hardware.gpu.memory_power_fraction=0"});
  sim::SimOptions none, host;
  none.exec.step_overhead_s = 0;
  none.exec.step_overhead_per_sequence_s = 0;
  host.exec.step_overhead_s = 1e-3;
  host.exec.step_overhead_per_sequence_s = 10e-6;
  const sim::RunResult a = sim::simulate(s, none), b = sim::simulate(s, host);
  // 8 tokens x 3 GPU batches of 48 sequences.
  CHECK(busy_s(b, "gpu") - busy_s(a, "gpu") == Approx(8 * 3 * (1e-3 + 48 * 10e-6)));
}

TEST_CASE("FlexGen's disk is the drive model's: a calibrated profile moves its reads",
          "[inference][flexgen]") {
  // bench_suite.py's 175b_1x1 case (scenarios/reference/flexgen-t4-opt175b-p256.yaml), shortened:
  // half of OPT-175B's weights on disk, more than the page cache can hold, so every decode step
  // reads them from the drives.
  const char* yaml = R"(
name: t
hardware:
  gpu: {model: T4, count: 1}
  host: {model: gcp-n1-highmem-32}
  nvme: {model: gcp-local-ssd-nvme, count: 4}
model: {name: opt-175b}
workload: {kind: inference, batch: 64, prompt_tokens: 256, gen_tokens: 3}
policy:
  schedule: flexgen
  flexgen: {w_gpu_percent: 0, w_cpu_percent: 50, cache_gpu_percent: 0, cache_cpu_percent: 0,
            act_gpu_percent: 0, act_cpu_percent: 100, gpu_batch_size: 64, num_gpu_batches: 1,
            cpu_cache_compute: true, pin_weight: false}
)";
  const Scenario s = test::load_yaml(yaml);
  const sim::RunResult base = sim::simulate(s);
  REQUIRE(base.fits);
  REQUIRE(metric(base, "weights_nvme_fraction") > 0.3);
  REQUIRE(metric(base, "page_cache_bytes") < 0.3 * metric(base, "weights_bytes"));
  // A profile that measured the drives at half their datasheet read rate (hardware.nvme.profile
  // replaces hardware.nvme.model's device model, not the datasheet numbers).
  Scenario slow = s;
  slow.hardware.nvme.model.read.peak_gbps /= 2;
  slow.hardware.nvme.model.read.stream_gbps /= 2;
  const sim::RunResult half = sim::simulate(slow);
  CHECK(busy_s(half, "nvme") > 1.8 * busy_s(base, "nvme"));
  CHECK(metric(half, "total_s") > metric(base, "total_s"));
  // The reads are the array's at the reader's operating point: a shallow reader (one thread,
  // one 128 KiB request at a time) is slower than the deep default.
  const sim::RunResult shallow = sim::simulate(test::load_yaml(
      yaml, {"policy.aio.threads=1", "policy.aio.queue_depth=1", "policy.aio.block_size=128KiB"}));
  CHECK(busy_s(shallow, "nvme") > 1.2 * busy_s(base, "nvme"));
}
}  // namespace sim_workloads_inference_flexgen_sim_test
