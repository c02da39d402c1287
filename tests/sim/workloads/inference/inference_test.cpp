#include <sys/resource.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "config/scenario_loader.hpp"
#include "model/capacity.hpp"
#include "model/layout.hpp"
#include "model/perf.hpp"
#include "model/units.hpp"
#include "model/weight_stream.hpp"
#include "sim/simulate.hpp"
#include "tests/support.hpp"

namespace sim_workloads_inference_inference_test {

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

TEST_CASE("an I/O-bound decode step takes the weight bytes over the array bandwidth",
          "[inference]") {
  const Scenario s = load(kNvmeScenario);
  const sim::RunResult r = sim::simulate(s);
  REQUIRE(r.fits);
  const double weights = model_weight_bytes(s.model, s.policy);
  const double array_gbps = r.get("nvme_read_gbps_model");
  REQUIRE(array_gbps > 0);
  const double io_bound_step_s = weights / (array_gbps * units::kGB);
  // Compute and per-tensor overheads can only add to the streaming time, and with one layer of
  // prefetch they overlap with it almost entirely.
  const double step = r.get("decode_s_per_token");
  CHECK(step >= io_bound_step_s * 0.999);
  CHECK(step <= io_bound_step_s * 1.15);
  CHECK(r.bottleneck == "nvme");
}

TEST_CASE("more drives stream faster until another resource limits", "[inference]") {
  double previous = 0;
  for (int drives : {1, 2, 4}) {
    const auto r =
        sim::simulate(load(kNvmeScenario, {"hardware.nvme.count=" + std::to_string(drives)}));
    const double tps = r.get("throughput_tokens_per_s");
    CHECK(tps > previous * 1.5);
    previous = tps;
  }
}

TEST_CASE("prefetching overlaps weight fetches with compute", "[inference]") {
  const auto serial =
      sim::simulate(load(kNvmeScenario, {"policy.prefetch_layers=0", "workload.batch=64"}));
  const auto overlapped =
      sim::simulate(load(kNvmeScenario, {"policy.prefetch_layers=1", "workload.batch=64"}));
  CHECK(overlapped.get("total_s") < serial.get("total_s"));
}

TEST_CASE("the AIO bounce adds a PCIe copy that GDS does not need", "[inference]") {
  const auto gds = sim::simulate(load(kNvmeScenario, {"policy.io_path=gds"}));
  const auto aio =
      sim::simulate(load(kNvmeScenario, {"policy.io_path=aio", "policy.aio.swap_buffers=1"}));
  CHECK(aio.get("total_s") > gds.get("total_s"));
}

TEST_CASE("the same scenario gives the same result bit for bit", "[inference]") {
  const auto a = sim::simulate(load(kNvmeScenario));
  const auto b = sim::simulate(load(kNvmeScenario));
  REQUIRE(a.metrics.size() == b.metrics.size());
  for (std::size_t i = 0; i < a.metrics.size(); ++i)
    CHECK(a.metrics[i].value == b.metrics[i].value);
  CHECK(a.events == b.events);
}

TEST_CASE("a configuration that does not fit names the tier and the shortfall",
          "[inference][capacity]") {
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
  CHECK(sim::simulate(s4).get("throughput_tokens_per_s") >
        2.5 * sim::simulate(s16).get("throughput_tokens_per_s"));
}

TEST_CASE("CPU attention appears when the KV cache lives in host DRAM", "[inference]") {
  const auto r = sim::simulate(load(kNvmeScenario, {"policy.kv_cache=cpu", "policy.weights=cpu"}));
  REQUIRE(r.fits);
  CHECK(r.get("cpu_attention_s") > 0);
}

// OPT-13B on four L40S boards (no NVLink) with tensor parallelism over all four.
constexpr const char* kTensorParallel4 = R"(
name: tp
hardware:
  gpu: {model: L40S, count: 4}
model: {name: opt-13b}
workload: {kind: inference, batch: 16, prompt_tokens: 256, gen_tokens: 8}
policy: {weights: gpu, parallelism: {tensor: 4}}
)";

TEST_CASE("tensor parallelism splits compute and adds all-reduce traffic", "[inference]") {
  const char* yaml = kTensorParallel4;
  const auto r = sim::simulate(load(yaml));
  REQUIRE(r.fits);
  bool saw_peer = false;
  for (const auto& u : r.utilization)
    if (u.name == "gpu-peer" && u.busy_s > 0) saw_peer = true;
  CHECK(saw_peer);
}

TEST_CASE("tensor-parallel all-reduces through host memory take longer than peer-to-peer ones",
          "[inference][tp]") {
  const char* yaml = kTensorParallel4;
  auto peer = [](const sim::RunResult& r) {
    sim::ResourceUsage out;
    for (const auto& u : r.utilization)
      if (u.name == "gpu-peer") out = u;
    return out;
  };
  const auto p2p = sim::simulate(load(yaml));
  const auto host = sim::simulate(load(yaml, {"hardware.gpu.pcie_p2p=false"}));
  REQUIRE(p2p.fits);
  REQUIRE(host.fits);
  // The same bytes cross the link; each all-reduce's fixed cost is larger through host memory
  // (model/perf.hpp ring_allreduce_latency_s), and so is each byte's time (the host path keeps a
  // share of the copy rate in each direction, model/perf.hpp gpu_peer_gbps), the rules the
  // serving workload uses too.
  CHECK(peer(host).amount == Approx(peer(p2p).amount));
  CHECK(peer(host).busy_s > peer(p2p).busy_s);
  CHECK(sim::metric_value(host.metrics, "total_s") > sim::metric_value(p2p.metrics, "total_s"));
  // The latency difference of a layer's two 4-rank all-reduces, 2 x 6 steps x (2.55 - 1.27) us,
  // in each of OPT-13B's 40 layers and 8 passes (the prefill and 7 decode steps).
  const double per_layer_s = 2 * (ring_allreduce_latency_s(PeerLinkKind::kPcieHost, 4) -
                                  ring_allreduce_latency_s(PeerLinkKind::kPcieP2p, 4));
  const Scenario host_s = load(yaml, {"hardware.gpu.pcie_p2p=false"});
  const Scenario p2p_s = load(yaml);
  const double host_bps =
      units::gbps_to_bytes_per_s(gpu_peer_gbps(host_s.hardware.gpu, host_s.hardware.host));
  const double p2p_bps =
      units::gbps_to_bytes_per_s(gpu_peer_gbps(p2p_s.hardware.gpu, p2p_s.hardware.host));
  CHECK(host_bps < p2p_bps);
  const double bytes_s = peer(p2p).amount * (1.0 / host_bps - 1.0 / p2p_bps);
  CHECK(peer(host).busy_s - peer(p2p).busy_s ==
        Approx(per_layer_s * 40 * 8 + bytes_s).epsilon(0.01));
}

TEST_CASE("NVMe reads run ahead of the bounce copies and across modules, up to the swap buffers",
          "[inference][nvme]") {
  // DeepSpeed's swapper issues reads asynchronously while buffers are free: an I/O-bound AIO run
  // keeps the drive busy instead of waiting for each module's last bounce copy and the next
  // module's hooks. With one buffer each read waits for the previous copy. The drive still idles
  // for the fetcher's work between one read landing and the next swap-in (fetch_module), under
  // 3% of a 1-drive run.
  const auto nvme_utilization = [](const sim::RunResult& r) {
    for (const auto& u : r.utilization)
      if (u.name == "nvme") return u.utilization;
    return 0.0;
  };
  const Scenario five = load(kNvmeScenario, {"policy.io_path=aio", "hardware.nvme.count=1"});
  const Scenario one = load(
      kNvmeScenario, {"policy.io_path=aio", "hardware.nvme.count=1", "policy.aio.swap_buffers=1"});
  const sim::RunResult r5 = sim::simulate(five), r1 = sim::simulate(one);
  REQUIRE(r5.fits);
  REQUIRE(r1.fits);
  CHECK(nvme_utilization(r5) > 0.97);
  CHECK(r5.get("total_s") < r1.get("total_s"));
}

