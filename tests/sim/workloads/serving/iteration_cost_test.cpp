// The cost of a serving iteration: the KV tiers' copies between host DRAM and the GPU pay the
// GPU's fixed cost per pinned copy once per KV block, and nothing else does; a prefix load's
// reads share the drives with the stores issued beside it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "model/perf.hpp"
#include "model/units.hpp"
#include "sim/workloads/serving/iteration_cost.hpp"
#include "tests/support.hpp"

namespace tiersim::sim_workloads_serving_iteration_cost_test {
namespace {

// Llama-3.1-8B on one H100 SXM with a host DRAM tier, vLLM's 16-token blocks.
const char* kYaml = R"(
name: iteration-cost-test
hardware:
  gpu: {model: H100-SXM}
model: {name: llama-3.1-8b}
workload:
  kind: serving
  arrival_rate: 1
  requests: 1
  prompt_tokens: 256
  output_tokens: 1
  prefix_block_tokens: 16
  kv_host_cache: 100GB
)";

sim::IterationCost cost(const sim::IterationShape& shape, std::vector<std::string> sets = {}) {
  const Scenario s = test::load_yaml(kYaml, std::move(sets));
  const sim::IterationModel model(s, ExecutionModel{});
  return model.cost(shape);
}


// Llama-3-8B on one H100 SXM with one Gen4 drive, 256-token blocks.
const char* kNvmeYaml = R"(
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

// Qwen3-32B over two RTX PRO 6000 boards (PCIe Gen5, no NVLink) with tensor parallelism.
const char* kTpYaml = R"(
name: iteration-cost-tp-test
hardware:
  gpu: {model: RTX-PRO-6000-Blackwell-Server, count: 2}
model: {name: qwen3-32b}
workload:
  kind: serving
  arrival_rate: 1
  requests: 1
  prompt_tokens: 256
  output_tokens: 16
policy:
  weights: gpu
  kv_cache: gpu
  parallelism: {tensor: 2, pipeline: 1}
)";

// A decode iteration of 32 requests with 1,000 tokens of context each.
sim::IterationShape decode_batch() {
  sim::IterationShape d;
  d.decodes = 32;
  d.decode_context_tokens = 32 * 1000;
  d.sampled = 32;
  return d;
}

sim::IterationCost tp_cost(const sim::IterationShape& shape, std::vector<std::string> sets = {}) {
  const Scenario s = test::load_yaml(kTpYaml, std::move(sets));
  const sim::IterationModel model(s, ExecutionModel{});
  return model.cost(shape);
}
}  // namespace

TEST_CASE("a decode iteration's all-reduces cost more over PCIe without peer access",
          "[workloads][serving][tp]") {
  const sim::IterationShape d = decode_batch();
  const sim::IterationCost p2p = tp_cost(d);
  const sim::IterationCost host = tp_cost(d, {"hardware.gpu.pcie_p2p=false"});
  const sim::IterationCost blocked = tp_cost(d, {"hardware.host.gpu_p2p=false"});
  const sim::IterationCost nvlink = tp_cost(d, {"hardware.gpu.nvlink_gbps=900"});
  // The same kernels on each GPU; only the link differs.
  CHECK(host.gpu_s == Approx(p2p.gpu_s));
  CHECK(nvlink.gpu_s == Approx(p2p.gpu_s));
  CHECK(nvlink.peer_s < p2p.peer_s);
  CHECK(p2p.peer_s < host.peer_s);
  CHECK(blocked.peer_s == Approx(host.peer_s));
  CHECK(nvlink.time_s < p2p.time_s);
  CHECK(p2p.time_s < host.time_s);

  // Each of the 64 layers pays two all-reduces' latency plus their bytes at the host path's
  // rate, which is below the copy rate peer-to-peer gets (model/perf.cpp gpu_peer_gbps).
  const Scenario s = test::load_yaml(kTpYaml, {"hardware.gpu.pcie_p2p=false"});
  const TensorParallelComm comm =
      tensor_parallel_layer_comm(s.hardware.gpu, s.hardware.host, s.model, 32, 2);
  CHECK(comm.link == PeerLinkKind::kPcieHost);
  const double rate = units::gbps_to_bytes_per_s(gpu_peer_gbps(s.hardware.gpu, s.hardware.host));
  // Plus one gather of the head's logits for the 32 sampled rows.
  const TensorParallelComm logits =
      tensor_parallel_logits_comm(s.hardware.gpu, s.hardware.host, s.model, 32, 2);
  CHECK(host.peer_s == Approx(s.model.layers * comm.seconds(rate) + logits.seconds(rate)));
  CHECK(rate < units::gbps_to_bytes_per_s(std::min(h2d_gbps(s.hardware.gpu, s.hardware.host),
                                                   d2h_gbps(s.hardware.gpu, s.hardware.host))));
  // 32 tokens of 5,120 fp16 values are 328 KB an all-reduce, 16 us at the host path's 21 GB/s
  // (55 GB/s x 3.9 / 10.31); the latency, 11.7 us each, is still over a third of it.
  CHECK(s.model.layers * comm.latency_s > 0.35 * host.peer_s);
}

