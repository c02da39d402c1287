// Offloaded LLM inference on the event engine: ZeRO-Inference's layer-by-layer weight streaming
// (and FlexGen's block schedule), with the KV cache on the GPU or in host DRAM.
//
// Two processes run per pipeline stage. The fetch process walks the stage's modules pass after
// pass, takes a prefetch slot, and moves each parameter tensor from its tier: NVMe straight into
// GPU memory (GDS), NVMe into a pinned swap buffer and then over PCIe (AIO), or host DRAM over
// PCIe. The compute process waits for a module's weights, runs it, and frees the slot. Everything
// competes for the same resources (NVMe array, PCIe each way, GPU, CPU), so overlap, queueing and
// the bottleneck are read off the timeline.
#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>

#include "model/capacity.hpp"
#include "model/errors.hpp"
#include "model/layout.hpp"
#include "model/units.hpp"
#include "sim/workloads/inference/inference.hpp"
#include "sim/workloads/workload.hpp"

namespace tiersim::sim {
namespace {

struct StageResources {
  Resource* gpu = nullptr;   // seconds of kernel time
  Resource* h2d = nullptr;   // bytes, host to this stage's GPU(s)
  Resource* d2h = nullptr;   // bytes, GPU(s) to host
  Resource* peer = nullptr;  // bytes, GPU-to-GPU (tensor-parallel all-reduce, pipeline hand-off)
  std::unique_ptr<Semaphore> slots;
  std::vector<int> modules;
};

class InferenceSim {
 public:
  InferenceSim(const Scenario& s, const SimOptions& o)
      : s_(s), em_(o.exec), p_(s.policy), m_(s.model), w_(s.inference) {
    engine_.enable_trace(o.trace);
  }

  RunResult run();

 private:
  Task fetch_stage(int stage);
  Task compute_stage(int stage);
  Task fetch_module(int stage, int module, int pass);
  Task aio_copy(Resource* h2d, double bytes, Tag tag, Latch* done);
  Task compute_module(int stage, int module, int pass, double sub_batch);

  Flag& weights_ready(int pass, int module) {
    return ready_[static_cast<std::size_t>(pass * n_modules_ + module)];
  }
  Flag& stage_input(int pass, int stage, int micro) {
    return input_[static_cast<std::size_t>((pass * n_stages_ + stage) * n_micro_ + micro)];
  }
  bool streamed(int module) const { return streamed_bytes_[static_cast<std::size_t>(module)] > 0; }