TEST_CASE("the fetcher's work per swap-in leaves an I/O-bound array idle: more drives do not hide it",
          "[inference][nvme]") {
  // DeepSpeed issues a swap-in only after the read before it has landed (synchronize_reads waits
  // for every read; the next swap-in comes from the next module hook), so its host work per
  // swap-in adds to an I/O-bound pass once per swapped-in tensor, whatever the array's rate.
  // Before, the fetcher queued reads back to back and its work overlapped them.
  const std::vector<std::string> sets = {"model.name=llama-3-8b", "workload.batch=4",
                                         "workload.prompt_tokens=64", "workload.gen_tokens=3"};
  for (const char* drives : {"2", "8"}) {
    INFO(drives << " drives");
    std::vector<std::string> all = sets;
    all.push_back(std::string("hardware.nvme.count=") + drives);
    const Scenario s = load(kNvmeScenario, all);
    sim::SimOptions none, slow;
    none.exec.swap_in_overhead_s = 0;
    slow.exec.swap_in_overhead_s = 5e-3;
    const sim::RunResult a = sim::simulate(s, none), b = sim::simulate(s, slow);
    REQUIRE(a.fits);
    double swap_ins = 0;
    const auto modules = weight_modules(s.model, s.policy);
    const WeightStreamPoint pt = weight_stream_point(s, none.exec, modules);
    for (const auto& mod : modules) swap_ins += module_stream(pt, mod).nvme_reads;
    // Two decode steps (gen 3: the prefill makes the first token), each paying 5 ms more for
    // every swap-in.
    const double added_s = b.get("decode_s") - a.get("decode_s");
    CHECK(added_s == Approx(2 * swap_ins * 5e-3).epsilon(0.02));
  }
}

TEST_CASE("expected distinct experts under uniform top-k routing", "[inference][moe]") {
  LlmSpec m;
  m.experts = 8;
  m.experts_per_token = 2;
  // E (1 - (1 - k/E)^B): one token hits exactly k; many tokens hit all E.
  CHECK(expected_distinct_experts(m, 1) == Approx(2.0));
  CHECK(expected_distinct_experts(m, 2) == Approx(8 * (1 - 0.75 * 0.75)));
  CHECK(expected_distinct_experts(m, 4) == Approx(8 * (1 - std::pow(0.75, 4))));
  CHECK(expected_distinct_experts(m, 512) == Approx(8.0));
  m.experts = 1;
  CHECK(expected_distinct_experts(m, 4) == 1.0);
}

TEST_CASE("an MoE layer's GEMMs read every expert its tokens were routed to", "[inference][moe]") {
  // Mixtral-8x7B: one token reads its top-2 experts; a decode batch of 16 reads nearly all 8
  // (8 (1 - (6/8)^16) = 7.92), though each token still computes with two.
  const Scenario s = load(R"(
name: moe
hardware: {gpu: {model: H100-SXM, count: 1}}
model: {name: mixtral-8x7b}
workload: {kind: inference, batch: 16, prompt_tokens: 16, gen_tokens: 4}
policy: {weights: gpu, kv_cache: gpu, weight_bits: 8, stack: optimized}
)");
  const LlmSpec& m = s.model;
  const double expert = 3.0 * m.hidden * m.ffn;
  CHECK(layer_read_params(m, 1) == layer_active_params(m));
  CHECK(layer_read_params(m, 16) ==
        Approx(layer_active_params(m) + (expected_distinct_experts(m, 16) - 2) * expert));
  CHECK(layer_read_params(m, 1e6) == Approx(layer_active_params(m) + 6 * expert));
  // A dense model reads what it computes with.
  const Scenario dense = load(test::replace(R"(name: d
hardware: {gpu: {model: H100-SXM, count: 1}}
model: {name: mixtral-8x7b}
workload: {kind: inference, batch: 16, prompt_tokens: 16, gen_tokens: 4}
)",
                                            "mixtral-8x7b", "llama-3-8b"));
  CHECK(layer_read_params(dense.model, 64) == layer_active_params(dense.model));
  // A memory-bound decode step reads them: at batch 16 a step takes at least the hit experts'
  // bytes over HBM, of which two experts a layer would be about a quarter.
  const sim::RunResult r = sim::simulate(s);
  REQUIRE(r.fits);
  const double read_bytes = m.layers * layer_read_params(m, 16);  // 8-bit weights: 1 byte each
  const double hbm_s = read_bytes / units::gbps_to_bytes_per_s(s.hardware.gpu.hbm_gbps);
  CHECK(r.get("decode_s_per_token") > hbm_s);
}

TEST_CASE("a runtime that skips unrouted experts fetches fewer expert bytes at small batch",
          "[inference][moe]") {
  const char* yaml = R"(
name: moe
hardware:
  gpu: {model: A100-80GB, count: 1}
  host: {model: generic-2s-ddr5}
model: {name: mixtral-8x7b}
workload: {kind: inference, batch: 1, prompt_tokens: 1, gen_tokens: 16}
policy: {weights: cpu, kv_cache: gpu}
)";
  const auto h2d_bytes = [](const sim::RunResult& r) {
    for (const auto& u : r.utilization)
      if (u.name == "pcie-h2d") return u.busy_s;
    return 0.0;
  };
  const Scenario all = load(yaml);
  const Scenario routed = load(yaml, {"policy.moe_fetch=routed"});
  const sim::RunResult ra = sim::simulate(all), rr = sim::simulate(routed);
  REQUIRE(ra.fits);
  REQUIRE(rr.fits);
  // Batch 1, one token per pass: 2 of 8 experts, so the experts' share of the bytes drops to 1/4.
  const ParamCounts c = count_params(all.model);
  const double expert_share = c.ffn_total * all.model.layers / c.total;
  const double expected_ratio = 1 - expert_share * (1 - 2.0 / 8.0);
  CHECK(h2d_bytes(rr) / h2d_bytes(ra) == Approx(expected_ratio).epsilon(0.02));
  CHECK(rr.get("throughput_tokens_per_s") > ra.get("throughput_tokens_per_s"));
  // A batch large enough to hit every expert fetches them all either way.
  const Scenario big = load(yaml, {"workload.batch=256"});
  const Scenario big_routed = load(yaml, {"workload.batch=256", "policy.moe_fetch=routed"});
  CHECK(sim::simulate(big_routed).get("total_s") ==
        Approx(sim::simulate(big).get("total_s")).epsilon(1e-6));
}

TEST_CASE("a long generation does not keep per-step state", "[inference]") {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer keeps freed memory in quarantine and adds shadow memory: the resident set
  // says nothing about what the simulator holds (and 30000 passes take minutes there).
  WARN("skipped under AddressSanitizer: RSS growth is not the simulator's");
  return;
#endif
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
  CHECK(r.get("generated_tokens") == 30000);
  const long grown_kib = after.ru_maxrss - before.ru_maxrss;  // ru_maxrss is in KiB on Linux
  CHECK(grown_kib < 64 * 1024);
}

TEST_CASE("ZeRO-Inference KV offload keeps an fp32 host buffer and expands GQA heads on the CPU",
          "[inference][kv]") {
  const Scenario gqa = load(kNvmeScenario);  // llama-3-70b: 64 q / 8 kv heads
  const Scenario mha = load(kNvmeScenario, {"model.name=opt-66b"});  // 72 heads, MHA
  // transformers fork: torch.empty() without dtype for Llama and OPT (fp32), fp16 for BLOOM.
  CHECK(zero_inference_host_kv(gqa.model).bytes_per_elem == 4.0);
  CHECK(zero_inference_host_kv(mha.model).bytes_per_elem == 4.0);
  CHECK(zero_inference_host_kv(mha.model).fresh_each_generate);
  CHECK_FALSE(zero_inference_host_kv(gqa.model).fresh_each_generate);
  const double seqs = 64, ctx = 1024;
  const CpuAttentionWork g = zero_inference_decode_attention(gqa.model, seqs, ctx);
  const CpuAttentionWork o = zero_inference_decode_attention(mha.model, seqs, ctx);
  // MHA in fp32: the matmuls read the compact buffer, nothing is materialised.
  CHECK(o.fresh_bytes == 0);
  CHECK(o.dram_bytes == Approx(seqs * ctx * 2 * 9216 * 4.0));
  // GQA: compact read (8 KiB/token) + expanded write and read (2 x 64 KiB/token), research 2c.
  CHECK(g.fresh_bytes == Approx(seqs * ctx * 2 * 8192 * 4.0));
  CHECK(g.dram_bytes == Approx(seqs * ctx * (2 * 1024 * 4.0 + 2 * 2 * 8192 * 4.0)));
  // Per FLOP, GQA moves about twice the bytes of MHA (research 2c: ~4.25 vs ~2.0 B/FLOP).
  CHECK(g.dram_bytes / g.flops > 1.9 * (o.dram_bytes / o.flops));
}

