#include "model/capacity.hpp"

#include <algorithm>
#include <cstdio>

#include "model/layout.hpp"
#include "model/units.hpp"

namespace tiersim {

std::string format_gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / units::kGB);
  return buf;
}

double model_weight_bytes(const LlmSpec& m, const Policy& p) {
  double sum = 0;
  for (const auto& mod : weight_modules(m, p)) sum += mod.bytes();
  return sum;
}

void finish_capacity(CapacityReport& report) {
  report.fits = true;
  report.shortfall.clear();
  for (const auto& t : report.tiers) {
    if (t.fits()) continue;
    report.fits = false;
    if (!report.shortfall.empty()) report.shortfall += "; ";
    report.shortfall += t.tier + " needs " + format_gb(t.required_bytes) + ", has " +
                        format_gb(t.capacity_bytes) + " (short " +
                        format_gb(t.required_bytes - t.capacity_bytes) + "): ";
    auto items = t.items;
    std::sort(items.begin(), items.end(),
              [](const MemoryItem& a, const MemoryItem& b) { return a.bytes > b.bytes; });
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i) report.shortfall += ", ";
      report.shortfall += items[i].what + " " + format_gb(items[i].bytes);
    }
  }
}

WeightFootprint weight_footprint(const LlmSpec& m, const Policy& p) {
  WeightFootprint f;
  const double streamed_frac = p.weights.cpu + p.weights.nvme;
  for (const auto& mod : weight_modules(m, p)) {
    f.total_bytes += mod.bytes();
    f.max_streamed_module_bytes = std::max(f.max_streamed_module_bytes, mod.bytes() * streamed_frac);
    f.max_module_elements = std::max(f.max_module_elements, mod.elements());
    for (const auto& t : mod.tensors)
      f.max_streamed_tensor_bytes = std::max(f.max_streamed_tensor_bytes, t.bytes * p.weights.nvme);
  }
  return f;
}

namespace {

// The weights' share of each tier: what is resident on each GPU, the GPU buffers that receive
// streamed layers, the dequantisation workspace, and the host and NVMe copies.
void add_weight_items(const Policy& p, const WeightFootprint& f, double shards, TierMemory& gpu,
                      TierMemory& cpu, TierMemory& nvme) {
  const double tp = p.parallelism.tensor;
  gpu.add("weights (resident)", f.total_bytes * p.weights.gpu / shards);
  if (p.weights.cpu + p.weights.nvme > 0)
    gpu.add("weight prefetch buffers", (p.prefetch_layers + 1) * f.max_streamed_module_bytes / tp);
  // Stacks that dequantise inside the GEMM keep no fp16 copy of the module.
  if (p.weight_bits < 16 && !p.stack.fused_dequant)
    gpu.add("dequantisation workspace", f.max_module_elements * 2.0 / tp);
  cpu.add("weights", f.total_bytes * p.weights.cpu);
  if (p.weights.nvme > 0 && p.io_path == IoPath::kAio)
    cpu.add("pinned AIO swap buffers", p.aio.swap_buffers * f.max_streamed_tensor_bytes);
  nvme.add("weights", f.total_bytes * p.weights.nvme);
}

}  // namespace