TEST_CASE("an iteration gathers the vocab-parallel head's logits of the rows it samples",
          "[workloads][serving][tp]") {
  const Scenario s = test::load_yaml(kTpYaml, {"hardware.gpu.pcie_p2p=false"});
  const double rate = units::gbps_to_bytes_per_s(gpu_peer_gbps(s.hardware.gpu, s.hardware.host));
  sim::IterationShape sampled = decode_batch();
  sim::IterationShape unsampled = decode_batch();
  unsampled.sampled = 0;
  const sim::IterationCost with = tp_cost(sampled, {"hardware.gpu.pcie_p2p=false"});
  const sim::IterationCost without = tp_cost(unsampled, {"hardware.gpu.pcie_p2p=false"});
  // 32 rows of Qwen3-32B's 151,936 logits in fp16, half of them crossing the ring: 4.9 MB.
  const TensorParallelComm logits =
      tensor_parallel_logits_comm(s.hardware.gpu, s.hardware.host, s.model, 32, 2);
  CHECK(logits.bytes == Approx(32 * 151936 * 2.0 / 2));
  const double logits_s = logits.seconds(rate);
  // The gather adds to the link's time and to the iteration's: at 32 rows the head's kernels are
  // bound by reading its weights, sampled rows or not, so the gather is the whole difference.
  CHECK(with.peer_s - without.peer_s == Approx(logits_s));
  CHECK(with.time_s - without.time_s == Approx(logits_s));
  // Without the logits to gather a tensor-parallel iteration pays the layers' all-reduces alone.
  const TensorParallelComm layer =
      tensor_parallel_layer_comm(s.hardware.gpu, s.hardware.host, s.model, 32, 2);
  CHECK(without.peer_s == Approx(s.model.layers * layer.seconds(rate)));
}

TEST_CASE("one GPU pays no all-reduce", "[workloads][serving][tp]") {
  const sim::IterationCost one =
      tp_cost(decode_batch(), {"hardware.gpu.count=1", "policy.parallelism.tensor=1"});
  CHECK(one.peer_s == 0.0);
}

TEST_CASE("a KV tier load pays the GPU's fixed cost once per block copied",
          "[workloads][serving][kv]") {
  // 624 blocks of 16 tokens (a 10,000-token prompt's cached prefix in vLLM's offloading
  // connector) against the same tokens as one block: the same bytes, 623 copies fewer.
  const double blocks = 624, tokens = blocks * 16;
  sim::IterationShape load;
  load.kv_load_host_tokens = tokens;
  const Scenario s = test::load_yaml(kYaml);
  const double fixed_s = s.hardware.gpu.pcie_copy_overhead_us * 1e-6;
  REQUIRE(fixed_s > 0);  // the H100 SXM's measured cost (catalog)
  const sim::IterationCost per_block = cost(load);
  const sim::IterationCost one_copy = cost(load, {"workload.prefix_block_tokens=9984"});
  CHECK(per_block.kv_load_s - one_copy.kv_load_s == Approx((blocks - 1) * fixed_s));
  CHECK(per_block.time_s - one_copy.time_s == Approx((blocks - 1) * fixed_s));
  CHECK(per_block.h2d_s - one_copy.h2d_s == Approx((blocks - 1) * fixed_s));
  // The link's bytes at its large-copy rate, plus the copies.
  const double bytes = tokens * kv_bytes_per_token_layer(s.model, 2.0) * s.model.layers;
  const double rate = h2d_gbps(s.hardware.gpu, s.hardware.host) * 1e9;
  CHECK(per_block.kv_load_s == Approx(blocks * fixed_s + bytes / rate));

  // Blocks staged from NVMe cross the link the same way.
  sim::IterationShape nvme;
  nvme.kv_load_nvme_tokens = tokens;
  const std::vector<std::string> drive = {"hardware.nvme.model=generic-gen4",
                                          "hardware.nvme.count=1"};
  auto with_blocks = [&](const std::string& block) {
    auto sets = drive;
    sets.push_back("workload.prefix_block_tokens=" + block);
    return cost(nvme, sets);
  };
  CHECK(with_blocks("16").h2d_s - with_blocks("9984").h2d_s == Approx((blocks - 1) * fixed_s));
}