TEST_CASE("a GQA model's CPU attention costs more than an MHA model's of similar width",
          "[inference][kv]") {
  // Same host, batch, context: Llama-3-70B (hidden 8192, GQA) against OPT-66B (hidden 9216, MHA).
  // The fork streams more bytes and faults in fresh pages for the GQA model despite its 8x
  // smaller cache (issue 14).
  const Scenario s = load(kNvmeScenario);
  const ExecutionModel em;
  const HostSpec& host = s.hardware.host;
  const Scenario opt = load(kNvmeScenario, {"model.name=opt-66b"});
  const double gqa_s =
      cpu_attention_s(host, em, zero_inference_decode_attention(s.model, 64, 1024)) *
      s.model.layers;
  const double mha_s =
      cpu_attention_s(host, em, zero_inference_decode_attention(opt.model, 64, 1024)) *
      opt.model.layers;
  CHECK(gqa_s > 1.5 * mha_s);
}

TEST_CASE("freeing a fresh allocation runs on one thread, however many faulted it in",
          "[inference][kv]") {
  // The expanded K/V are written by the intra-op pool but freed (munmap) by the Python thread
  // that drops them: more threads shorten the faults, never the free.
  const Scenario s = load(kNvmeScenario);
  const ExecutionModel em;
  const HostSpec& host = s.hardware.host;
  const CpuAttentionWork g = zero_inference_decode_attention(s.model, 64, 1024);
  const double free_s = g.fresh_bytes / units::gbps_to_bytes_per_s(em.fresh_page_free_gbps);
  CHECK(cpu_attention_s(host, em, g) > free_s);
  CHECK(fresh_pages_s(host, em, g.fresh_bytes, 1e6) > free_s);
  CHECK(fresh_pages_s(host, em, g.fresh_bytes, 1.0) > fresh_pages_s(host, em, g.fresh_bytes, 8.0));
  // A host that publishes its own fault-in rate replaces its label's.
  HostSpec measured = host;
  measured.page_fault_gbps = 4 * em.bare_metal_page_fault_gbps;
  CHECK(fresh_pages_s(measured, em, 1e9, 1.0) < fresh_pages_s(host, em, 1e9, 1.0));
}

TEST_CASE("fresh pages fault in at a virtual machine's rate only on a virtual machine",
          "[inference][kv]") {
  const ExecutionModel em;
  HostSpec vm, bare;
  vm.virtual_machine = true;
  bare.virtual_machine = false;
  vm.dram_gbps = bare.dram_gbps = 400;
  const double free_s = 1.0 / em.fresh_page_free_gbps;  // one GB, on one thread
  // One thread's fault-in plus the free, by the label alone.
  CHECK(fresh_pages_s(vm, em, 1e9, 1.0) == Approx(1.0 / em.fresh_page_fault_gbps + free_s));
  CHECK(fresh_pages_s(bare, em, 1e9, 1.0) == Approx(1.0 / em.bare_metal_page_fault_gbps + free_s));
  CHECK(em.bare_metal_page_fault_gbps > em.fresh_page_fault_gbps);
  // A host's own measurement wins over either label.
  vm.page_fault_gbps = bare.page_fault_gbps = 2.0;
  CHECK(fresh_pages_s(vm, em, 1e9, 1.0) == Approx(fresh_pages_s(bare, em, 1e9, 1.0)));
  CHECK(fresh_pages_s(vm, em, 1e9, 1.0) == Approx(1.0 / 2.0 + free_s));
}

TEST_CASE("the prefill KV copy is staged in the buffer's dtype only when it does not block",
          "[inference][kv]") {
  // OPTAttention copies with non_blocking=True (converted on the GPU, staged in fp32);
  // LlamaAttention with non_blocking=async_kv_offload, off by default (staged in fp16).
  const Scenario gqa = load(kNvmeScenario);
  const Scenario mha = load(kNvmeScenario, {"model.name=opt-66b"});
  CHECK(zero_inference_host_kv(mha.model).prefill_staging_bytes_per_elem == 4.0);
  CHECK(zero_inference_host_kv(gqa.model).prefill_staging_bytes_per_elem == 2.0);
  // Llama's buffer is reused, but its prefill still pays the staging temporary's fresh pages:
  // the prefill of a KV-offload run takes longer than with the cache on the GPU by at least the
  // single-threaded fault-in of those fp16 K/V.
  const Scenario kv = load(kNvmeScenario, {"policy.kv_cache=cpu", "policy.weights=cpu",
                                           "workload.batch=64", "workload.prompt_tokens=512"});
  const Scenario gpu_kv = load(
      kNvmeScenario, {"policy.weights=cpu", "workload.batch=64", "workload.prompt_tokens=512"});
  const double staged_bytes =
      64.0 * 512 * kv_bytes_per_token_layer(kv.model, 2.0) * kv.model.layers;
  const ExecutionModel em;
  const double fault_s =
      staged_bytes / units::gbps_to_bytes_per_s(kv.hardware.host.virtual_machine
                                                    ? em.fresh_page_fault_gbps
                                                    : em.bare_metal_page_fault_gbps);
  const sim::RunResult a = sim::simulate(kv), b = sim::simulate(gpu_kv);
  REQUIRE(a.fits);
  REQUIRE(b.fits);
  CHECK(a.get("prefill_s") - b.get("prefill_s") > 0.9 * fault_s);
}

TEST_CASE("the host KV cache is counted at the fork's fp32 with one layer's expanded copy",
          "[inference][kv]") {
  const Scenario s = load(kNvmeScenario, {"policy.kv_cache=cpu", "policy.weights=cpu"});
  const CapacityReport cap = inference_capacity(s, ExecutionModel{});
  double kv = 0, expanded = 0;
  for (const auto& t : cap.tiers)
    if (t.tier == "cpu")
      for (const auto& item : t.items) {
        if (item.what.rfind("kv cache", 0) == 0) kv = item.bytes;
        if (item.what.rfind("kv expanded", 0) == 0) expanded = item.bytes;
      }
  // batch 8, prompt 128 + gen 8 - 1 positions, 80 layers, 8 KV heads x 128 x 2 (K, V) x 4 B.
  CHECK(kv == Approx(8.0 * 135 * 80 * 2 * 1024 * 4.0));
  CHECK(expanded == Approx(8.0 * 135 * 2 * 8192 * 4.0));
}

TEST_CASE("FP8 Llama-70B on one H200 outruns fp16 on two H100s only with native FP8 GEMMs",
          "[inference][stack]") {
  // The two shipped baselines (scenarios/inference/), same workload. Eager PyTorch dequantises
  // 8-bit weights to an fp16 copy before each GEMM; an optimised engine runs them on the FP8
  // tensor cores and streams 1 byte per weight.
  const std::string dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios/inference/";
  auto run = [&](const std::string& file, std::vector<std::string> sets = {}) {
    config::LoadOptions o;
    o.overrides = std::move(sets);
    const sim::RunResult r = sim::simulate(config::load_scenario(dir + file, o));
    REQUIRE(r.fits);
    return r.get("decode_s_per_token");
  };
  const double fp8_h200 = run("llama3-70b-fp8-1xh200-optimized.yaml");
  const double fp16_2xh100 = run("llama3-70b-fp16-2xh100-tp2-optimized.yaml");
  CHECK(fp8_h200 < fp16_2xh100);
  const double fp8_h200_eager =
      run("llama3-70b-fp8-1xh200-optimized.yaml", {"policy.stack=hf-deepspeed"});
  CHECK(fp8_h200_eager > fp16_2xh100);
  // Decode at batch 16 streams the weights: the FP8 step is bounded below by 1 byte per weight
  // over the H200's memory roofline.
  const Scenario s = test::load_yaml(test::slurp(dir + "llama3-70b-fp8-1xh200-optimized.yaml"));
  const double weight_s = model_weight_bytes(s.model, s.policy) /
                          (s.hardware.gpu.hbm_gbps * units::kGB * ExecutionModel{}.hbm_efficiency);
  CHECK(fp8_h200 >= weight_s);
  CHECK(fp8_h200 < 1.3 * weight_s);
}