CapacityReport inference_capacity(const Scenario& s, const ExecutionModel& em) {
  const Policy& p = s.policy;
  const LlmSpec& m = s.model;
  const auto& w = s.inference;
  const double shards = double(p.parallelism.tensor) * double(p.parallelism.pipeline);
  const double tp = p.parallelism.tensor;
  const WeightFootprint f = weight_footprint(m, p);

  const double kv_elem_bytes = p.kv_bits / 8.0;
  const double kv_total = double(w.batch) * double(w.prompt_tokens + w.gen_tokens) * m.layers *
                          kv_bytes_per_token_layer(m, kv_elem_bytes);

  CapacityReport r;
  TierMemory gpu{"gpu", 0, s.hardware.gpu.memory_gb * units::kGB, {}};
  TierMemory cpu{"cpu", 0, s.hardware.host.dram_gb * units::kGB, {}};
  TierMemory nvme{"nvme", 0,
                  s.hardware.nvme.count * s.hardware.nvme.drive.capacity_tb * 1e12, {}};
  add_weight_items(p, f, shards, gpu, cpu, nvme);
  gpu.add("kv cache", kv_total * p.kv_cache.gpu / shards);
  // Activations live for one GPU batch (FlexGen block) or one pipeline micro-batch at a time.
  const int gpu_batches = p.schedule == Schedule::kFlexGenBlock ? std::max(1, p.gpu_batches) : 1;
  const double sub_batch =
      double(w.batch) / gpu_batches / std::max(1, p.parallelism.micro_batches);
  const double tokens = sub_batch * w.prompt_tokens;
  const double ffn_width = m.ffn * (m.ffn_kind == FfnKind::kGated ? 2.0 : 1.0);
  // Prefill peak: hidden states in and out, the FFN intermediate, and eager attention's score and
  // probability matrices for one layer. Fused attention keeps the scores on chip, so its working
  // set grows with the tokens, not with their square.
  const double scores = p.stack.fused_attention
                            ? 0.0
                            : 2.0 * sub_batch * (m.heads / tp) * double(w.prompt_tokens) *
                                  double(w.prompt_tokens) * 2.0;
  const double activations =
      tokens * (2.0 * m.hidden + ffn_width / tp) * 2.0 + scores + double(w.batch) * m.vocab * 4.0;
  gpu.add("activations (prefill peak)", activations);
  gpu.add("CUDA context and workspace", em.gpu_reserved_bytes);

  if (p.kv_cache.cpu > 0 && p.schedule == Schedule::kZeroInference) {
    // The fork's host buffer: [layers, 2, batch, kv_heads, prompt + gen - 1, head_dim] in its own
    // dtype (fp32 for Llama and OPT), plus the per-step fp32 copy with every query head that
    // repeat_kv / .float() materialises for one layer (see zero_inference_decode_attention).
    const HostKvCache host_kv = zero_inference_host_kv(m);
    const double seqs = double(w.batch) * p.kv_cache.cpu;
    const double max_len = double(w.prompt_tokens + w.gen_tokens - 1);
    cpu.add("kv cache (host buffer, " + std::to_string(int(host_kv.bytes_per_elem * 8)) + "-bit)",
            seqs * max_len * m.layers * kv_bytes_per_token_layer(m, host_kv.bytes_per_elem));
    const CpuAttentionWork step = zero_inference_decode_attention(m, seqs, max_len);
    cpu.add("kv expanded per layer (fp32, all query heads)", step.fresh_bytes);
  } else {
    cpu.add("kv cache", kv_total * p.kv_cache.cpu);
  }
  cpu.add("operating system and framework", em.host_reserved_bytes);
  nvme.add("kv cache", kv_total * p.kv_cache.nvme);

  r.tiers = {gpu, cpu, nvme};
  finish_capacity(r);
  return r;
}

ServingMemory serving_capacity(const Scenario& s, const ExecutionModel& em, double token_budget,
                               int max_sequences, double min_kv_tokens) {
  const Policy& p = s.policy;
  const LlmSpec& m = s.model;
  const double tp = p.parallelism.tensor;
  const WeightFootprint f = weight_footprint(m, p);
  ServingMemory out;
  // vLLM sizes everything inside gpu_memory_utilization x the GPU's memory (EngineArgs
  // --gpu-memory-utilization, default 0.9): the KV block pool is what is left of that share once
  // the weights and the profiled activation peak are placed.
  TierMemory gpu{"gpu", 0,
                 s.serving.gpu_memory_utilization * s.hardware.gpu.memory_gb * units::kGB, {}};
  TierMemory cpu{"cpu", 0, s.hardware.host.dram_gb * units::kGB, {}};
  TierMemory nvme{"nvme", 0,
                  s.hardware.nvme.count * s.hardware.nvme.drive.capacity_tb * 1e12, {}};
  add_weight_items(p, f, tp, gpu, cpu, nvme);
  // The activation peak of the largest iteration: hidden states in and out and the FFN
  // intermediate for every token of the budget, and fp32 logits for every running sequence. Fused
  // attention kernels (FlashAttention, PagedAttention) keep no score matrix.
  const double ffn_width = m.ffn * (m.ffn_kind == FfnKind::kGated ? 2.0 : 1.0);
  gpu.add("activations (iteration peak)",
          token_budget * (2.0 * m.hidden + ffn_width / tp) * 2.0 +
              double(max_sequences) * m.vocab * 4.0);
  gpu.add("CUDA context and workspace", em.gpu_reserved_bytes);
  out.kv_bytes_per_token = m.layers * kv_bytes_per_token_layer(m, p.kv_bits / 8.0) / tp;
  out.kv_pool_bytes = std::max(0.0, gpu.capacity_bytes - gpu.required_bytes);
  if (out.kv_pool_bytes < min_kv_tokens * out.kv_bytes_per_token) {
    gpu.add("kv cache (the longest request)", min_kv_tokens * out.kv_bytes_per_token);
    out.kv_pool_bytes = 0;
  } else {
    gpu.add("kv cache (paged block pool)", out.kv_pool_bytes);
  }
  cpu.add("operating system and framework", em.host_reserved_bytes);
  out.report.tiers = {gpu, cpu, nvme};
  finish_capacity(out.report);
  return out;
}

}  // namespace tiersim