TEST_CASE("a KV tier store pays the fixed cost once per block on the device-to-host link",
          "[workloads][serving][kv]") {
  sim::IterationShape store;
  store.kv_store_host_tokens = 100 * 16;
  const Scenario s = test::load_yaml(kYaml);
  const double fixed_s = s.hardware.gpu.pcie_copy_overhead_us * 1e-6;
  const sim::IterationCost per_block = cost(store);
  const sim::IterationCost one_copy = cost(store, {"workload.prefix_block_tokens=1600"});
  CHECK(per_block.d2h_s - one_copy.d2h_s == Approx(99 * fixed_s));
  // Stores run beside the iteration and do not hold it up.
  CHECK(per_block.time_s == one_copy.time_s);
}

TEST_CASE("without a measured cost per copy, or outside the KV tiers, nothing changes",
          "[workloads][serving][kv]") {
  sim::IterationShape load;
  load.kv_load_host_tokens = 624 * 16;
  // A GPU whose copies were not measured (or a cost set to 0) copies at the rate alone.
  const std::vector<std::string> none = {"hardware.gpu.pcie_copy_overhead_us=0"};
  auto with_none = [&](const std::string& block) {
    auto sets = none;
    sets.push_back("workload.prefix_block_tokens=" + block);
    return cost(load, sets);
  };
  CHECK(with_none("16").kv_load_s == with_none("9984").kv_load_s);
  CHECK(test::load_yaml(kYaml, {"hardware.gpu.model=A100-80GB"}).hardware.gpu
            .pcie_copy_overhead_us < 0);

  // Weights streamed from host DRAM and swap preemption's copies keep their cost: the rule is
  // the KV tiers' one copy per block.
  sim::IterationShape other;
  other.add_prefill(512, 0);
  other.swap_in_tokens = 1600;
  other.swap_out_tokens = 1600;
  const std::vector<std::string> streamed = {"policy.weights=cpu", "hardware.host.dram_gb=512"};
  auto streamed_with = [&](std::vector<std::string> extra) {
    auto sets = streamed;
    sets.insert(sets.end(), extra.begin(), extra.end());
    return cost(other, sets);
  };
  const sim::IterationCost measured = streamed_with({});
  const sim::IterationCost without = streamed_with(none);
  CHECK(measured.time_s == without.time_s);
  CHECK(measured.h2d_s == without.h2d_s);
  CHECK(measured.d2h_s == without.d2h_s);
}