TEST_CASE("decode attention that reads K/V per query head costs GQA models, not MHA ones",
          "[inference][stack]") {
  // TensorRT-LLM v0.6's masked MHA kernel reads each K/V head once per query head; the optimized
  // stack (XQA, FlashAttention-2) once per KV head. Llama-3-70B has 64 query / 8 KV heads.
  auto step = [](const std::string& model, const std::string& stack) {
    const Scenario s = load(std::string(R"(
name: t
hardware: {gpu: {model: H200, count: 1}}
model: {name: )") + model + R"(}
workload: {kind: inference, batch: 32, prompt_tokens: 2048, gen_tokens: 4}
policy: {stack: )" + stack + R"(, weight_bits: 8, kv_bits: 8}
)");
    const sim::RunResult r = sim::simulate(s);
    REQUIRE(r.fits);
    return r.get("decode_s_per_token");
  };
  CHECK(step("llama-3-70b", "trtllm-v0.6") > 1.5 * step("llama-3-70b", "optimized"));
  // With MHA the reads are the same; v0.6 differs only by running its GEMMs' math after their
  // weight stream (ExecutionStack::gemm_hides_weight_reads), small at 32 tokens.
  CHECK(step("llama-2-7b", "trtllm-v0.6") > step("llama-2-7b", "optimized"));
  CHECK(step("llama-2-7b", "trtllm-v0.6") < 1.1 * step("llama-2-7b", "optimized"));
  // v0.7 is v0.6 with XQA: the GQA model's step shrinks by the repeated reads, the MHA one's
  // not at all.
  CHECK(step("llama-3-70b", "trtllm-v0.6") > 1.5 * step("llama-3-70b", "trtllm-v0.7"));
  CHECK(step("llama-2-7b", "trtllm-v0.7") == Approx(step("llama-2-7b", "trtllm-v0.6")));
}

TEST_CASE("a module's reads reserved in one step give the timeline of an event per tensor",
          "[inference][nvme]") {
  // fetch_module_reserved must reproduce fetch_module's reservations exactly: same metrics and
  // the same busy time per resource, only fewer events. So must the direct path (run_direct),
  // which works out the fetcher's and compute's timelines without events, and which a trace
  // turns off: each case runs three ways. The cases cover both I/O paths, tensors split between
  // NVMe and host DRAM (whose host copies interleave with the AIO bounce copies on the link),
  // pageable host memory, one to many swap buffers and prefetch depths from none up, weights
  // resident on the GPU, and GPU batches sharing a fetch (flexgen-block).
  // kNvmeScenario on a smaller model, so that sixty runs stay quick under the sanitizers.
  const std::vector<std::string> small = {"model.name=llama-3-8b", "workload.batch=4",
                                          "workload.prompt_tokens=64", "workload.gen_tokens=4"};
  const std::vector<std::vector<std::string>> cases = {
      {"policy.io_path=gds"},
      {"policy.io_path=aio"},
      {"policy.io_path=aio", "policy.aio.swap_buffers=1", "policy.prefetch_layers=0"},
      {"policy.io_path=aio", "policy.aio.swap_buffers=2", "policy.prefetch_layers=2"},
      {"policy.io_path=aio", "hardware.nvme.count=1", "workload.batch=64"},
      {"policy.io_path=aio", "policy.weights={cpu: 0.5, nvme: 0.5}"},
      {"policy.io_path=aio", "policy.weights={cpu: 0.5, nvme: 0.5}", "policy.pin_memory=false"},
      {"policy.io_path=gds", "policy.weights={cpu: 0.3, nvme: 0.7}", "policy.aio.swap_buffers=1"},
      {"policy.io_path=aio", "policy.weights={gpu: 0.4, nvme: 0.6}", "policy.prefetch_layers=3"},
      {"policy.weights=cpu", "policy.pin_memory=false"},
      {"policy.weights=gpu"},
      {"policy.io_path=aio", "policy.schedule=flexgen-block", "policy.gpu_batches=2"},
      {"policy.io_path=gds", "policy.aio.swap_buffers=1", "policy.prefetch_layers=0"},
      {"policy.weights=cpu", "policy.stack=hf-deepspeed-0.7"},
      {"policy.io_path=aio", "policy.weights={cpu: 0.5, nvme: 0.5}",
       "policy.stack=hf-deepspeed-0.7"},
      // The gather copies each swap buffer to the GPU (hf-deepspeed-0.7): nothing in flight.
      {"policy.io_path=aio", "policy.stack=hf-deepspeed-0.7"},
      {"policy.io_path=aio", "policy.stack=hf-deepspeed-0.7", "policy.prefetch_layers=2"},
      // Tensor parallelism: each layer's step is followed by its all-reduces on the peer link,
      // over NVLink (A100) and over PCIe (L40S), with the weights streamed or resident.
      {"hardware.gpu.count=2", "policy.parallelism.tensor=2", "policy.io_path=aio"},
      {"hardware.gpu.count=2", "policy.parallelism.tensor=2", "policy.weights=cpu"},
      {"hardware.gpu.count=4", "policy.parallelism.tensor=4", "policy.weights=gpu",
       "policy.gpu_batches=2"},
      // An MoE whose layers differ: each kind of layer computes as its own (layer_model), on
      // every path, with its experts routed or all fetched.
      {"model.name=glm-4.5-air", "policy.io_path=aio", "policy.moe_fetch=routed"},
      {"model.name=glm-4.5-air", "policy.weights=cpu"},
      {"hardware.gpu.model=L40S", "hardware.gpu.count=2", "policy.parallelism.tensor=2",
       "policy.weights={gpu: 0.5, cpu: 0.5}"},
  };
  for (const auto& sets : cases) {
    std::vector<std::string> all = small;
    all.insert(all.end(), sets.begin(), sets.end());
    const Scenario s = load(kNvmeScenario, all);
    // Each with the time breakdown (a trace implies it): its phase_* metrics come from the
    // reservations too, and keeping the spans leaves the direct path on.
    sim::SimOptions direct_path, per_tensor, traced;
    direct_path.breakdown = true;
    per_tensor.breakdown = true;
    per_tensor.event_per_tensor = true;
    traced.trace = true;
    const sim::RunResult direct = sim::simulate(s, direct_path),
                         reserved = sim::simulate(s, traced),
                         reference = sim::simulate(s, per_tensor);
    std::string label;
    for (const auto& set : sets) label += set + " ";
    INFO(label);
    REQUIRE(direct.fits);
    for (const sim::RunResult* fast : {&direct, &reserved}) {
      INFO((fast == &direct ? "direct" : "reserved, with events"));
      REQUIRE(fast->metrics.size() == reference.metrics.size());
      for (std::size_t i = 0; i < fast->metrics.size(); ++i) {
        INFO(fast->metrics[i].name);
        CHECK(fast->metrics[i].value == reference.metrics[i].value);
      }
      REQUIRE(fast->utilization.size() == reference.utilization.size());
      for (std::size_t i = 0; i < fast->utilization.size(); ++i)
        CHECK(fast->utilization[i].busy_s == reference.utilization[i].busy_s);
      CHECK(fast->bottleneck == reference.bottleneck);
    }
    CHECK(reserved.events <= reference.events);  // equal when nothing is fetched
    CHECK(direct.events == 0);  // the engine ran no process: the direct path was taken
  }
}

namespace {

// OPT-6.7B on L40S GPUs (PCIe Gen4, no NVLink), weights in GPU memory, a short generation.
const char* kDataParallel = R"(
name: dp
hardware:
  gpu: {model: L40S, count: 1}
  host: {model: generic-2s-ddr5, dram_gb: 512}
model: {name: opt-6.7b}
workload: {kind: inference, batch: 4, prompt_tokens: 64, gen_tokens: 6}
policy: {weights: gpu, kv_cache: gpu}
)";

Scenario data_parallel(int ranks, int batch_per_rank, std::vector<std::string> sets = {}) {
  sets.push_back("hardware.gpu.count=" + std::to_string(ranks));
  sets.push_back("workload.batch=" + std::to_string(ranks * batch_per_rank));
  if (ranks > 1) sets.push_back("policy.parallelism.data=" + std::to_string(ranks));
  return load(kDataParallel, std::move(sets));
}

// Bytes every decode pass gathers: the parameters above ZeRO-3's persistence threshold.
double partitioned_bytes(const Scenario& s) {
  double bytes = 0;
  for (const auto& mod : weight_modules(s.model, s.policy))
    for (const auto& t : mod.tensors)
      if (!zero3_persistent(t, s.policy.zero3)) bytes += t.bytes;
  return bytes;
}

}  // namespace