  const Scenario& s_;
  ExecutionModel em_;
  const Policy& p_;
  const LlmSpec& m_;
  const InferenceWorkload& w_;
  Engine engine_;
  std::vector<StageResources> stages_;
  Resource* nvme_ = nullptr;
  Resource* cpu_ = nullptr;
  std::unique_ptr<Semaphore> swap_buffers_;
  std::vector<WeightModule> modules_;
  std::vector<double> streamed_bytes_;
  NvmeArrayTiming nvme_timing_;
  std::deque<Flag> ready_;
  std::deque<Flag> input_;
  int n_modules_ = 0, n_stages_ = 1, n_micro_ = 1, passes_ = 1;
  double tp_ = 1;
  double prefill_end_s_ = 0;
  double weight_wait_s_ = 0;
  double cpu_attention_s_ = 0;
};

Task InferenceSim::aio_copy(Resource* h2d, double bytes, Tag tag, Latch* done) {
  co_await h2d->use(bytes, tag);
  swap_buffers_->release();
  done->count_down();
}

Task InferenceSim::fetch_module(int stage, int module, int pass) {
  StageResources& st = stages_[static_cast<std::size_t>(stage)];
  const WeightModule& mod = modules_[static_cast<std::size_t>(module)];
  const double small_limit = std::max(em_.small_param_bytes, p_.aio.block_size_bytes);
  int aio_copies = 0;
  if (p_.io_path == IoPath::kAio)
    for (const auto& t : mod.tensors)
      if (t.bytes * p_.weights.nvme > 0 && t.bytes >= small_limit) ++aio_copies;
  Latch copies(engine_, aio_copies);
  for (const auto& t : mod.tensors) {
    double nvme_bytes = t.bytes * p_.weights.nvme;
    double cpu_bytes = t.bytes * p_.weights.cpu;
    // DeepSpeed keeps small parameters in host memory even when offloading to NVMe.
    if (nvme_bytes > 0 && t.bytes < small_limit) {
      cpu_bytes += nvme_bytes;
      nvme_bytes = 0;
    }
    if (nvme_bytes <= 0 && cpu_bytes <= 0) continue;
    co_await engine_.delay(em_.fetch_overhead_s);
    if (nvme_bytes > 0) {
      const double read_s =
          nvme_timing_.read_latency_s + nvme_bytes / units::gbps_to_bytes_per_s(nvme_timing_.read_gbps);
      if (p_.io_path == IoPath::kGds) {
        // GCC 12 cannot keep a braced initializer list alive across co_await; name the demands.
        std::vector<Demand> demands{Demand{nvme_, read_s}, Demand{st.h2d, nvme_bytes / tp_}};
        co_await engine_.use_all(std::move(demands), Tag{"weights-nvme", pass, module});
      } else {
        co_await swap_buffers_->acquire();
        co_await nvme_->use(read_s, Tag{"weights-nvme", pass, module});
        engine_.spawn(aio_copy(st.h2d, nvme_bytes / tp_, Tag{"weights-bounce", pass, module},
                               &copies));
      }
    }
    if (cpu_bytes > 0) {
      const Tag tag{"weights-cpu", pass, module};
      if (p_.pin_memory) {
        co_await st.h2d->use(cpu_bytes / tp_, tag);
      } else {
        // Pageable memory: a CPU thread stages the copy, so it runs no faster than that memcpy
        // and occupies the CPU, serialising with CPU attention.
        const double bytes = cpu_bytes / tp_;
        const double copy_s =
            bytes / std::min(st.h2d->rate_per_s(), units::gbps_to_bytes_per_s(em_.pageable_copy_gbps));
        std::vector<Demand> demands{Demand{st.h2d, bytes}, Demand{cpu_, copy_s}};
        co_await engine_.use_all(std::move(demands), tag);
      }
    }
  }
  co_await copies.wait();
}

Task InferenceSim::fetch_stage(int stage) {
  StageResources& st = stages_[static_cast<std::size_t>(stage)];
  for (int pass = 0; pass < passes_; ++pass) {
    for (int module : st.modules) {
      if (!streamed(module)) {
        weights_ready(pass, module).set();
        continue;
      }
      co_await st.slots->acquire();
      co_await fetch_module(stage, module, pass);
      weights_ready(pass, module).set();
    }
  }
}

Task InferenceSim::compute_module(int stage, int module, int pass, double sub_batch) {
  StageResources& st = stages_[static_cast<std::size_t>(stage)];
  const WeightModule& mod = modules_[static_cast<std::size_t>(module)];
  const GpuSpec& gpu = s_.hardware.gpu;
  const bool prefill = pass == 0;
  const double tokens = prefill ? sub_batch * w_.prompt_tokens : sub_batch;
  const double context = prefill ? double(w_.prompt_tokens) : double(w_.prompt_tokens + pass);
  const Tag tag{"compute", pass, module};

  if (mod.kind != WeightModule::Kind::kLayer) {
    // Embedding lookup is a gather; the head is one GEMM for the last position of each sequence.
    double flops = 0, bytes = tokens * m_.hidden * 2.0;
    if (mod.kind == WeightModule::Kind::kHead) {
      flops = 2.0 * sub_batch * m_.vocab * m_.hidden / tp_;
      bytes += mod.elements() * 2.0 / tp_;
    }
    co_await st.gpu->use(gpu_kernel_s(gpu, em_, flops, bytes) + em_.layer_overhead_s / 4, tag);
    co_return;
  }

  const double kv_tok = kv_bytes_per_token_layer(m_, p_.kv_bits / 8.0);
  const double gemm_flops = layer_gemm_flops(m_, tokens) / tp_;
  const double active = layer_active_params(m_);
  double weight_read_bytes = active * 2.0 / tp_;
  double dequant_s = 0;
  if (p_.weight_bits < 16) {
    // Packed weights are read, fp16 copies written, then the GEMM reads them again.
    dequant_s = gpu_kernel_s(gpu, em_, 0,
                             mod.elements() * (bytes_per_weight(p_.weight_bits, p_.quant_group_size) + 2.0) / tp_);
  }
  const double act_bytes = tokens * m_.hidden * 2.0 * 8.0 / tp_;
  const double gpu_kv = p_.kv_cache.gpu, cpu_kv = p_.kv_cache.cpu;
  const double attn_flops = attention_flops(m_, tokens, context);

  // ZeRO-Inference's KV offload follows the transformers fork (model/llm.hpp HostKvCache); the
  // FlexGen block schedule keeps an fp16 host cache.
  const bool zero_inference = p_.schedule == Schedule::kZeroInference;
  const HostKvCache host_kv = zero_inference_host_kv(m_);

  if (!prefill && cpu_kv > 0) {
    // Decode with the KV cache in host DRAM: Q/K/V projections on the GPU, the new K/V and the
    // query go to the host (blocking copies), attention runs on the CPU, its output comes back.
    const double qkv_share = (2.0 * m_.hidden * m_.hidden / 2 + 2.0 * m_.hidden * m_.kv_dim()) /
                             layer_active_params(m_);
    const double part1 =
        gpu_kernel_s(gpu, em_, gemm_flops * qkv_share, weight_read_bytes * qkv_share + act_bytes / 2);
    co_await st.gpu->use(dequant_s + part1 + em_.layer_overhead_s / 2, tag);
    CpuAttentionWork work;
    double to_host_bytes = sub_batch * (m_.hidden + 2.0 * m_.kv_dim()) * 2.0 / tp_;
    double from_host_bytes = sub_batch * m_.hidden * 2.0 / tp_;
    if (zero_inference) {
      work = zero_inference_decode_attention(m_, sub_batch * cpu_kv, context);
      to_host_bytes =
          sub_batch *
          (m_.hidden * host_kv.query_bytes_per_elem + 2.0 * m_.kv_dim() * host_kv.bytes_per_elem) /
          tp_;
      from_host_bytes = sub_batch * m_.hidden * host_kv.output_bytes_per_elem / tp_;
    } else {
      work.flops = attn_flops * cpu_kv;
      work.fp32 = false;
      work.dram_bytes = sub_batch * context * kv_tok * cpu_kv;
    }
    co_await st.d2h->use(to_host_bytes, Tag{"kv-to-host", pass, module});
    const double cpu_s = cpu_attention_s(s_.hardware.host, em_, work);
    cpu_attention_s_ += cpu_s;
    co_await cpu_->use(cpu_s, Tag{"attention-cpu", pass, module});
    co_await st.h2d->use(from_host_bytes, Tag{"attention-out", pass, module});
    const double part2 = gpu_kernel_s(
        gpu, em_, gemm_flops * (1 - qkv_share) + attn_flops * gpu_kv / tp_,
        weight_read_bytes * (1 - qkv_share) + act_bytes / 2 + sub_batch * context * kv_tok * gpu_kv / tp_);
    co_await st.gpu->use(part2 + em_.layer_overhead_s / 2, tag);
  } else {
    double kv_read = prefill ? 0.0 : sub_batch * context * kv_tok * gpu_kv / tp_;
    double kv_write = tokens * kv_tok / tp_;
    // Eager attention materialises the score matrix in prefill: read and written in fp16.
    double score_bytes =
        prefill ? 2.0 * 2.0 * sub_batch * (m_.heads / tp_) * context * context : 0.0;
    const double t = gpu_kernel_s(gpu, em_, gemm_flops + attn_flops / tp_,
                                  weight_read_bytes + act_bytes + kv_read + kv_write + score_bytes);
    co_await st.gpu->use(dequant_s + t + em_.layer_overhead_s, tag);
    if (prefill && cpu_kv > 0) {
      const Tag kv_tag{"kv-offload", pass, module};
      if (!zero_inference) {
        co_await st.d2h->use(tokens * kv_tok * cpu_kv / tp_, kv_tag);
      } else {
        // The prompt's K/V go into the unpinned host buffer: the driver stages the copy and one
        // CPU thread copies it into pageable memory, faulting in the pages when the buffer was
        // freshly allocated for this generate() call.
        const double bytes =
            tokens * kv_bytes_per_token_layer(m_, host_kv.bytes_per_elem) * cpu_kv / tp_;
        double copy_s = bytes / std::min(st.d2h->rate_per_s(),
                                         units::gbps_to_bytes_per_s(em_.pageable_copy_gbps));
        if (host_kv.fresh_each_generate)
          copy_s += bytes / units::gbps_to_bytes_per_s(em_.fresh_page_gbps);
        std::vector<Demand> demands{Demand{st.d2h, bytes}, Demand{cpu_, copy_s}};
        co_await engine_.use_all(std::move(demands), kv_tag);
      }
    }
  }
  if (tp_ > 1) {
    // Two ring all-reduces of the hidden states per layer (after attention and after the FFN).
    const double bytes = tokens * m_.hidden * 2.0;
    co_await st.peer->use(2.0 * 2.0 * (tp_ - 1) / tp_ * bytes, Tag{"allreduce", pass, module});
  }
}

Task InferenceSim::compute_stage(int stage) {
  StageResources& st = stages_[static_cast<std::size_t>(stage)];
  const double micro_batch = double(w_.batch) / n_micro_;
  // Only FlexGen's block schedule splits the batch into GPU batches that share one weight fetch.
  const int gpu_batches =
      p_.schedule == Schedule::kFlexGenBlock ? std::max(1, p_.gpu_batches) : 1;
  for (int pass = 0; pass < passes_; ++pass) {
    for (int micro = 0; micro < n_micro_; ++micro) {
      co_await stage_input(pass, stage, micro).wait();
      for (int module : st.modules) {
        if (micro == 0) {
          const double before = engine_.now();
          co_await weights_ready(pass, module).wait();
          if (stage == 0) weight_wait_s_ += engine_.now() - before;
        }
        for (int g = 0; g < gpu_batches; ++g)
          co_await compute_module(stage, module, pass, micro_batch / gpu_batches);
        if (micro == n_micro_ - 1 && streamed(module)) st.slots->release();
      }
      if (stage + 1 < n_stages_) {
        const double tokens = pass == 0 ? micro_batch * w_.prompt_tokens : micro_batch;
        co_await st.peer->use(tokens * m_.hidden * 2.0, Tag{"activations", pass, stage});
        stage_input(pass, stage + 1, micro).set();
      } else {
        if (pass == 0 && micro == n_micro_ - 1) prefill_end_s_ = engine_.now();
        if (pass + 1 < passes_) stage_input(pass + 1, 0, micro).set();
      }
    }
  }
}

RunResult InferenceSim::run() {
  RunResult result;
  result.workload = "inference";
  const CapacityReport cap = inference_capacity(s_, em_);
  result.memory = cap.tiers;
  result.fits = cap.fits;
  result.shortfall = cap.shortfall;
  if (!cap.fits) return result;

  if (p_.kv_cache.nvme > 0)
    throw ModelError("KV cache on NVMe is not modelled; place it on gpu and/or cpu");
  if (p_.weights.nvme > 0 && s_.hardware.nvme.count <= 0)
    throw ModelError("weights on nvme need hardware.nvme.count >= 1");
  const auto& par = p_.parallelism;
  if (m_.heads % par.tensor != 0 || m_.kv_heads % par.tensor != 0)
    throw ModelError("tensor-parallel degree " + std::to_string(par.tensor) +
                     " must divide the model's heads (" + std::to_string(m_.heads) +
                     ") and KV heads (" + std::to_string(m_.kv_heads) + ")");
  if (par.pipeline > m_.layers)
    throw ModelError("pipeline degree exceeds the number of layers");
  if (par.micro_batches > 1 && (p_.weights.cpu + p_.weights.nvme) > 0)
    throw ModelError("pipeline micro-batches with streamed weights are not modelled: every "
                     "micro-batch would re-fetch the stage's layers; use micro_batches: 1");
  if (double(par.tensor) * par.pipeline > s_.hardware.gpu_count)
    throw ModelError("parallelism needs " + std::to_string(par.tensor * par.pipeline) +
                     " GPUs but hardware.gpu.count is " + std::to_string(s_.hardware.gpu_count));

  tp_ = par.tensor;
  n_stages_ = par.pipeline;
  n_micro_ = std::max(1, std::min(par.micro_batches, w_.batch));
  passes_ = std::max(1, w_.gen_tokens);
  modules_ = weight_modules(m_, p_);
  n_modules_ = static_cast<int>(modules_.size());
  for (const auto& mod : modules_) streamed_bytes_.push_back(mod.bytes() * (p_.weights.cpu + p_.weights.nvme));

  const HostSpec& host = s_.hardware.host;
  const GpuSpec& gpu = s_.hardware.gpu;
  stages_.resize(static_cast<std::size_t>(n_stages_));
  for (int i = 0; i < n_stages_; ++i) {
    const std::string suffix = n_stages_ > 1 ? std::to_string(i) : "";
    auto& st = stages_[static_cast<std::size_t>(i)];
    st.gpu = &engine_.add_resource("gpu" + suffix, "s", 1.0);
    st.h2d = &engine_.add_resource("pcie-h2d" + suffix, "bytes",
                                   units::gbps_to_bytes_per_s(h2d_gbps(gpu, host)));
    st.d2h = &engine_.add_resource("pcie-d2h" + suffix, "bytes",
                                   units::gbps_to_bytes_per_s(d2h_gbps(gpu, host)));
    st.peer = &engine_.add_resource("gpu-peer" + suffix, "bytes",
                                    units::gbps_to_bytes_per_s(gpu_peer_gbps(gpu, host)));
    st.slots = std::make_unique<Semaphore>(engine_, p_.prefetch_layers + 1);
  }
  // Layers in contiguous blocks over the stages; the embedding on the first, the head on the last.
  for (int mod = 0; mod < n_modules_; ++mod) {
    const auto& wm = modules_[static_cast<std::size_t>(mod)];
    int stage = 0;
    if (wm.kind == WeightModule::Kind::kHead) stage = n_stages_ - 1;
    if (wm.kind == WeightModule::Kind::kLayer) stage = wm.layer * n_stages_ / m_.layers;
    stages_[static_cast<std::size_t>(stage)].modules.push_back(mod);
  }
  if (s_.hardware.nvme.count > 0) {
    nvme_ = &engine_.add_resource("nvme", "s", 1.0);
    double largest = 0;
    for (const auto& mod : modules_)
      for (const auto& t : mod.tensors) largest = std::max(largest, t.bytes);
    nvme_timing_ = nvme_array_timing(s_.hardware.nvme, host, p_.aio, largest * p_.weights.nvme);
  }
  cpu_ = &engine_.add_resource("cpu", "s", 1.0);
  swap_buffers_ = std::make_unique<Semaphore>(engine_, std::max(1, p_.aio.swap_buffers));

  for (int pass = 0; pass < passes_; ++pass)
    for (int mod = 0; mod < n_modules_; ++mod) ready_.emplace_back(engine_);
  for (int i = 0; i < passes_ * n_stages_ * n_micro_; ++i) input_.emplace_back(engine_);
  for (int micro = 0; micro < n_micro_; ++micro) stage_input(0, 0, micro).set();

  for (int i = 0; i < n_stages_; ++i) {
    engine_.spawn(fetch_stage(i));
    engine_.spawn(compute_stage(i));
  }
  engine_.run();

  const double total_s = engine_.now();
  const double prefill_s = prefill_end_s_;
  const double decode_s = total_s - prefill_s;
  const double generated = double(w_.batch) * w_.gen_tokens;
  result.set("prefill_s", prefill_s, "s");
  result.set("ttft_s", prefill_s, "s");
  result.set("decode_s", decode_s, "s");
  result.set("decode_s_per_token", w_.gen_tokens > 1 ? decode_s / (w_.gen_tokens - 1) : 0.0, "s");
  result.set("total_s", total_s, "s");
  result.set("throughput_tokens_per_s", total_s > 0 ? generated / total_s : 0.0, "tokens/s");
  result.set("generated_tokens", generated, "tokens");
  result.set("weight_wait_s", weight_wait_s_, "s");
  result.set("cpu_attention_s", cpu_attention_s_, "s");
  result.set("weights_bytes", model_weight_bytes(m_, p_), "bytes");
  if (nvme_) result.set("nvme_read_gbps_model", nvme_timing_.read_gbps, "GB/s");
  collect_usage(engine_, total_s, result);
  return result;
}

}  // namespace

RunResult simulate_inference(const Scenario& scenario, const SimOptions& options) {
  InferenceSim sim(scenario, options);
  return sim.run();
}

namespace workloads {
const WorkloadOps inference_workload{
    "inference", WorkloadKind::kInference,
    "LLM generation with weights and KV cache streamed from GPU, DRAM or NVMe (ZeRO-Inference, "
    "FlexGen block schedule, tensor and pipeline parallelism)",
    kCapEnergyAndCost | kCapGeneratesTokens, &simulate_inference};
}  // namespace workloads

}  // namespace tiersim::sim
