#include "model/capacity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/layout.hpp"
#include "model/units.hpp"
#include "common/format.hpp"

namespace tiersim {

std::string format_gb(double bytes) { return format::gigabytes(bytes); }

double cuda_context_bytes(const GpuSpec& g, const ExecutionModel& em) {
  if (g.cuda_context_mib >= 0) return g.cuda_context_mib * units::kMiB;
  const GpuArchInfo& arch = gpu_arch_info(g.arch);
  return em.cuda_context_base_bytes +
         double(g.sm_count) * arch.max_threads_per_sm * em.cuda_stack_bytes_per_thread;
}

void add_communicator_buffers(TierMemory& gpu, const ExecutionModel& em, double gpus) {
  // vLLM's measurement (model/perf.hpp): the non-torch memory of a tensor-parallel process less
  // that of a single-GPU one, about 1.85 GiB on H100s; the same torch.distributed/NCCL stack
  // carries DeepSpeed's all-reduces and all-gathers and the engines' tensor-parallel all-reduces.
  if (gpus > 1)
    gpu.add("NCCL communicator buffers", em.vllm_non_torch_tp_bytes - em.vllm_non_torch_bytes);
}

TierMemory gpu_tier(const GpuSpec& g, const ExecutionModel& em) {
  TierMemory gpu{"gpu", 0, gpu_memory_bytes(g), {}};
  gpu.add("driver reserve (nvidia-smi Reserved)", g.memory_reserved_mib * units::kMiB);
  gpu.add("CUDA context", cuda_context_bytes(g, em));
  gpu.add("cuBLAS workspace", gpu_arch_info(g.arch).cublas_workspace_bytes);
  return gpu;
}

double model_weight_bytes(const LlmSpec& m, const Policy& p) {
  return model_weight_bytes(weight_modules(m, p));
}

double model_weight_bytes(const std::vector<WeightModule>& modules) {
  double sum = 0;
  for (const auto& mod : modules) sum += mod.bytes();
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
  return weight_footprint(weight_modules(m, p), p);
}

WeightFootprint weight_footprint(const std::vector<WeightModule>& modules, const Policy& p) {
  WeightFootprint f;
  const double streamed_frac = p.weights.cpu + p.weights.nvme;
  for (const auto& mod : modules) {
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

// ZeRO-Inference's data-parallel ranks (ZeRO-3, policy.parallelism.data): every partitioned
// parameter has 1/ranks on each GPU, or on the host or NVMe per the placement (all ranks'
// partitions together are one copy of the model there); persistent parameters are whole on every
// GPU. Gathered parameters fill GPU memory for the module computing and those prefetched
// (zero3_prefetch_modules); an offloading rank keeps its own pinned swap buffers, one partition
// each.
void add_zero3_weight_items(const Policy& p, const std::vector<WeightModule>& modules, double ranks,
                            TierMemory& gpu, TierMemory& cpu, TierMemory& nvme) {
  double persistent = 0, partitioned = 0, largest_gathered = 0, largest_elements = 0;
  double largest_tensor = 0;
  for (const auto& mod : modules) {
    double gathered = 0;
    for (const auto& t : mod.tensors) {
      if (zero3_persistent(t, p.zero3)) {
        persistent += t.bytes;
        continue;
      }
      gathered += t.bytes;
      largest_tensor = std::max(largest_tensor, t.bytes);
    }
    partitioned += gathered;
    largest_gathered = std::max(largest_gathered, gathered);
    largest_elements = std::max(largest_elements, mod.elements());
  }
  gpu.add("weights (persistent, whole on every GPU)", persistent);
  gpu.add("weights (this GPU's partition)", partitioned * p.weights.gpu / ranks);
  gpu.add("gathered parameters (module computing + prefetched)",
          (zero3_prefetch_modules(p.zero3, largest_elements) + 1) * largest_gathered);
  if (p.weight_bits < 16 && !p.stack.fused_dequant)
    gpu.add("dequantisation workspace", largest_elements * 2.0);
  cpu.add("weights (every rank's partition)", partitioned * p.weights.cpu);
  if (p.weights.nvme > 0 && p.io_path == IoPath::kAio)
    cpu.add("pinned AIO swap buffers (every rank's)",
            ranks * p.aio.swap_buffers * largest_tensor * p.weights.nvme / ranks);
  nvme.add("weights", partitioned * p.weights.nvme);
}

}  // namespace

CapacityReport flexgen_capacity(const Scenario& s, const ExecutionModel& em) {
  const FlexGenPolicy& fg = s.policy.flexgen;
  const LlmSpec& m = s.model;
  const auto& w = s.inference;
  const double h = m.hidden, gbs = fg.gpu_batch_size, nb = fg.num_gpu_batches;
  const double bls = gbs * nb;
  const double prompt = w.prompt_tokens;
  // The cache is allocated at its full length up front: (prompt_len + gen_len - 1) rows
  // (TorchDevice.init_cache_one_gpu_batch, flexgen/pytorch_backend.py).
  const double cache_len = double(w.prompt_tokens + w.gen_tokens - 1);
  const double cache_elem_bytes = fg.compress_cache ? kFlexGenCompressedBytesPerElem : 2.0;
  const double kv_seq_bytes = cache_len * m.layers * 2.0 * h * cache_elem_bytes;  // K and V
  const auto subs = flexgen_sublayers(m, fg);
  const FlexGenCacheSplit split = flexgen_cache_split(fg, m.heads);
  const bool act_gpu = fg.act_gpu_percent >= 100;

  CapacityReport r;
  TierMemory gpu = gpu_tier(s.hardware.gpu, em);
  TierMemory cpu{"cpu", 0, s.hardware.host.dram_gb * units::kGB, {}};
  TierMemory nvme{"nvme", 0, s.hardware.nvme.count * s.hardware.nvme.drive.capacity_tb * 1e12, {}};
  double on[3] = {0, 0, 0};  // weight bytes on gpu, cpu, disk
  double staged_pair = 0;
  for (std::size_t i = 0; i < subs.size(); ++i) {
    on[0] += subs[i].bytes_on(Tier::kGpu);
    on[1] += subs[i].bytes_on(Tier::kCpu);
    on[2] += subs[i].bytes_on(Tier::kNvme);
    // load_weight(j+1) runs during layer j, and smart_copy allocates fresh GPU tensors for every
    // non-GPU weight, freed after the last GPU batch: two sub-layers' off-GPU weights at once.
    const double off = subs[i].bytes_on(Tier::kCpu) + subs[i].bytes_on(Tier::kNvme);
    const double next = i + 1 < subs.size()
                            ? subs[i + 1].bytes_on(Tier::kCpu) + subs[i + 1].bytes_on(Tier::kNvme)
                            : 0.0;
    staged_pair = std::max(staged_pair, off + next);
  }
  gpu.add("weights (GPU-homed)", on[0]);
  gpu.add("weights staged (two sub-layers)", staged_pair);
  gpu.add("kv cache (GPU-homed sequences)", split.gpu_seqs * nb * kv_seq_bytes);
  // Hidden states: all GPU batches' when they live on the GPU, else GPU batches k-1, k, k+1
  // (load_hidden / store_hidden around compute); the prefill's (gbs, s, h) fp16 is the larger.
  const double hidden_batch = gbs * prompt * h * 2.0;
  gpu.add(act_gpu ? "hidden states (all GPU batches)" : "hidden states (3 GPU batches)",
          act_gpu ? nb * hidden_batch : 3.0 * hidden_batch);
  // The prefill peak of one GPU batch, the largest of the three layer kinds:
  // - attention (TorchDevice.mha): layer-normed input, q, k, v, two (gbs*n_head, s, s) fp16 score
  //   tensors during the softmax, and later the value, its transposed copy and the projection,
  //   with the softmax output still referenced; plus the attention weights decompressed into
  //   fresh fp16 tensors (TorchCompressedDevice.decompress), one sub-layer at a time;
  // - MLP (TorchDevice.mlp): the (gbs, s, ffn) intermediate and its activation, in and out;
  // - output embedding (opt_output_embed): logits for every prompt position, (gbs, s, vocab).
  const double scores = gbs * m.heads * prompt * prompt * 2.0;
  const double attention =
      std::max(4.0 * hidden_batch + 2.0 * scores, 7.0 * hidden_batch + scores) +
      (fg.compress_weight ? 4.0 * h * h * 2.0 : 0.0);
  const double mlp = 2.0 * gbs * prompt * m.ffn * 2.0 + 2.0 * hidden_batch +
                     (fg.compress_weight ? 2.0 * h * m.ffn * 2.0 : 0.0);
  const double logits = gbs * prompt * m.vocab * 2.0 + hidden_batch;
  const double prefill_peak = std::max({attention, mlp, logits});
  // Decode: the K/V prefix of one sequence in one layer, at full length.
  const double prefix = cache_len * 2.0 * h;
  // mha_gen's permute/reshape copies K and V of the computing GPU batch in fp16 (after
  // decompressing a compressed cache into fresh fp16 tensors); without CPU attention, load_cache
  // also brings the off-GPU sequences' prefix of GPU batches k and k+1 to fresh GPU tensors.
  const double off_gpu_seqs = split.cpu_seqs + split.disk_seqs;
  const bool cpu_attention = fg.cpu_cache_compute && !fg.compress_cache;
  const double attended_seqs = cpu_attention ? split.gpu_seqs : gbs;
  double decode_peak = attended_seqs * prefix * 2.0 * (fg.compress_cache ? 2.0 : 1.0);
  if (!cpu_attention) decode_peak += 2.0 * off_gpu_seqs * prefix * cache_elem_bytes;
  // Prefill and decode never run at once: the larger of the two working sets.
  if (prefill_peak >= decode_peak)
    gpu.add("activations (prefill peak of one GPU batch)", prefill_peak);
  else
    gpu.add("kv buffers (decode peak of one GPU batch)", decode_peak);

  cpu.add("weights", on[1]);
  cpu.add("kv cache", split.cpu_seqs * nb * kv_seq_bytes);
  if (fg.cpu_cache_compute && off_gpu_seqs > 0)
    // init_attention_compute_workspace: one fp32 K and V pair of the full length (sep_layer).
    cpu.add("fp32 attention workspace", 2.0 * cache_len * gbs * h * 4.0);
  if (!act_gpu) cpu.add("hidden states", bls * prompt * h * 2.0);
  // TorchDisk starts 4 copy threads, each with a pinned relay of 1 G fp16 elements
  // (copy_worker_func: torch.empty((1 * GB,), dtype=torch.float16, pin_memory=True)).
  cpu.add("copy-thread pinned relay buffers", 4.0 * 1024.0 * 1024.0 * 1024.0 * 2.0);
  cpu.add("operating system and framework", em.flexgen_host_reserved_bytes);
  nvme.add("weights", on[2]);
  nvme.add("kv cache", split.disk_seqs * nb * kv_seq_bytes);
  r.tiers = {gpu, cpu, nvme};
  finish_capacity(r);
  return r;
}

CapacityReport inference_capacity(const Scenario& s, const ExecutionModel& em) {
  if (s.policy.schedule == Schedule::kFlexGen) return flexgen_capacity(s, em);
  return inference_capacity(s, em, weight_modules(s.model, s.policy));
}

CapacityReport inference_capacity(const Scenario& s, const ExecutionModel& em,
                                  const std::vector<WeightModule>& modules) {
  if (s.policy.schedule == Schedule::kFlexGen) return flexgen_capacity(s, em);
  const Policy& p = s.policy;
  const LlmSpec& m = s.model;
  const auto& w = s.inference;
  const double shards = double(p.parallelism.tensor) * double(p.parallelism.pipeline);
  const double tp = p.parallelism.tensor;
  const double dp = p.parallelism.data;
  const WeightFootprint f = weight_footprint(modules, p);

  const double kv_elem_bytes = p.kv_bits / 8.0;
  // The cache in the form the stack keeps it; kv_shards is how many GPUs of one replica share it.
  const KvCacheShape kv_shape = stack_kv_cache(p.stack, m, kv_elem_bytes, p.parallelism.tensor);
  // A stack that keeps only the window holds at most sliding_window tokens on a sliding layer.
  const double kv_total =
      double(w.batch) *
      stack_cached_context(p.stack, m, double(w.prompt_tokens + w.gen_tokens), false) * m.layers *
      kv_shape.bytes_per_token_layer;
  const double kv_shards = double(p.parallelism.pipeline) * kv_shape.split;

  CapacityReport r;
  TierMemory gpu = gpu_tier(s.hardware.gpu, em);
  TierMemory cpu{"cpu", 0, s.hardware.host.dram_gb * units::kGB, {}};
  TierMemory nvme{"nvme", 0,
                  s.hardware.nvme.count * s.hardware.nvme.drive.capacity_tb * 1e12, {}};
  if (dp > 1)
    add_zero3_weight_items(p, modules, dp, gpu, cpu, nvme);
  else
    add_weight_items(p, f, shards, gpu, cpu, nvme);
  // Activations live for one GPU batch (FlexGen block) or one pipeline micro-batch at a time, of
  // one data-parallel rank's batch.
  const int gpu_batches = p.batches_per_fetch();
  const double sub_batch =
      double(w.batch) / dp / gpu_batches / std::max(1, p.parallelism.micro_batches);
  const double tokens = sub_batch * w.prompt_tokens;
  const double ffn_width = m.widest_ffn() * (m.ffn_kind == FfnKind::kGated ? 2.0 : 1.0);
  // Prefill peak: hidden states in and out, the FFN intermediate, and eager attention's score and
  // probability matrices for one layer. Fused attention keeps the scores on chip, so its working
  // set grows with the tokens, not with their square.
  const double scores = p.stack.fused_attention
                            ? 0.0
                            : 2.0 * sub_batch * (m.heads / tp) * double(w.prompt_tokens) *
                                  double(w.prompt_tokens) * 2.0;
  const double activations = tokens * (2.0 * m.hidden + ffn_width / tp) * 2.0 + scores +
                             double(w.batch) / dp * m.vocab * 4.0;
  gpu.add("activations (prefill peak)", activations);
  // Data-parallel ranks gather their weights through NCCL too: every rank holds communicators.
  add_communicator_buffers(gpu, em, shards * dp);
  const double kv_gpu = kv_total * p.kv_cache.gpu / kv_shards / dp;
  if (p.stack.kv_pool_free_fraction > 0 && kv_gpu > 0) {
    // The stack's KV pool takes its fraction of what is free now; the rest stays unused
    // (ExecutionStack::kv_pool_free_fraction). The batch fits when its cache fits in the pool.
    const double free_bytes = std::max(0.0, gpu.capacity_bytes - gpu.required_bytes);
    const long pct = std::lround(100 * (1 - p.stack.kv_pool_free_fraction));
    gpu.add("left free by the KV pool (" + std::to_string(pct) + "% of free memory)",
            free_bytes * (1 - p.stack.kv_pool_free_fraction));
  }
  gpu.add("kv cache", kv_gpu);

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

namespace {

// What a serving run keeps in host DRAM besides the weights (add_weight_items) and its KV tiers.
void add_serving_host_reserves(const Scenario& s, const ExecutionModel& em, TierMemory& cpu) {
  cpu.add("operating system and framework", em.host_reserved_bytes);
  // vLLM's V0 engine allocates swap_space of pinned host memory per GPU for preempted requests'
  // blocks (vLLM EngineArgs --swap-space, "CPU swap space size (GiB) per GPU").
  if (s.serving.preemption == ServingWorkload::Preemption::kSwap)
    cpu.add("kv swap space (workload.swap_space x GPUs)",
            s.serving.swap_space_bytes * s.hardware.gpu_count);
}

// The KV tiers' sizes: a given size as given; `auto` (negative) what the tier's capacity has left
// after what `cpu` and `nvme` already hold, rounded down to whole MiB (so that the tier plus the
// rest never exceeds the capacity by a rounding error), 0 where nothing is left.
ServingKvTiers kv_tiers_left(const ServingWorkload& w, const TierMemory& cpu,
                             const TierMemory& nvme) {
  const auto left = [](const TierMemory& t) {
    return std::max(0.0, std::floor((t.capacity_bytes - t.required_bytes) / units::kMiB)) *
           units::kMiB;
  };
  ServingKvTiers out;
  out.host_bytes = w.kv_host_cache_bytes < 0 ? left(cpu) : w.kv_host_cache_bytes;
  out.nvme_bytes = w.kv_nvme_cache_bytes < 0 ? left(nvme) : w.kv_nvme_cache_bytes;
  return out;
}

}  // namespace

ServingKvRoom serving_kv_room(const Scenario& s, const ExecutionModel& em) {
  TierMemory gpu{"gpu", 0, 0, {}};
  TierMemory cpu{"cpu", 0, s.hardware.host.dram_gb * units::kGB, {}};
  TierMemory nvme{"nvme", 0, s.hardware.nvme.count * s.hardware.nvme.drive.capacity_tb * 1e12, {}};
  add_weight_items(s.policy, weight_footprint(s.model, s.policy), s.policy.parallelism.tensor, gpu,
                   cpu, nvme);
  add_serving_host_reserves(s, em, cpu);
  ServingKvRoom room;
  room.host = cpu;
  room.nvme = nvme;
  room.tiers = kv_tiers_left(s.serving, cpu, nvme);
  return room;
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
  // the weights and what its start-up profile measured are placed (model/perf.hpp, vllm_*).
  // vLLM's share is of the total CUDA reports (torch.cuda.mem_get_info), which leaves out the
  // driver's reserve; the CUDA context is charged inside the (1 - utilization) headroom
  // (model/perf.hpp, vllm_*).
  // A stack that sizes its pool from the free memory (ExecutionStack::
  // serving_pool_from_free_memory, TensorRT-LLM) may use all of it; its KV pool is a share of
  // what is left (below).
  const bool free_share = p.stack.serving_pool_from_free_memory;
  const double usable = free_share ? 1.0 : s.serving.gpu_memory_utilization;
  TierMemory gpu{"gpu", 0, usable * gpu_allocatable_bytes(s.hardware.gpu), {}};
  TierMemory cpu{"cpu", 0, s.hardware.host.dram_gb * units::kGB, {}};
  TierMemory nvme{"nvme", 0,
                  s.hardware.nvme.count * s.hardware.nvme.drive.capacity_tb * 1e12, {}};
  add_weight_items(p, f, tp, gpu, cpu, nvme);
  // The profile's torch peak: the larger of the forward pass (hidden states in and out and the
  // FFN intermediate for every token of the budget; fused attention keeps no score matrix) and
  // the sampler pass over full-vocabulary logits.
  const double ffn_width = m.widest_ffn() * (m.ffn_kind == FfnKind::kGated ? 2.0 : 1.0);
  const double forward_peak = token_budget * (2.0 * m.hidden + ffn_width / tp) * 2.0;
  const double sampler_rows = std::min(double(max_sequences), token_budget);
  const double sampler_peak =
      em.vllm_profile_base_bytes + sampler_rows * m.vocab * em.vllm_sampler_bytes_per_logit;
  gpu.add("activations (profiled peak)", std::max(forward_peak, sampler_peak));
  gpu.add("non-torch memory (profiled)",
          tp > 1 ? em.vllm_non_torch_tp_bytes : em.vllm_non_torch_bytes);
  const KvCacheShape kv = stack_kv_cache(p.stack, m, p.kv_bits / 8.0, p.parallelism.tensor);
  out.kv_bytes_per_token = m.layers * kv.bytes_per_token_layer / kv.split;
  out.kv_pool_bytes = std::max(0.0, gpu.capacity_bytes - gpu.required_bytes);
  // TensorRT-LLM gives the pool KvCacheConfig free_gpu_memory_fraction of the memory free once
  // the model and its runtime buffers are placed (the same profiled activations and runtime
  // memory as above stand for those buffers); the rest stays free.
  if (free_share) out.kv_pool_bytes *= p.stack.kv_pool_free_fraction;
  // The longest request's cache: the window's worth on sliding layers where the stack keeps only
  // it (the serving workload counts a request's blocks the same way, stack_cached_context).
  const double longest_kv_bytes =
      stack_cached_context(p.stack, m, min_kv_tokens, s.serving.kv_tiers()) *
      out.kv_bytes_per_token;
  if (out.kv_pool_bytes < longest_kv_bytes) {
    gpu.add("kv cache (the longest request)", longest_kv_bytes);
    out.kv_pool_bytes = 0;
  } else {
    gpu.add("kv cache (paged block pool)", out.kv_pool_bytes);
  }
  add_serving_host_reserves(s, em, cpu);
  // Host DRAM and drive space set aside for the prefix cache's KV tiers
  // (sim/workloads/serving/kv_tiers.hpp): sized, powered and paid for like any other use.
  out.kv_tiers = kv_tiers_left(s.serving, cpu, nvme);
  const auto label = [](const char* key, double given) {
    return std::string("kv cache tier (") + key + (given < 0 ? ": auto)" : ")");
  };
  if (out.kv_tiers.host_bytes > 0)
    cpu.add(label("workload.kv_host_cache", s.serving.kv_host_cache_bytes),
            out.kv_tiers.host_bytes);
  if (out.kv_tiers.nvme_bytes > 0)
    nvme.add(label("workload.kv_nvme_cache", s.serving.kv_nvme_cache_bytes),
             out.kv_tiers.nvme_bytes);
  out.report.tiers = {gpu, cpu, nvme};
  finish_capacity(out.report);
  return out;
}

std::string dimm_layout_text(const HostSpec& host, double dimm_gib) {
  const int sockets = std::max(1, host.sockets), per_channel = std::max(1, host.dimms_per_channel);
  return std::to_string(sockets) + (sockets == 1 ? " socket x " : " sockets x ") +
         std::to_string(host.memory_channels) + " channels x " + std::to_string(per_channel) +
         (per_channel == 1 ? " DIMM" : " DIMMs") + " per channel of " + format::number(dimm_gib) +
         " GiB";
}

DramPopulation dram_population(double need_bytes, const HostSpec& host) {
  DramPopulation p;
  const double target_gb = std::max(0.0, need_bytes) * kDramHeadroom / units::kGB;
  const double max_gb = host.dram_gb;
  if (host.memory_channels > 0 && host.min_dimm_gib > 0) {
    p.dimms = std::max(1, host.sockets) * host.memory_channels * std::max(1, host.dimms_per_channel);
    auto total_gb = [&](double dimm_gib) { return p.dimms * dimm_gib * units::kGiB / units::kGB; };
    p.dimm_gib = host.min_dimm_gib;
    // The next DIMM size until the need fits or the platform's most is reached (a bound on the
    // steps keeps a corrupt input from looping): the double, or a non-binary size between.
    const auto next_size = [&](double gib) {
      double next = host.min_dimm_gib;  // the next binary size: min_dimm_gib doubled
      for (int k = 0; k < 64 && next <= gib; ++k) next *= 2;
      if (host.nonbinary_dimms)
        for (const double nb : kNonbinaryDimmGib)
          if (nb > gib && nb < next) next = nb;
      return next;
    };
    for (int i = 0; i < 64 && total_gb(p.dimm_gib) < target_gb && total_gb(p.dimm_gib) < max_gb;
         ++i)
      p.dimm_gib = next_size(p.dimm_gib);
    p.floor = p.dimm_gib == host.min_dimm_gib && total_gb(p.dimm_gib) > target_gb;
    p.dram_gb = total_gb(p.dimm_gib);
  } else {
    p.dimms = static_cast<int>(std::clamp(std::ceil(target_gb / kDramDimmGb), 1.0, 1e9));
    p.dram_gb = p.dimms * kDramDimmGb;
  }
  // The catalog states GiB populations in whole GB (32 x 64 GiB = 2199 GB): a population within
  // 1 GB of it is the catalog's own, not one the platform cannot hold.
  if (p.dram_gb > max_gb) {
    p.capped = p.dram_gb > max_gb + 1;
    p.dram_gb = max_gb;
  }
  return p;
}

double sized_dram_gb(double need_bytes, const HostSpec& host) {
  return dram_population(need_bytes, host).dram_gb;
}

}  // namespace tiersim