TEST_CASE("data-parallel ranks with a free gather run like that many single GPUs",
          "[inference][zero3]") {
  const sim::RunResult one = sim::simulate(data_parallel(1, 4));
  // NVLink at a rate no transfer notices: the gathers cost nothing.
  const sim::RunResult four =
      sim::simulate(data_parallel(4, 4, {"hardware.gpu.nvlink_gbps=1e9"}));
  REQUIRE(one.fits);
  REQUIRE(four.fits);
  CHECK(four.get("decode_s_per_token") == Approx(one.get("decode_s_per_token")).epsilon(0.01));
  CHECK(four.get("throughput_tokens_per_s") ==
        Approx(4 * one.get("throughput_tokens_per_s")).epsilon(0.01));
  // Energy counts all four GPUs: four times one GPU's average draw.
  CHECK(four.get("energy_j_gpu") / four.get("total_s") ==
        Approx(4 * one.get("energy_j_gpu") / one.get("total_s")).epsilon(0.03));
}

TEST_CASE("over PCIe a decode pass takes the (N-1)/N gathered bytes over each GPU's link",
          "[inference][zero3]") {
  for (int n : {2, 4, 6}) {
    const Scenario s = data_parallel(n, 1);
    const sim::RunResult r = sim::simulate(s);
    REQUIRE(r.fits);
    const double link_bps =
        units::gbps_to_bytes_per_s(h2d_gbps(s.hardware.gpu, s.hardware.host));
    const double gather_s = (n - 1.0) / n * partitioned_bytes(s) / link_bps;
    // One token per rank is far too little compute to hide anything: the link sets the pace.
    CHECK(r.get("decode_s_per_token") >= gather_s * 0.999);
    CHECK(r.get("decode_s_per_token") <= gather_s * 1.05);
    CHECK(r.bottleneck == "pcie-h2d");
    // Every pass (prefill and each decode step) gathers every partitioned parameter.
    CHECK(r.get("allgather_bytes") ==
          Approx(s.inference.gen_tokens * (n - 1.0) / n * partitioned_bytes(s)));
  }
  // A single GPU gathers nothing and reports no gather metric.
  CHECK_FALSE(sim::simulate(data_parallel(1, 1)).has("allgather_bytes"));
}

TEST_CASE("ranks behind one PCIe switch contend for its uplink when their weights are offloaded",
          "[inference][zero3]") {
  const std::vector<std::string> offload = {"policy.weights=cpu"};
  std::vector<std::string> switched = offload;
  switched.push_back("hardware.host.gpus_per_pcie_switch=4");
  switched.push_back("hardware.host.pcie_switch_uplink_gbps=12.5");
  const Scenario direct_s = data_parallel(4, 1, offload);
  const sim::RunResult direct = sim::simulate(direct_s);
  const sim::RunResult shared = sim::simulate(data_parallel(4, 1, switched));
  REQUIRE(direct.fits);
  REQUIRE(shared.fits);
  const double layer_bytes = partitioned_bytes(direct_s);  // per pass, all layers
  const double link_bps =
      units::gbps_to_bytes_per_s(h2d_gbps(direct_s.hardware.gpu, direct_s.hardware.host));
  // Direct attach: every rank copies a quarter of each layer over its own link and gathers the
  // other three quarters over it: the whole model per link per pass.
  // (Per-tensor fetch overheads and the ends of each pass add a little.)
  CHECK(direct.get("decode_s_per_token") >= layer_bytes / link_bps * 0.999);
  CHECK(direct.get("decode_s_per_token") <= layer_bytes / link_bps * 1.1);
  // Behind one switch with an uplink of half a GPU link, the uplink carries all four quarters:
  // the whole model per pass at half the rate, twice the time, whatever the GPU links could do.
  // On DeepSpeed's one gather stream (model/stack.cpp zero3_gather_serial_stream) each module's
  // all-gather, three quarters of it over the rank's own link, follows its copies and comes
  // before the next module's: a pass takes both.
  const double uplink_s = layer_bytes / units::gbps_to_bytes_per_s(12.5);
  const double gather_s = 0.75 * layer_bytes / link_bps;
  CHECK(shared.get("decode_s_per_token") >= (uplink_s + gather_s) * 0.999);
  CHECK(shared.get("decode_s_per_token") <= (uplink_s + gather_s) * 1.1);
  CHECK(shared.bottleneck == "pcie-switch");
  // A stack whose copies overlap the all-gathers takes the uplink's time alone.
  switched.push_back("policy.stack=optimized");
  const sim::RunResult overlapped = sim::simulate(data_parallel(4, 1, switched));
  REQUIRE(overlapped.fits);
  CHECK(overlapped.get("decode_s_per_token") >= uplink_s * 0.999);
  CHECK(overlapped.get("decode_s_per_token") <= uplink_s * 1.1);
  CHECK(overlapped.bottleneck == "pcie-switch");
}

TEST_CASE("DeepSpeed's data-parallel gather copies the partitions, then all-gathers, in series",
          "[inference][zero3]") {
  // Two ranks over NVLink, weights in host DRAM: each rank copies half of every partitioned
  // parameter over its PCIe link, then all-gathers the other half over NVLink. On DeepSpeed
  // (model/stack.cpp zero3_gather_serial_stream) the blocking partition copies and the
  // all-gather run on one stream, so a module's copies wait for the previous module's
  // all-gather: at one sequence per rank, where compute hides nothing, a pass takes the copy
  // and the gather of every module, one after another. A stack with asynchronous copies
  // overlaps the next module's copies with this one's all-gather (the longer of the two).
  const std::vector<std::string> sets = {"policy.weights=cpu", "hardware.gpu.nvlink_gbps=25"};
  const Scenario s = data_parallel(2, 1, sets);
  REQUIRE(s.policy.stack.zero3_gather_serial_stream);
  const sim::RunResult serial = sim::simulate(s);
  std::vector<std::string> async_sets = sets;
  async_sets.push_back("policy.stack=optimized");
  const Scenario async_s = data_parallel(2, 1, async_sets);
  REQUIRE_FALSE(async_s.policy.stack.zero3_gather_serial_stream);
  const sim::RunResult overlapped = sim::simulate(async_s);
  REQUIRE(serial.fits);
  REQUIRE(overlapped.fits);
  const double bytes = partitioned_bytes(s);
  const double copy_s =
      bytes / 2 / units::gbps_to_bytes_per_s(h2d_gbps(s.hardware.gpu, s.hardware.host));
  const double gather_s =
      bytes / 2 / units::gbps_to_bytes_per_s(gpu_peer_gbps(s.hardware.gpu, s.hardware.host));
  // (Per-tensor fetch overheads and the ends of each pass add a little.)
  CHECK(serial.get("decode_s_per_token") >= (copy_s + gather_s) * 0.999);
  CHECK(serial.get("decode_s_per_token") <= (copy_s + gather_s) * 1.1);
  CHECK(overlapped.get("decode_s_per_token") <= std::max(copy_s, gather_s) * 1.1);
}

namespace {

// Two L40S ranks (no NVLink) swapping OPT-6.7B in from one drive, one sequence each.
const char* kDataParallelNvme = R"(
name: dpn
hardware:
  gpu: {model: L40S, count: 2}
  host: {model: generic-2s-ddr5, dram_gb: 512}
  nvme: {model: generic-gen4, count: 1}
model: {name: opt-6.7b}
workload: {kind: inference, batch: 2, prompt_tokens: 64, gen_tokens: 6}
policy: {weights: nvme, kv_cache: gpu, io_path: aio, parallelism: {data: 2}}
)";

}  // namespace

