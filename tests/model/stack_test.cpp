// Execution stacks (model/stack.hpp): the table, the factory, and the properties the models
// branch on.
#include <catch2/catch.hpp>

#include "model/capacity.hpp"
#include "model/errors.hpp"
#include "model/layout.hpp"
#include "model/perf.hpp"
#include "model/stack.hpp"
#include "tests/support.hpp"

namespace model_stack_test {

using namespace tiersim;
using tiersim::test::llama7b;

namespace {

GpuSpec gpu(double fp8_tflops) {
  GpuSpec g;
  g.name = fp8_tflops > 0 ? "with-fp8" : "without-fp8";
  g.memory_mib = 81559;
  g.arch = "hopper";
  g.sm_count = 132;
  g.hbm_gbps = 3350;
  g.fp16_tflops = 989;
  g.fp8_tflops = fp8_tflops;
  return g;
}

Scenario inference(const std::string& stack, int prompt_tokens) {
  Scenario s;
  s.model = llama7b();
  s.hardware.gpu = gpu(0);
  s.inference.batch = 8;
  s.inference.prompt_tokens = prompt_tokens;
  s.inference.gen_tokens = 1;
  s.policy.stack = execution_stack(stack);
  return s;
}

double item(const TierMemory& t, const std::string& what) {
  for (const auto& i : t.items)
    if (i.what == what) return i.bytes;
  FAIL("no memory item '" << what << "' in tier " << t.tier);
  return 0;
}

}  // namespace

TEST_CASE("the stack factory lists the valid names when the name is unknown", "[model][stack]") {
  const auto& names = stack_names();
  REQUIRE(names.size() >= 2);
  CHECK(names.front() == kDefaultStackName);
  for (const auto& n : names) CHECK(execution_stack(n).name == n);
  CHECK_THROWS_AS(execution_stack("tensorrt"), ModelError);
  CHECK_THROWS_WITH(execution_stack("tensorrt"), Catch::Contains("'tensorrt'") &&
                                                     Catch::Contains("hf-deepspeed") &&
                                                     Catch::Contains("optimized"));
}

TEST_CASE("the default stack is the eager execution model unchanged", "[model][stack]") {
  const ExecutionModel em;
  const ExecutionModel hf = with_stack(em, execution_stack(kDefaultStackName));
  CHECK(hf.gemm_efficiency == em.gemm_efficiency);
  CHECK(hf.layer_overhead_s == em.layer_overhead_s);
  const ExecutionModel opt = with_stack(em, execution_stack("optimized"));
  CHECK(opt.layer_overhead_s < em.layer_overhead_s);
  CHECK(opt.hbm_efficiency == em.hbm_efficiency);  // the memory roofline is the GPU's
}

TEST_CASE("FP8 GEMMs run only where the stack has them and the GPU has FP8 tensor cores",
          "[model][stack]") {
  const ExecutionStack& opt = execution_stack("optimized");
  const ExecutionStack& hf = execution_stack(kDefaultStackName);
  const GpuSpec hopper = gpu(1979), ampere = gpu(0);
  CHECK(native_fp8_gemm(opt, hopper, 8));
  CHECK_FALSE(native_fp8_gemm(opt, ampere, 8));  // A100: no FP8 tensor cores
  CHECK_FALSE(native_fp8_gemm(opt, hopper, 16));
  CHECK_FALSE(native_fp8_gemm(opt, hopper, 4));
  CHECK_FALSE(native_fp8_gemm(hf, hopper, 8));  // eager: dequantise to fp16

  // A compute-bound prefill pass: the FP8 path is faster than the same GEMMs at fp16, and on a
  // GPU without FP8 the 8-bit weights give the fp16 rate.
  const LlmSpec m = llama7b();
  const ExecutionModel em = with_stack(ExecutionModel{}, opt);
  Policy p;
  p.stack = opt;
  p.weight_bits = 8;
  const LayerPass prefill{8.0 * 2048, attention_flops(m, 8.0 * 2048, 1024), 0, 0, 0};
  const GemmPath on_hopper = gemm_path(hopper, em, p);
  const GemmPath on_ampere = gemm_path(ampere, em, p);
  CHECK(on_hopper.math == GemmMath::kFp8);
  CHECK(on_ampere.math == GemmMath::kFp16);
  CHECK(layer_kernel_s(m, hopper, em, prefill, 1, on_hopper) <
        0.7 * layer_kernel_s(m, hopper, em, prefill, 1, on_ampere));
  // Either way the packed 8-bit weights are read as they are, with no fp16 copy made first.
  CHECK(on_hopper.weight_bytes_per_elem == 1.0);
  CHECK(on_ampere.weight_bytes_per_elem == 1.0);
  CHECK(layer_dequant_s(hopper, em, p, 1e9, 1) == 0);
  Policy eager;
  eager.weight_bits = 8;
  CHECK(gemm_path(hopper, ExecutionModel{}, eager).weight_bytes_per_elem == 2.0);
  CHECK(layer_dequant_s(hopper, ExecutionModel{}, eager, 1e9, 1) > 0);
}

TEST_CASE("FP4 GEMMs run only on an FP4 stack with 4-bit weights on a GPU with FP4 tensor cores",
          "[model][stack]") {
  const ExecutionStack& opt = execution_stack("optimized");
  GpuSpec blackwell = gpu(4500), hopper = gpu(1979);
  blackwell.fp16_tflops = 2250;
  blackwell.fp4_tflops = 9000;
  CHECK(native_fp4_gemm(opt, blackwell, 4));
  CHECK_FALSE(native_fp4_gemm(opt, hopper, 4));     // no FP4 tensor cores: weight-only
  CHECK_FALSE(native_fp4_gemm(opt, blackwell, 8));  // 8-bit weights run FP8
  CHECK_FALSE(native_fp4_gemm(execution_stack("trtllm-v0.6"), blackwell, 4));      // before FP4
  CHECK_FALSE(native_fp4_gemm(execution_stack(kDefaultStackName), blackwell, 4));  // eager

  // A compute-bound prefill: the FP4 GEMMs run at the stack's share of the FP4 peak; the 4-bit
  // weights are read packed either way, and faster than the same GEMMs in FP8.
  const LlmSpec m = llama7b();
  const ExecutionModel em = with_stack(ExecutionModel{}, opt);
  Policy p;
  p.stack = opt;
  p.weight_bits = 4;
  const GemmPath fp4 = gemm_path(blackwell, em, p);
  const GemmPath weight_only = gemm_path(hopper, em, p);
  REQUIRE(fp4.math == GemmMath::kFp4);
  CHECK(weight_only.math == GemmMath::kFp16);
  CHECK(fp4.efficiency == opt.fp4_gemm_efficiency);
  CHECK(fp4.weight_bytes_per_elem == weight_only.weight_bytes_per_elem);
  const LayerPass prefill{8.0 * 2048, 0, 0, 0, 0};
  const KernelTime k = layer_kernel(m, blackwell, em, prefill, 1, fp4);
  CHECK(k.compute_s ==
        Approx(layer_gemm_flops(m, 8.0 * 2048) / (9000e12 * opt.fp4_gemm_efficiency)));
  Policy p8 = p;
  p8.weight_bits = 8;
  CHECK(k.s < layer_kernel(m, blackwell, em, prefill, 1, gemm_path(blackwell, em, p8)).s);
  // A measured FP4 rate caps it.
  GpuSpec measured = blackwell;
  measured.fp4_achieved_tflops = 3000;
  CHECK(layer_kernel(m, measured, em, prefill, 1, fp4).compute_s ==
        Approx(layer_gemm_flops(m, 8.0 * 2048) / 3000e12));
}
TEST_CASE("8-bit weights are stored group-wise by the eager stack, per channel by the optimized",
          "[model][stack]") {
  Policy p;
  p.weight_bits = 8;
  p.quant_group_size = 64;
  CHECK(matrix_bytes_per_weight(p) == Approx(1.0 + 4.0 / 64));
  p.stack = execution_stack("optimized");
  CHECK(matrix_bytes_per_weight(p) == 1.0);
  p.weight_bits = 4;  // 4-bit (AWQ/GPTQ) stays group-wise on every stack
  CHECK(matrix_bytes_per_weight(p) == Approx(0.5 + 4.0 / 64));
}

TEST_CASE("fused attention removes the s^2 score working set from prefill", "[model][stack]") {
  const ExecutionModel em;
  auto activations = [&](const std::string& stack, int prompt) {
    const CapacityReport r = inference_capacity(inference(stack, prompt), em);
    return item(r.tiers.front(), "activations (prefill peak)");
  };
  // Eager: doubling the prompt more than doubles the peak (the scores grow as s^2).
  const double eager_2k = activations(kDefaultStackName, 2048);
  const double eager_4k = activations(kDefaultStackName, 4096);
  CHECK(eager_4k > 2.5 * eager_2k);
  // Fused: the peak grows with the tokens only (plus the constant logits), and the difference
  // from eager is the score matrices, which quadruple when the prompt doubles.
  const double fused_2k = activations("optimized", 2048);
  const double fused_4k = activations("optimized", 4096);
  CHECK(fused_4k < 2.0 * fused_2k);
  CHECK(fused_2k < eager_2k);
  CHECK((eager_4k - fused_4k) == Approx(4.0 * (eager_2k - fused_2k)));
  // Transformers' SDPA attention (hf-sdpa) keeps no score matrix either: the same peak as the
  // fused engines, while its kernels and launches stay eager PyTorch's.
  CHECK(activations("hf-sdpa", 2048) == fused_2k);
  CHECK(activations("hf-sdpa", 4096) == fused_4k);
  const ExecutionStack& sdpa = execution_stack("hf-sdpa");
  CHECK(sdpa.fused_attention);
  CHECK_FALSE(sdpa.gemm_efficiency);
  CHECK_FALSE(sdpa.layer_overhead_s);
  CHECK(sdpa.fused_dequant == execution_stack(kDefaultStackName).fused_dequant);
}

TEST_CASE("no stack charges per-step host work without a published, serialised figure",
          "[model][stack][step]") {
  const ExecutionModel eager;
  // Eager generate(): no published figure, none charged.
  const ExecutionModel hf = with_stack(eager, execution_stack(kDefaultStackName));
  CHECK(hf.step_overhead_s == 0);
  CHECK(hf.step_overhead_per_sequence_s == 0);
  // vLLM V1 overlaps its scheduler with the GPU (asynchronous scheduling, model/stack.cpp).
  const ExecutionModel opt = with_stack(eager, execution_stack("optimized"));
  CHECK(opt.step_overhead_s == 0);
  CHECK(opt.step_overhead_per_sequence_s == 0);
  // TensorRT-LLM v0.6's C++ session: no published figure.
  const ExecutionModel v06 = with_stack(eager, execution_stack("trtllm-v0.6"));
  CHECK(v06.step_overhead_s == 0);
  CHECK(v06.step_overhead_per_sequence_s == 0);
}
TEST_CASE("vLLM's V0 engine charges its published per-step host gap, and only that",
          "[model][stack][step]") {
  // vllm-project/vllm#6854: about 4 ms of GPU bubble per decode step in V0's engine loop.
  const ExecutionModel eager;
  const ExecutionModel v0 = with_stack(eager, execution_stack("vllm-v0"));
  CHECK(v0.step_overhead_s == Approx(4e-3));
  CHECK(v0.step_overhead_per_sequence_s == 0);
  // Everything else is the optimized stack's.
  const ExecutionStack& a = execution_stack("vllm-v0");
  const ExecutionStack& b = execution_stack("optimized");
  CHECK(a.fused_attention == b.fused_attention);
  CHECK(a.gemm_efficiency == b.gemm_efficiency);
  CHECK(a.kv_admission == b.kv_admission);
  // The gap ends every pass: the head of a step waits for it, once, whatever the batch.
  const GpuSpec h100 = gpu(1979);
  const LlmSpec m = llama7b();
  for (double seqs : {1.0, 64.0}) {
    const double with_gap = edge_module_s(m, h100, v0, true, seqs, seqs, 0, 1);
    const double without = edge_module_s(m, h100, with_stack(eager, b), true, seqs, seqs, 0, 1);
    CHECK(with_gap - without == Approx(4e-3).margin(1e-9));
  }
}

TEST_CASE("only the trtllm-bench stack admits requests with GUARANTEED_NO_EVICT",
          "[model][stack]") {
  // The admission rule and the pool's sizing are data of the stack (model/stack.cpp), read by the
  // serving workload and model/capacity.cpp; every older stack keeps vLLM's rule.
  for (const std::string& name : stack_names()) {
    const ExecutionStack& st = execution_stack(name);
    const bool bench = name == "trtllm-bench";
    INFO(name);
    CHECK((st.kv_admission == KvAdmission::kGuaranteedNoEvict) == bench);
    CHECK(st.serving_pool_from_free_memory == bench);
  }
  const ExecutionStack& bench = execution_stack("trtllm-bench");
  CHECK(bench.kv_pool_free_fraction == 0.90);  // trtllm-bench --kv_cache_free_gpu_mem_fraction
  CHECK_FALSE(bench.kv_read_per_query_head);   // XQA
}

TEST_CASE("DeepSpeed stacks gather a module's partitions and all-gather on one stream",
          "[model][stack]") {
  // partition_parameters.py all_gather_coalesced's blocking `.to()` on the coordinator's gather
  // stream, in v0.7.2 and in current DeepSpeed alike (stack.cpp); engines without ZeRO-3 have
  // no such stream.
  CHECK(execution_stack(kDefaultStackName).zero3_gather_serial_stream);
  CHECK(execution_stack("hf-deepspeed-0.7").zero3_gather_serial_stream);
  CHECK_FALSE(execution_stack("optimized").zero3_gather_serial_stream);
}

}  // namespace model_stack_test