TEST_CASE("a KV prefix load shares the drives with the stores issued beside it",
          "[workloads][serving][kv_tiers]") {
  const Scenario s = test::load_yaml(kNvmeYaml);
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

TEST_CASE("prefill attention runs at the fused kernel's rate; decode and eager stacks do not",
          "[workloads][serving][attention]") {
  // Llama-3.1-8B on an H100 SXM under the optimized stack (FlashAttention-3 rates on Hopper),
  // against the same stack with its prefill attention at the GEMM rate.
  const Scenario fa = test::load_yaml(kYaml, {"policy.stack=optimized"});
  Scenario gemm_rate = fa;
  gemm_rate.policy.stack.prefill_attention_kernel = FusedAttentionKernel::kUnpublished;
  const sim::IterationModel with_fa(fa, ExecutionModel{});
  const sim::IterationModel at_gemm(gemm_rate, ExecutionModel{});
  // Decode attention is bound by its KV reads and keeps its cost: 64 sequences of 100K tokens.
  sim::IterationShape decode;
  decode.decodes = 64;
  decode.decode_context_tokens = 64 * 100000.0;
  decode.sampled = 64;
  CHECK(with_fa.cost(decode).time_s == at_gemm.cost(decode).time_s);
  // The last 16,384-token chunk of a 100K prompt: attention is most of its math, and the causal
  // kernel runs below the GEMM rate, so the iteration is longer.
  sim::IterationShape chunk;
  chunk.add_prefill(16384, 83616);
  chunk.sampled = 1;
  // (by about a tenth: the GEMMs and the elementwise kernels, the rest of the pass, are the same)
  CHECK(with_fa.cost(chunk).time_s > 1.05 * at_gemm.cost(chunk).time_s);
  // A chunk beside a few short decodes runs in the same attention kernel, whose math is the
  // longer part: the chunk's rate shows. Beside 64 decodes of 100K tokens the kernel is bound by
  // their KV reads, and a short chunk's math hides under them at either rate.
  sim::IterationShape mixed;
  mixed.decodes = 8;
  mixed.decode_context_tokens = 8 * 2000.0;
  mixed.sampled = 9;
  mixed.add_prefill(8192, 0);
  CHECK(with_fa.cost(mixed).time_s > at_gemm.cost(mixed).time_s);
  sim::IterationShape long_decodes = decode;
  long_decodes.add_prefill(512, 0);
  CHECK(with_fa.cost(long_decodes).time_s == at_gemm.cost(long_decodes).time_s);
  // Eager PyTorch has no fused kernel: the table does not apply to it.
  const Scenario eager = test::load_yaml(kYaml);
  REQUIRE_FALSE(eager.policy.stack.fused_attention);
  Scenario eager_fa = eager;
  eager_fa.policy.stack.prefill_attention_kernel = FusedAttentionKernel::kFlashAttention;
  CHECK(sim::IterationModel(eager, ExecutionModel{}).cost(chunk).time_s ==
        sim::IterationModel(eager_fa, ExecutionModel{}).cost(chunk).time_s);
}

TEST_CASE("an MoE with dense layers streams each layer's own weights", "[workloads][serving]") {
  // GLM-4.5-Air streamed from host DRAM to one H200: one dense first layer, 45 with the experts.
  // The iteration moves every layer's weights once, each kind its own bytes (the first layer's
  // module stood for all of them before, 1/20 of an expert layer's).
  const std::vector<std::string> glm = {"model.name=glm-4.5-air", "hardware.gpu.model=H200",
                                        "policy.weights=cpu", "hardware.host.dram_gb=512",
                                        "workload.kv_host_cache=0"};
  const Scenario s = test::load_yaml(kYaml, glm);
  const sim::IterationModel model(s, ExecutionModel{});
  const std::vector<WeightModule> mods = weight_modules(s.model, s.policy);
  double all = 0;
  for (const auto& mod : mods) all += mod.bytes();
  CHECK(model.streamed_bytes_per_gpu() == Approx(all).epsilon(1e-6));  // small params stay
  // The link carries them all: its busy seconds per byte streamed are a dense model's.
  sim::IterationShape decode;
  decode.decodes = 1;
  decode.decode_context_tokens = 256;
  decode.sampled = 1;
  const std::vector<std::string> dense = {"hardware.gpu.model=H200", "policy.weights=cpu",
                                          "hardware.host.dram_gb=512", "workload.kv_host_cache=0"};
  const Scenario llama = test::load_yaml(kYaml, dense);
  const sim::IterationModel llama_model(llama, ExecutionModel{});
  // Each kind of layer computes as its own model (model/llm.hpp layer_model), as the inference
  // workload's do: at 256 tokens a layer with the experts is bound by reading every expert the
  // tokens were routed to and the dense one by its math, which the mean layer would blur (0.2%
  // here, one dense layer in 46). With the weights on the GPU, the
  // iteration's GPU time is each kind's, weighted by its layers (embedding and head alike).
  sim::IterationShape chunk;
  chunk.add_prefill(256, 0);
  chunk.sampled = 1;
  const std::vector<std::string> on_gpu = {"model.name=glm-4.5-air", "hardware.gpu.model=H200"};
  const Scenario resident = test::load_yaml(kYaml, on_gpu);
  Scenario experts = resident, dense_only = resident;
  experts.model = layer_model(resident.model, true);
  dense_only.model = layer_model(resident.model, false);
  const double mixed_s = sim::IterationModel(resident, ExecutionModel{}).cost(chunk).gpu_s;
  const double experts_s = sim::IterationModel(experts, ExecutionModel{}).cost(chunk).gpu_s;
  const double dense_s = sim::IterationModel(dense_only, ExecutionModel{}).cost(chunk).gpu_s;
  CHECK(mixed_s == Approx((45 * experts_s + 1 * dense_s) / 46).epsilon(1e-9));
  CHECK(model.cost(decode).weights_h2d_s / model.streamed_bytes_per_gpu() ==
        Approx(llama_model.cost(decode).weights_h2d_s / llama_model.streamed_bytes_per_gpu())
            .epsilon(0.1));
}

TEST_CASE("a latent cache's prefill chunk widens its cached context first",
          "[workloads][serving]") {
  // DeepSeek-V3 on eight H200s (TP8) with the latent cache: a chunk of 512 new tokens after 8,192
  // cached ones up-projects the cached latents through kv_b_proj (2 x 512 x 128 x 256 FLOPs per
  // token and layer, vLLM's chunked MLA prefill) on top of its attention.
  const std::vector<std::string> ds = {"model.name=deepseek-v3",  "hardware.gpu.model=H200",
                                       "hardware.gpu.count=8",    "policy.parallelism.tensor=8",
                                       "policy.weight_bits=8",    "policy.stack=optimized",
                                       "workload.kv_host_cache=0"};
  const Scenario s = test::load_yaml(kYaml, ds);
  CHECK(latent_expansion_flops(s.model, 1) == 2.0 * 512 * 128 * 256);
  CHECK(latent_expansion_flops(test::load_yaml(kYaml).model, 1000) == 0);  // no MLA: none
  const sim::IterationModel model(s, ExecutionModel{});
  sim::IterationShape fresh, cached;
  fresh.add_prefill(512, 0);
  fresh.sampled = 1;
  cached.add_prefill(512, 8192);
  cached.sampled = 1;
  // The cached chunk takes longer by its attention over the context (the fused kernel's time)
  // and by the widening, 61 layers x 8,192 tokens x 33.5 MFLOP / 8 GPUs, at least at the GPU's
  // fp16 peak.
  const ExecutionModel em = with_stack(ExecutionModel{}, s.policy.stack);
  const double attention_s =
      prefill_attention_s(s.model, s.hardware.gpu, em, s.policy.stack, {512, 8192, 1}, 8) -
      prefill_attention_s(s.model, s.hardware.gpu, em, s.policy.stack, {512, 0, 1}, 8);
  const double widen_s = latent_expansion_flops(s.model, 8192) / 8 /
                         units::tflops_to_flops(s.hardware.gpu.fp16_tflops);
  CHECK(model.cost(cached).gpu_s - model.cost(fresh).gpu_s > 61 * (attention_s + widen_s));
}

TEST_CASE("a serving iteration past a sliding window attends to the window on sliding layers",
          "[workloads][serving][window]") {
  const std::vector<std::string> window = {"model.sliding_window=1024", "policy.stack=optimized",
                                           "model.full_attention_layers=8"};
  const Scenario s = test::load_yaml(kYaml, window);
  const sim::IterationModel model(s, ExecutionModel{});
  // 8 of 32 layers attend to all 20,000 tokens, 24 to the last 1,024.
  CHECK(model.window_context(20000) == Approx((8 * 20000.0 + 24 * 1024.0) / 32));
  CHECK(model.window_context(1000) == 1000);
  // A decode batch at long context costs less than the same model without the window; a chunk
  // of a long prompt (its earlier chunks cached) too.
  sim::IterationShape decode;
  decode.decodes = 64;
  decode.sampled = 64;
  decode.decode_context_tokens = 64 * model.window_context(20000);
  sim::IterationShape full_decode = decode;
  full_decode.decode_context_tokens = 64 * 20000.0;
  CHECK(model.cost(decode).time_s < cost(full_decode, {"policy.stack=optimized"}).time_s);
  sim::IterationShape chunk;
  chunk.add_prefill(2048, 16000);
  chunk.sampled = 1;
  CHECK(model.cost(chunk).time_s < cost(chunk, {"policy.stack=optimized"}).time_s);
  // transformers' stack keeps and attends to every token.
  const sim::IterationModel hf(test::load_yaml(kYaml, {"model.sliding_window=1024"}),
                               ExecutionModel{});
  CHECK(hf.window_context(20000) == 20000);
}

}  // namespace tiersim::sim_workloads_serving_iteration_cost_test