TEST_CASE("DeepSpeed v0.7's data-parallel ranks copy what they read only after the read",
          "[inference][zero3]") {
  // v0.7.2 all_gather_coalesced swaps a module's partitions in and waits, then copies each out
  // of its swap buffer (blocking), then all-gathers (model/stack.cpp hf-deepspeed-0.7), for any
  // world size: per tensor the array's read of every rank's partition, then this rank's copy
  // of its half, then its all-gather.
  const Scenario s = load(kDataParallelNvme, {"policy.stack=hf-deepspeed-0.7"});
  const sim::RunResult serial = sim::simulate(s);
  const sim::RunResult overlapped = sim::simulate(load(kDataParallelNvme));
  REQUIRE(serial.fits);
  REQUIRE(overlapped.fits);
  const auto modules = weight_modules(s.model, s.policy);
  const WeightStreamPoint pt = weight_stream_point(s, ExecutionModel{}, modules);
  REQUIRE(pt.bounce_in_gather);
  double read_s = 0, copy_s = 0;
  for (const auto& mod : modules)
    for (const auto& t : module_stream(pt, mod).tensors) {
      read_s += t.read_s;
      copy_s += t.nvme_link_s;
    }
  const double gather_s = partitioned_bytes(s) / 2 /
                          units::gbps_to_bytes_per_s(h2d_gbps(s.hardware.gpu, s.hardware.host));
  // Each tensor's all-gather runs while the next tensor is read (fetch_sub_module issues the
  // swap-ins after launching it); the next copy waits for it. So the pass takes at least every
  // read and copy, and at most those and the all-gathers. (Per-tensor swap-in overheads and the
  // ends of each pass add a little.)
  CHECK(serial.get("decode_s_per_token") >= (read_s + copy_s) * 0.999);
  CHECK(serial.get("decode_s_per_token") <= (read_s + copy_s + gather_s) * 1.1);
  // Over a peer link slow enough that each all-gather takes half of the next read, the
  // all-gathers still hide behind the reads; a gather that blocked the next read would add them.
  const Scenario slow_s =
      load(kDataParallelNvme, {"policy.stack=hf-deepspeed-0.7", "hardware.gpu.nvlink_gbps=6"});
  const sim::RunResult slow = sim::simulate(slow_s);
  REQUIRE(slow.fits);
  const double slow_gather_s = partitioned_bytes(s) / 2 / units::gbps_to_bytes_per_s(6);
  REQUIRE(slow_gather_s > 0.3 * read_s);
  const ExecutionModel em;
  double overhead_s = 0;
  for (const auto& mod : modules)
    overhead_s +=
        double(module_stream(pt, mod).nvme_reads) * (em.fetch_overhead_s + em.swap_in_overhead_s);
  CHECK(slow.get("decode_s_per_token") >= (read_s + copy_s) * 0.999);
  CHECK(slow.get("decode_s_per_token") <= read_s + copy_s + 1.5 * overhead_s + 0.1 * slow_gather_s);
  // DeepSpeed's later gather copies a landed buffer while the next partition is read.
  CHECK(overlapped.get("decode_s_per_token") < serial.get("decode_s_per_token") - 0.5 * copy_s);
}

TEST_CASE("data-parallel ranks divide the KV cache and activations but not the host copy",
          "[inference][zero3]") {
  const Scenario s = data_parallel(6, 2, {"policy.weights=cpu"});
  const CapacityReport cap = inference_capacity(s, ExecutionModel{});
  const Scenario single = data_parallel(1, 12, {"policy.weights=cpu"});
  const CapacityReport one = inference_capacity(single, ExecutionModel{});
  const auto tier = [](const CapacityReport& r, const std::string& name) {
    for (const auto& t : r.tiers)
      if (t.tier == name) return t;
    return TierMemory{};
  };
  const auto item = [](const TierMemory& t, const std::string& what) {
    for (const auto& i : t.items)
      if (i.what.rfind(what, 0) == 0) return i.bytes;
    return 0.0;
  };
  // One copy of the model on the host either way, less the persistent parameters.
  CHECK(item(tier(cap, "cpu"), "weights") == Approx(partitioned_bytes(s)));
  CHECK(item(tier(cap, "gpu"), "kv cache") == Approx(item(tier(one, "gpu"), "kv cache") / 6));
}

TEST_CASE("a step's host work is paid once per pass, dominates batch 1 and fades at large batch",
          "[inference][step]") {
  // Llama-3-8B resident on one H100, on the default (eager) stack, whose execution model this
  // test sets: 1 ms per pass and 10 us per sequence.
  const char* yaml = R"(
name: t
hardware:
  gpu: {model: H100-SXM, count: 1}
  host: {model: generic-2s-ddr5}
model: {name: llama-3-8b}
workload: {kind: inference, batch: 1, prompt_tokens: 128, gen_tokens: 8}
policy: {weights: gpu, kv_cache: gpu}
)";
  sim::SimOptions none, host;
  none.exec.step_overhead_s = 0;
  none.exec.step_overhead_per_sequence_s = 0;
  host.exec.step_overhead_s = 1e-3;
  host.exec.step_overhead_per_sequence_s = 10e-6;
  double share_at_1 = 0;
  for (const int batch : {1, 256}) {
    INFO("batch " << batch);
    // Kernels within the board's power limit (memory traffic drawing nothing), so that no step
    // runs at a lower clock: a host wait in a throttled step raises its clock
    // (model/power.hpp gpu_power_limited) and would hide part of the charge counted here.
    const Scenario s = load(yaml, {"workload.batch=" + std::to_string(batch),
                                   "hardware.gpu.memory_power_fraction=0"});
    const sim::RunResult a = sim::simulate(s, none), b = sim::simulate(s, host);
    REQUIRE(a.fits);
    const double per_pass = 1e-3 + 10e-6 * batch;
    // The prefill and each of the 7 further decode steps: one charge each.
    CHECK(b.get("ttft_s") - a.get("ttft_s") == Approx(per_pass));
    CHECK(b.get("total_s") - a.get("total_s") == Approx(8 * per_pass));
    // The fixed part's share of the run: large at batch 1, small where the batch's own work
    // (and the per-sequence part) grows.
    sim::SimOptions fixed = host;
    fixed.exec.step_overhead_per_sequence_s = 0;
    const double with_fixed = sim::simulate(s, fixed).get("total_s");
    const double share = (with_fixed - a.get("total_s")) / with_fixed;
    if (batch == 1) share_at_1 = share;
    else CHECK(share < share_at_1 / 2);
    // The per-tensor path (event per tensor) charges it as the direct path does.
    sim::SimOptions per_tensor = host;
    per_tensor.event_per_tensor = true;
    CHECK(sim::simulate(s, per_tensor).get("total_s") == b.get("total_s"));
  }
  // Weights streamed from host DRAM (the event-driven fetch path) pay it once per pass too.
  const Scenario cpu = load(yaml, {"policy.weights=cpu", "policy.prefetch_layers=0"});
  sim::SimOptions cpu_per_tensor = host;
  cpu_per_tensor.event_per_tensor = true;
  const double direct = sim::simulate(cpu, host).get("total_s");
  CHECK(direct - sim::simulate(cpu, none).get("total_s") == Approx(8 * (1e-3 + 10e-6)));
  CHECK(sim::simulate(cpu, cpu_per_tensor).get("total_s") == direct);
}