namespace model_stack_test {

TEST_CASE("a stack that keeps only the window caches and attends to the window on sliding layers",
          "[model][stack][window]") {
  const ExecutionModel em;
  // Every layer slides over 1024 tokens; half of them (the full-attention ones) do not.
  auto kv_cache = [&](const std::string& stack, int full_layers) {
    Scenario s = inference(stack, 8000);
    s.model.sliding_window = 1024;
    s.model.full_attention_layers = full_layers;
    return item(inference_capacity(s, em).tiers.front(), "kv cache");
  };
  const double whole = [&] {
    Scenario s = inference("optimized", 8000);
    return item(inference_capacity(s, em).tiers.front(), "kv cache");
  }();
  // 8001 tokens (prompt and the one generated) kept on every layer, or 1024 on the sliding ones.
  CHECK(kv_cache("optimized", 0) == Approx(whole * 1024.0 / 8001.0));
  CHECK(kv_cache("optimized", 16) == Approx(whole * (16 * 8001.0 + 16 * 1024.0) / (32 * 8001.0)));
  // transformers' DynamicCache kept every token on every layer.
  CHECK_FALSE(execution_stack(kDefaultStackName).window_cache);
  CHECK_FALSE(execution_stack("hf-sdpa").window_cache);
  CHECK(kv_cache(kDefaultStackName, 0) == Approx(whole));
  for (const std::string stack : {"optimized", "vllm-v0", "trtllm-bench"})
    CHECK(execution_stack(stack).window_cache);
  // vLLM V0 and TensorRT-LLM v0.5-v0.7 keep the window only where every layer slides: one block
  // table (one cyclic window) for all layers. Their sliding layers still read only the window.
  for (const std::string stack : {"vllm-v0", "trtllm-v0.6", "trtllm-v0.7"}) {
    CHECK(kv_cache(stack, 0) == Approx(whole * 1024.0 / 8001.0));
    CHECK(kv_cache(stack, 16) == Approx(whole));
    LlmSpec mixed = inference(stack, 8000).model;
    mixed.sliding_window = 1024;
    mixed.full_attention_layers = 16;
    CHECK_FALSE(stack_caches_window(execution_stack(stack), mixed, false));
    CHECK(stack_window_context(execution_stack(stack), mixed, 8001) ==
          Approx((16 * 8001.0 + 16 * 1024.0) / 32));
  }
  // transformers builds Gemma-2's and Gemma-3's HybridCache (their generation config names it):
  // on the hf stacks their sliding layers keep only the window, interleaved as they are; another
  // family's DynamicCache keeps every token.
  auto gemma_cache = [&](const std::string& stack, const std::string& family) {
    Scenario s = inference(stack, 8000);
    s.model.family = family;
    s.model.sliding_window = 1024;
    s.model.full_attention_layers = 16;
    return item(inference_capacity(s, em).tiers.front(), "kv cache");
  };
  for (const std::string stack : {kDefaultStackName, "hf-sdpa", "hf-accelerate"}) {
    CHECK(gemma_cache(stack, "gemma2") ==
          Approx(whole * (16 * 8001.0 + 16 * 1024.0) / (32 * 8001.0)));
    CHECK(gemma_cache(stack, "gemma3_text") == Approx(gemma_cache(stack, "gemma2")));
    CHECK(gemma_cache(stack, "mistral") == Approx(whole));
  }
  // With KV tiers in host DRAM or on NVMe no stack keeps only the window (vLLM's KV connector).
  LlmSpec sliding = inference("optimized", 8000).model;
  sliding.sliding_window = 1024;
  CHECK(stack_caches_window(execution_stack("optimized"), sliding, false));
  CHECK_FALSE(stack_caches_window(execution_stack("optimized"), sliding, true));
  CHECK(stack_cached_context(execution_stack("optimized"), sliding, 8001, true) == 8001);

  // A prefill chunk past the window: at the GEMM rate (no published kernel rate on this GPU) the
  // time goes with the query-key pairs, the window's on the sliding layers.
  LlmSpec m = llama7b();
  const PrefillChunk chunk{6000, 2000, 2};
  ExecutionStack eager_rate = execution_stack("optimized");
  eager_rate.fused_attention = false;  // every pair at the GEMM rate
  const GpuSpec g = gpu(0);
  const double full_s = prefill_attention_s(m, g, em, eager_rate, chunk, 1);
  m.sliding_window = 1024;
  m.full_attention_layers = 8;
  const CausalPairs w = causal_pairs(6000, 2000, 1024);
  const double pairs_full = 6000.0 * 6001.0 / 2 + 6000.0 * 2000.0;
  const double want = full_s * (8 + 24 * (w.diagonal + w.cached) / pairs_full) / 32;
  CHECK(prefill_attention_s(m, g, em, eager_rate, chunk, 1) == Approx(want));
  // A stack that keeps every token computes every pair under the mask.
  eager_rate.window_cache = false;
  CHECK(prefill_attention_s(m, g, em, eager_rate, chunk, 1) == Approx(full_s));
  // Within the window nothing changes.
  eager_rate.window_cache = true;
  m.sliding_window = 8000;
  CHECK(prefill_attention_s(m, g, em, eager_rate, chunk, 1) == full_s);
}

}  // namespace model_stack_test