TEST_CASE(
    "DeepSpeed v0.7's swap-in prefetch keeps as many reads beside the copies as buffers allow",
    "[inference][nvme][zero3]") {
  // One GPU, OPT weights on NVMe, DeepSpeed v0.7 (hf-deepspeed-0.7: the gather copies each swap
  // buffer to the GPU). With prefetching the coordinator's hooks issue the next swap-ins while
  // the copies run (model/zero3_swap.hpp), as far as the swap buffers go: parameters gathered
  // ahead hold theirs, so at the default 5 buffers the reads go about one at a time, and more
  // buffers let more of them run beside the copies. Without prefetching every read is waited
  // for in its own hook, whatever the buffers.
  const std::vector<std::string> small = {
      "model.name=opt-6.7b",   "workload.batch=4",   "workload.prompt_tokens=16",
      "workload.gen_tokens=3", "policy.io_path=aio", "policy.stack=hf-deepspeed-0.7",
      "hardware.nvme.count=1"};
  const auto run = [&](std::vector<std::string> sets) {
    std::vector<std::string> all = small;
    all.insert(all.end(), sets.begin(), sets.end());
    const sim::RunResult r = sim::simulate(load(kNvmeScenario, all));
    REQUIRE(r.fits);
    return r.get("total_s");
  };
  const double five = run({}), many = run({"policy.aio.swap_buffers=16"});
  CHECK(many < five);
  const double serial = run({"policy.prefetch_layers=0"});
  CHECK(run({"policy.prefetch_layers=0", "policy.aio.swap_buffers=16"}) == serial);
  CHECK(five <= serial);
}

TEST_CASE("the engine's uncontended fetch takes the weight-stream model's module time",
          "[inference][weight_stream]") {
  // Without prefetch (one slot) and with the KV cache on the GPU, fetch and compute alternate:
  // each module's fetch runs alone, then its compute. So the run takes, beyond the same run with
  // the weights resident, each pass's sum of the modules' fetches, which the weight-stream model
  // (model/weight_stream.hpp module_stream_time, the serving workload's rule) works out
  // analytically. Host-DRAM weights, pinned and pageable: the same to rounding. GDS from NVMe:
  // the engine's fetcher issues each swap-in only after the read before it has landed and its
  // own work is done (fetch_module), but a host-DRAM tensor after a read (Llama-3-8B's k and v
  // projections, under DeepSpeed's 16 MiB swap minimum) goes on without waiting, so it is
  // faster by up to those tensors' overheads.
  const std::vector<std::string> small = {"model.name=llama-3-8b", "workload.batch=4",
                                          "workload.prompt_tokens=64", "workload.gen_tokens=3",
                                          "policy.prefetch_layers=0"};
  const auto with = [&](std::vector<std::string> sets) {
    std::vector<std::string> all = small;
    all.insert(all.end(), sets.begin(), sets.end());
    return load(kNvmeScenario, all);
  };
  const sim::RunResult resident = sim::simulate(with({"policy.weights=gpu"}));
  REQUIRE(resident.fits);
  const ExecutionModel em;
  // DeepSpeed v0.7's gather copies (model/stack.cpp hf-deepspeed-0.7) hold the fetcher after
  // each host copy, in the engine as in the weight-stream model.
  for (const char* stack : {"hf-deepspeed", "hf-deepspeed-0.7"})
    for (const char* pinned : {"true", "false"}) {
      INFO("host DRAM, pinned " << pinned << ", " << stack);
      const Scenario s = with({"policy.weights=cpu", std::string("policy.pin_memory=") + pinned,
                               std::string("policy.stack=") + stack});
      const auto modules = weight_modules(s.model, s.policy);
      const WeightStreamPoint pt = weight_stream_point(s, em, modules);
      double pass_s = 0, copies_s = 0;
      for (const auto& mod : modules) {
        const ModuleStream m = module_stream(pt, mod);
        pass_s += module_stream_time(pt, m).time_s;
        for (const TensorStream& t : m.tensors) copies_s += t.gather_copy_s;
      }
      if (std::string(stack) == "hf-deepspeed") CHECK(copies_s == 0);
      else CHECK(copies_s > 0);
      const sim::RunResult r = sim::simulate(s);
      REQUIRE(r.fits);
      CHECK(r.get("total_s") - resident.get("total_s") == Approx(3 * pass_s).epsilon(1e-9));
    }
  {
    // DeepSpeed v0.7 from NVMe through bounce buffers (model/stack.cpp hf-deepspeed-0.7): the
    // gather copies each swap buffer to the GPU, so every tensor's read, its copy and the
    // gather's device copies run in series, in the engine as in the weight-stream model. On the
    // default stack the bounce copy overlaps the next read, and the fetch is shorter.
    const Scenario s = with({"policy.weights=nvme", "policy.io_path=aio",
                             "policy.stack=hf-deepspeed-0.7"});
    const auto modules = weight_modules(s.model, s.policy);
    const WeightStreamPoint pt = weight_stream_point(s, em, modules);
    REQUIRE(pt.bounce_in_gather);
    double pass_s = 0, copies_s = 0;
    for (const auto& mod : modules) {
      const ModuleStream m = module_stream(pt, mod);
      pass_s += module_stream_time(pt, m).time_s;
      for (const TensorStream& t : m.tensors) copies_s += t.bounce_gather_copy_s;
    }
    CHECK(copies_s > 0);
    const sim::RunResult r = sim::simulate(s);
    REQUIRE(r.fits);
    CHECK(r.get("total_s") - resident.get("total_s") == Approx(3 * pass_s).epsilon(1e-9));
    const sim::RunResult overlapped =
        sim::simulate(with({"policy.weights=nvme", "policy.io_path=aio"}));
    CHECK(overlapped.get("total_s") < r.get("total_s") - 3 * copies_s);
  }
  {
    const Scenario s = with({"policy.weights=nvme", "policy.io_path=gds"});
    const auto modules = weight_modules(s.model, s.policy);
    const WeightStreamPoint pt = weight_stream_point(s, em, modules);
    double pass_s = 0, overheads_s = 0;
    for (const auto& mod : modules) {
      const ModuleStream m = module_stream(pt, mod);
      pass_s += module_stream_time(pt, m).time_s;
      for (const TensorStream& t : m.tensors)
        if (t.nvme_bytes <= 0) overheads_s += em.fetch_overhead_s;
    }
    const sim::RunResult r = sim::simulate(s);
    REQUIRE(r.fits);
    const double fetch_s = r.get("total_s") - resident.get("total_s");
    CHECK(fetch_s <= 3 * pass_s * (1 + 1e-9));
    CHECK(fetch_s >= 3 * (pass_s - overheads_s) * (1 - 1e-9));
  }
}

TEST_CASE("DeepSpeed v0.7's gather copies hold data-parallel ranks' fetch too",
          "[inference][zero3][stack]") {
  // Two data-parallel ranks, OPT-6.7B from host DRAM, no prefetch and no persistence: each
  // Linear's hook gathers weight and bias in one call, so v0.7's all_gather_coalesced copies a
  // rank's partition into the flat buffer and each parameter out of it (model/zero3_swap.hpp
  // zero3_v07_gather_copies: 1 + 1/2 per byte). On the serial gather stream the fetch waits for
  // them after each partition copy; the default stack makes none, and nothing else differs.
  const char* yaml = R"(
name: t
hardware:
  gpu: {model: A100-80GB, count: 2}
  host: {model: generic-2s-ddr5}
model: {name: opt-6.7b}
workload: {kind: inference, batch: 8, prompt_tokens: 16, gen_tokens: 3}
policy:
  weights: cpu
  kv_cache: gpu
  parallelism: {data: 2}
  zero3: {param_persistence_threshold: 0, prefetch_bucket_size: 0}
)";
  const Scenario v07 = load(yaml, {"policy.stack=hf-deepspeed-0.7"});
  const ExecutionModel em;
  const auto modules = weight_modules(v07.model, v07.policy);
  const WeightStreamPoint pt = weight_stream_point(v07, em, modules);
  double copies_s = 0;
  for (const auto& mod : modules)
    for (const TensorStream& t : module_stream(pt, mod).tensors) copies_s += t.gather_copy_s;
  REQUIRE(copies_s > 0);
  const sim::RunResult r07 = sim::simulate(v07);
  const sim::RunResult plain = sim::simulate(load(yaml, {"policy.stack=hf-deepspeed"}));
  REQUIRE(r07.fits);
  REQUIRE(plain.fits);
  // Three passes, each fetch-bound at this batch: every pass waits for all of its copies.
  const double added_s = r07.get("total_s") - plain.get("total_s");
  CHECK(added_s > 0.9 * 3 * copies_s);
  CHECK(added_s < 1.1 * 3 * copies_s);
}

TEST_CASE("a power limit slows compute-bound prefill, not memory-bound decode", "[inference][power]") {
  // Llama-3-8B resident on one 700 W H100: prefill GEMMs at the full math rate would draw the
  // whole 700 W, decode steps streaming weights ~65% of the range (~500 W).
  const char* yaml = R"(
name: t
hardware:
  gpu: {model: H100-SXM, count: 1}
  host: {model: generic-2s-ddr5}
model: {name: llama-3-8b}
workload: {kind: inference, batch: 8, prompt_tokens: 2048, gen_tokens: 16}
policy: {weights: gpu, kv_cache: gpu}
)";
  const sim::RunResult full = sim::simulate(load(yaml));
  const sim::RunResult capped = sim::simulate(load(yaml, {"hardware.gpu.power_limit_w=600"}));
  // Limited to 600 W the prefill's clock drops (about (490 / 590)^(1/3) = 0.94 for pure math).
  CHECK(capped.get("ttft_s") > 1.03 * full.get("ttft_s"));
  CHECK(capped.get("ttft_s") < 1.10 * full.get("ttft_s"));
  // Decode stays below the limit: the same time per token.
  CHECK(capped.get("decode_s_per_token") == Approx(full.get("decode_s_per_token")).epsilon(1e-3));
  // No second of the run draws above the limit.
  CHECK(capped.get("gpu_avg_power_w") <= 600.0);
  CHECK(capped.get("gpu_avg_power_w") < full.get("gpu_avg_power_w"));
}
TEST_CASE("fused prefill attention runs its causal half at the kernel's rate; eager and decode do "
          "not change",
          "[inference][attention]") {
  // One 16,384-token prompt of Llama-3.1-8B on an H100 SXM, weights on the GPU.
  const char* yaml = R"(
name: fa
hardware:
  gpu: {model: H100-SXM, count: 1}
model: {name: llama-3.1-8b, max_positions: 32768}
workload: {kind: inference, batch: 1, prompt_tokens: 16384, gen_tokens: 4}
policy: {weights: gpu, kv_cache: gpu, stack: optimized}
)";
  const Scenario fa = load(yaml);
  Scenario gemm_rate = fa;
  gemm_rate.policy.stack.prefill_attention_kernel = FusedAttentionKernel::kUnpublished;
  const sim::RunResult with_fa = sim::simulate(fa);
  const sim::RunResult at_gemm = sim::simulate(gemm_rate);
  REQUIRE(with_fa.fits);
  // The causal attention's math at FlashAttention-3's 616 TFLOPS instead of the GEMMs' 730 (the
  // board's measured bf16 rate): 32 layers x the difference, before any power-limit slowdown
  // (which can only lengthen it).
  const LlmSpec& m = fa.model;
  const ExecutionModel em = with_stack(ExecutionModel{}, fa.policy.stack);
  const PrefillChunk prompt{16384, 0, 1};
  const double extra_s =
      m.layers * (prefill_attention_s(m, fa.hardware.gpu, em, fa.policy.stack, prompt, 1) -
                  prefill_attention_s(m, fa.hardware.gpu, em, gemm_rate.policy.stack, prompt, 1));
  REQUIRE(extra_s > 0.015);
  CHECK(with_fa.get("prefill_s") - at_gemm.get("prefill_s") >= 0.99 * extra_s);
  CHECK(with_fa.get("prefill_s") - at_gemm.get("prefill_s") <= 1.3 * extra_s);
  // Decode steps keep their cost.
  CHECK(with_fa.get("decode_s_per_token") == Approx(at_gemm.get("decode_s_per_token")));
  // Eager PyTorch computes the whole score matrix at the GEMM rate: the table does not apply.
  // (A 2,048-token prompt: eager attention's 16K x 16K score matrices would not fit.)
  Scenario eager = load(yaml, {"policy.stack=hf-deepspeed", "workload.prompt_tokens=2048"});
  Scenario eager_fa = eager;
  eager_fa.policy.stack.prefill_attention_kernel = FusedAttentionKernel::kFlashAttention;
  const sim::RunResult eager_r = sim::simulate(eager);
  REQUIRE(eager_r.fits);
  CHECK(eager_r.get("prefill_s") > 0);
  CHECK(eager_r.get("prefill_s") == sim::simulate(eager_fa).get("prefill_s"));
}

}  // namespace sim_workloads_inference_inference_test

namespace sim_workloads_inference_inference_test {

TEST_CASE("past a sliding window a decode step reads the window on the sliding layers",
          "[inference][window]") {
  // Llama-3-8B on one H100, everything on the GPU, 16 sequences decoding at 12,000-12,031 tokens
  // of context.
  const char* yaml = R"(
name: w
hardware: {gpu: {model: H100-SXM, count: 1}}
model: {name: llama-3-8b}
workload: {kind: inference, batch: 16, prompt_tokens: 12000, gen_tokens: 32}
policy: {weights: gpu, kv_cache: gpu, stack: optimized}
)";
  const auto decode = [&](std::vector<std::string> sets) {
    sets.push_back("model.max_positions=16384");
    return sim::simulate(load(yaml, sets)).get("decode_s");
  };
  const double full = decode({});
  // A window of 1024 tokens on every layer: the KV reads shrink twelvefold, the GEMMs stay.
  const double all_slide = decode({"model.sliding_window=1024"});
  CHECK(all_slide < 0.8 * full);
  // Half the layers attending fully: between the two.
  const double half = decode({"model.sliding_window=1024", "model.full_attention_layers=16"});
  CHECK(half > all_slide);
  CHECK(half < full);
  // A window wider than the sequence changes nothing.
  CHECK(decode({"model.sliding_window=16384"}) == full);
  // transformers' cache keeps every token and its masked attention computes over all of them.
  CHECK(decode({"model.sliding_window=1024", "policy.stack=hf-sdpa"}) ==
        decode({"policy.stack=hf-sdpa"}));
  // full_attention_layers needs a window, and cannot exceed the layers.
  CHECK_THROWS_WITH(load(yaml, {"model.full_attention_layers=8"}),
                    Catch::Contains("model.full_attention_layers") &&
                        Catch::Contains("set model.sliding_window"));
  CHECK_THROWS_WITH(load(yaml, {"model.sliding_window=1024", "model.full_attention_layers=33"}),
                    Catch::Contains("model.full_attention_layers") &&
                        Catch::Contains("exceeds the model's 32 layers"));
}

TEST_CASE("a chunked layer reads its own chunk: less than a window of the chunk's width",
          "[inference][window]") {
  // The same 16 sequences at 12,000-12,031 tokens: in 8,192-token chunks a query sees 3,808-3,839
  // keys, under a window of 8,192 all 8,192. The batch's cache is the whole chunk either way.
  const char* yaml = R"(
name: c
hardware: {gpu: {model: H100-SXM, count: 1}}
model: {name: llama-3-8b, max_positions: 16384, sliding_window: 8192}
workload: {kind: inference, batch: 16, prompt_tokens: 12000, gen_tokens: 32}
policy: {weights: gpu, kv_cache: gpu, stack: optimized}
)";
  const Scenario window = load(yaml);
  const Scenario chunked = load(yaml, {"model.chunked_attention=true"});
  CHECK(sim::simulate(chunked).get("decode_s") < sim::simulate(window).get("decode_s"));
  const ExecutionModel em;
  CHECK(inference_capacity(chunked, em).tiers.front().required_bytes ==
        inference_capacity(window, em).tiers.front().required_bytes);
  // The key is written to the resolved scenario, which loads back to the same hash; without a
  // window it is refused.
  CHECK_THAT(chunked.resolved_yaml, Catch::Contains("chunked_attention: true"));
  CHECK_THAT(window.resolved_yaml, !Catch::Contains("chunked_attention"));
  CHECK(config::load_scenario_text(chunked.resolved_yaml, "reloaded.yaml").hash == chunked.hash);
  CHECK_THROWS_WITH(
      load(yaml, {"model.sliding_window=0", "model.chunked_attention=true"}),
      Catch::Contains("model.chunked_attention") && Catch::Contains("set model.sliding_window"));
}

}  // namespace sim_workloads_inference_inference_test
