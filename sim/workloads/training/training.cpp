// Training with ZeRO offload on the event engine.
//
// Per iteration the representative rank plays: forward over the modules (embedding, layers,
// head), backward in reverse (2x the forward FLOPs, plus one forward recompute with activation
// checkpointing), gradient reduction per module as soon as its backward finishes (all-reduce for
// stages 0-1, reduce-scatter for 2-3, over NVLink inside the node and the network across nodes),
// gradient offload to host/NVMe, then the optimizer step on the GPU or as CPU Adam over
// sub-groups streamed from NVMe, and the updated parameters' way back. ZeRO-3 fetches each
// module's partition from its tier (NVMe -> host -> PCIe) and all-gathers it before forward and
// again before backward, in a separate prefetching process, so transfers overlap compute and the
// bottleneck is read off the timeline. DeepSpeed's stage 1-2 CPU offload differs (see
// kOffloadGradGpuBytesPerParam): its gradient offload holds up the backward, and its step unscales
// the pinned gradients, then runs CPU Adam by tiles whose fp32 results a GPU kernel reads.
#include "sim/workloads/training/training.hpp"
#include "sim/workloads/training/names.hpp"
#include "sim/workloads/training/rules.hpp"
#include "sim/workloads/workload.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>

#include "model/errors.hpp"
#include "model/perf.hpp"
#include "model/power.hpp"
#include "model/training_memory.hpp"
#include "model/units.hpp"
#include "sim/workloads/checkpoint/checkpoint.hpp"
#include "sim/workloads/training/metrics.hpp"

namespace tiersim::sim {
namespace {

struct Module {
  double params = 0;      // elements
  double fwd_flops = 0;   // forward FLOPs for the rank's tokens
  double fwd_bytes = 0;   // forward device-memory traffic
};

// DeepSpeed's ZeRO stage 1-2 CPU offload (cpu_offload: true; offload_optimizer: cpu later), as
// the code of DeepSpeed v0.3.0 (the ZeRO-Offload tutorial's, 2020-09) does it; file:line at that
// tag. The same path holds through v0.8 (stage_1_and_2.py) except where noted.
//
// [bytes] of HBM traffic per parameter of the GPU passes the offload path adds in the backward
// (runtime/zero/stage2.py). Over every gradient: the copy into the contiguous bucket (645: read
// and write fp16; cpu_offload forces contiguous_gradients, 303) and the bucket's division by the
// data-parallel degree (733).
constexpr double kBucketGradGpuBytesPerParam = 4 + 4;
// Over the rank's partition: the gradient norm in fp64 (set_norm_for_param_grad_in_gpu, 847:
// .double().norm(2): read fp16, write and read fp64, 18 B), the overflow check (_has_inf_or_nan,
// 1561: float(x.float().sum()): read fp16, write and read fp32, 10 B) and the fp32 cast of the
// copy to the host (async_inplace_copy_grad_to_fp32_buffer_from_gpu, 879: read fp16, write fp32,
// 6 B).
constexpr double kOffloadGradGpuBytesPerParam = 18 + 10 + 6;
// [bytes] per parameter that go to the host: the fp32 cast (879-880), into the pinned fp32
// gradient partition (426).
constexpr double kOffloadGradHostBytesPerParam = 4;
// CPU Adam steps the partition in tiles of this many parameters; after each tile it launches a GPU
// kernel that reads the tile's updated fp32 parameters from a pinned staging buffer and writes
// them as fp16 (csrc/includes/cpu_adam.h:23 TILE = 1024 * 1024 * 1024 and 63-64 cudaMallocHost of
// two such buffers; csrc/adam/cpu_adam.cpp:549-555 launch_param_update per tile;
// csrc/adam/custom_cuda_kernel.cu param_update_kernel reads float4 from the host pointer). v0.5
// cut TILE to 128 Mi.
constexpr double kCpuAdamTileParams = 1024.0 * 1024.0 * 1024.0;
// [bytes] per parameter the copy kernel reads over PCIe: the fp32 values, cast on the GPU. Its
// reads are coalesced and aligned (a warp reads 512 contiguous bytes), which keep a PCIe link
// nearly as busy as a copy engine does (Min et al., "EMOGI", VLDB 2021): they run at the H2D rate.
constexpr double kCpuAdamStagedParamBytes = 4;
// Device copies of the fp16 parameters, in units of the parameter bytes (each copy reads and
// writes them once), that the all-gather of the updated partitions costs on the GPU besides its
// transfers. The step gathers by shards of allgather_bucket_size (5e8) parameters with
// dist.all_gather over a list of per-rank views (stage2.py:1439-1472; so through v0.6, while
// v0.7's all_gather_dp_groups gathers into one flat tensor). torch's ProcessGroupNCCL::allgather
// (torch/lib/c10d of 2020) gathers into a new flat buffer and then copies it back into the list
// (outputTensors[i][j].copy_(outputFlattened[i][j])): one copy of the whole parameters. With one
// rank NCCL's all-gather moves nothing between GPUs but copies the input into that buffer on the
// device (NCCL 2.7 src/enqueue.cc:430-433, cudaMemcpyAsync device to device): a second copy.
constexpr double kAllgatherCopyBackCopies = 1;
constexpr double kOneRankAllgatherCopies = 1;

// The execution model of a training step: the passes run at the share of the tensor peak that
// published training runs reach on the GPU's generation (model/perf.hpp training_pass_efficiency).
ExecutionModel training_exec(ExecutionModel em, const GpuSpec& gpu) {
  em.gemm_efficiency = training_pass_efficiency(gpu, em);
  return em;
}

class TrainingSim {
 public:
  TrainingSim(const Scenario& s, const SimOptions& o, int iterations, bool checkpoint)
      : s_(s),
        w_(s.training),
        em_(training_exec(o.exec, s.hardware.gpu)),
        iterations_(iterations),
        checkpoint_(checkpoint) {
    engine_.enable_trace(o.trace);
    engine_.keep_spans(o.breakdown);
    engine_.stop_when(o.stop);
  }
  // Returns the time at which the last iteration ended.
  double run();
  double last_iteration_s() const { return last_iteration_s_; }
  Engine& engine() { return engine_; }
  double gather_wait_s() const { return gather_wait_s_; }
  double optimizer_s() const { return optimizer_s_; }
  double passes_s() const { return passes_s_; }
  // [s] of the node's CPUs for the Adam pass over one iteration's partition (0: GPU optimizer).
  double cpu_adam_s() const {
    if (!cpu_step_) return 0;
    const double partition = w_.zero_stage >= 1 ? total_params_ / dp_ : total_params_;
    return rpn_ * partition / cpu_adam_node_params_per_s_;
  }

 private:
  Task fetcher(int iter);
  Task fetch_module(int module, int pass);
  Task reduce_grads(int module, Latch* done);
  Task optimizer_chunk(double params, int index, Semaphore* buffers, Latch* done);
  Task iteration(int iter);
  Task main_process();
  Task collective(double peer_bytes, double net_bytes, Tag tag);

  Flag& ready(int iter, int pass, int module) {
    return ready_[static_cast<std::size_t>((iter * 2 + pass) * n_modules_ + module)];
  }
  int module_at(int pass, int k) const { return pass == 0 ? k : n_modules_ - 1 - k; }

  const Scenario& s_;
  const TrainingWorkload& w_;
  ExecutionModel em_;
  int iterations_;
  bool checkpoint_;
  Engine engine_;
  Resource *gpu_ = nullptr, *h2d_ = nullptr, *d2h_ = nullptr, *peer_ = nullptr;
  Resource *net_ = nullptr, *nvme_ = nullptr, *cpu_ = nullptr;
  std::unique_ptr<Semaphore> slots_;
  std::deque<Flag> ready_;
  std::vector<Module> modules_;
  int n_modules_ = 0;
  StateBytes sb_;
  TrainingLayout layout_;
  double dp_ = 1, rpn_ = 1, nodes_ = 1, total_params_ = 0;
  double nvme_read_bps_ = 0, nvme_write_bps_ = 0, cpu_adam_node_params_per_s_ = 0;
  double cpu_unscale_node_params_per_s_ = 0;
  // The drives' load reading and writing at those rates (model/power.hpp nvme_load).
  double nvme_read_load_ = 1, nvme_write_load_ = 1;
  bool cpu_step_ = false;
  // DeepSpeed's stage 1-2 CPU offload path (see kOffloadGradGpuBytesPerParam): the gradient
  // offload holds up the backward pass, and the step unscales the pinned gradient partition, then
  // runs CPU Adam by tiles that stage fp32 parameters for the GPU.
  bool zero12_cpu_offload_ = false;
  // [params/s] of the node for unscaling the pinned gradient partitions (zero12_cpu_offload_).
  double pinned_unscale_node_params_per_s_ = 0;
  double last_iteration_s_ = 0;
  double gather_wait_s_ = 0, optimizer_s_ = 0, passes_s_ = 0;
  std::unique_ptr<Flag> checkpoint_done_;
  std::unique_ptr<CheckpointRun> checkpoint_run_;
};

Task TrainingSim::collective(double peer_bytes, double net_bytes, Tag tag) {
  if (net_ && net_bytes > 0) {
    // GCC 12 cannot keep a braced initializer list alive across co_await; name the demands.
    std::vector<Demand> demands{Demand{peer_, peer_bytes}, Demand{net_, net_bytes}};
    co_await engine_.use_all(std::move(demands), tag);
  } else if (peer_bytes > 0) {
    co_await peer_->use(peer_bytes, tag);
  }
}

Task TrainingSim::fetch_module(int module, int pass) {
  const double full = modules_[static_cast<std::size_t>(module)].params * sb_.params;
  const double part = full / dp_;
  const Tag tag{pass == 0 ? activity::kParamFetchFwd : activity::kParamFetchBwd, pass, module};
  if (w_.params == Tier::kNvme) {
    // Every rank of the node reads its partition from the shared array at the same time.
    co_await nvme_->use(rpn_ * part / nvme_read_bps_,
                        Tag{tag.activity, tag.phase, tag.item, nvme_read_load_});
    co_await h2d_->use(part, tag);
  } else if (w_.params == Tier::kCpu) {
    co_await h2d_->use(part, tag);
  }
  // All-gather: each rank receives the other ranks' partitions; across nodes each node receives
  // what its ranks do not hold once, then shares it over NVLink (hierarchical collective).
  co_await collective(ring_allgather_bytes(full, dp_), ring_allgather_bytes(full, nodes_),
                      Tag{activity::kAllgatherParams, pass, module});
}

Task TrainingSim::fetcher(int iter) {
  // One process walks forward then backward order, so prefetch slots are taken in the order the
  // compute process releases them.
  for (int pass = 0; pass < 2; ++pass)
    for (int k = 0; k < n_modules_; ++k) {
      const int module = module_at(pass, k);
      co_await slots_->acquire();
      co_await fetch_module(module, pass);
      ready(iter, pass, module).set();
    }
}

Task TrainingSim::reduce_grads(int module, Latch* done) {
  const double params = modules_[static_cast<std::size_t>(module)].params;
  const double g = params * sb_.grads;
  if (zero12_cpu_offload_) {
    // The GPU passes over the gradients before they leave: every gradient is bucketed, the rank's
    // partition checked and cast (kBucketGradGpuBytesPerParam, kOffloadGradGpuBytesPerParam).
    const double bytes =
        params * (kBucketGradGpuBytesPerParam + kOffloadGradGpuBytesPerParam / dp_);
    co_await gpu_->use(gpu_kernel_s(s_.hardware.gpu, em_, 0, bytes),
                       Tag{activity::kGradOffloadChecks, 1, module});
  }
  if (w_.zero_stage >= 2) {
    co_await collective(ring_reduce_scatter_bytes(g, dp_), ring_reduce_scatter_bytes(g, nodes_),
                        Tag{activity::kReduceScatterGrads, 1, module});
  } else {
    co_await collective(ring_allreduce_bytes(g, dp_), ring_allreduce_bytes(g, nodes_),
                        Tag{activity::kAllreduceGrads, 1, module});
  }
  const double held = w_.zero_stage >= 2 ? g / dp_ : g;
  // The offload path sends the rank's partition as fp32 (kOffloadGradHostBytesPerParam).
  const double offloaded =
      zero12_cpu_offload_ ? params / dp_ * kOffloadGradHostBytesPerParam : held;
  if (w_.gradients != Tier::kGpu)
    co_await d2h_->use(offloaded, Tag{activity::kGradOffload, 1, module});
  if (w_.gradients == Tier::kNvme)
    co_await nvme_->use(rpn_ * held / nvme_write_bps_,
                        Tag{activity::kGradSwapOut, 1, module, nvme_write_load_});
  done->count_down();
}

Task TrainingSim::optimizer_chunk(double params, int index, Semaphore* buffers, Latch* done) {
  const Tag tag{activity::kOptimizer, 2, index};
  if (w_.optimizer == Tier::kNvme)
    co_await nvme_->use(rpn_ * params * sb_.optimizer / nvme_read_bps_,
                        Tag{activity::kOptimSwapIn, 2, index, nvme_read_load_});
  if (w_.gradients == Tier::kNvme)
    co_await nvme_->use(rpn_ * params * sb_.grads / nvme_read_bps_,
                        Tag{activity::kGradSwapIn, 2, index, nvme_read_load_});
  if (w_.gradients == Tier::kGpu)
    co_await d2h_->use(params * sb_.grads, Tag{activity::kGradToHost, 2, index});
  // DeepSpeed unscales (and clips) the fp32 gradients in host memory in place before CPU Adam
  // steps them: stage_1_and_2.py and stage3.py unscale_and_clip_grads, grad.data.mul_(1 /
  // combined_scale), a pass of its own over the partition (DeepSpeed 0.3 to today; its timer is
  // optimizer_gradients).
  // The offload path of stages 1-2 unscales the whole partition before the step (iteration()).
  if (!zero12_cpu_offload_) co_await cpu_->use(rpn_ * params / cpu_unscale_node_params_per_s_, tag);
  co_await cpu_->use(rpn_ * params / cpu_adam_node_params_per_s_, tag);
  if (w_.optimizer == Tier::kNvme)
    co_await nvme_->use(rpn_ * params * sb_.optimizer / nvme_write_bps_,
                        Tag{activity::kOptimSwapOut, 2, index, nvme_write_load_});
  if (buffers) buffers->release();
  // Updated working-precision parameters go back to where they live.
  if (w_.params == Tier::kGpu)
    co_await h2d_->use(params * (zero12_cpu_offload_ ? kCpuAdamStagedParamBytes : sb_.params),
                       Tag{activity::kParamUpdate, 2, index});
  if (w_.params == Tier::kNvme)
    co_await nvme_->use(rpn_ * params * sb_.params / nvme_write_bps_,
                        Tag{activity::kParamSwapOut, 2, index, nvme_write_load_});
  done->count_down();
}

Task TrainingSim::iteration(int iter) {
  const bool zero3 = w_.zero_stage >= 3;
  const double recompute = w_.activation_checkpointing ? 1.0 : 0.0;
  const double iteration_start = engine_.now();
  if (zero3) {
    engine_.spawn(fetcher(iter));
  }
  Latch grads(engine_, n_modules_);
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 0; k < n_modules_; ++k) {
      const int module = module_at(pass, k);
      const Module& m = modules_[static_cast<std::size_t>(module)];
      if (zero3) {
        const double before = engine_.now();
        co_await ready(iter, pass, module).wait();
        gather_wait_s_ += engine_.now() - before;
      }
      const double factor = pass == 0 ? 1.0 : 2.0 + recompute;
      const double t = gpu_kernel_s(s_.hardware.gpu, em_, m.fwd_flops * factor, m.fwd_bytes * factor);
      co_await gpu_->use(t + em_.layer_overhead_s * factor,
                         Tag{pass == 0 ? activity::kForward : activity::kBackward, pass, module});
      if (zero3) slots_->release();
      if (pass == 1) {
        if (zero12_cpu_offload_) {
          // The offload path holds up the backward pass: the hook that fills the bucket runs on the
          // autograd thread; with overlap_comm it first waits for the whole device
          // (stage2.py:683-686 average_tensor, torch.cuda.synchronize()), then the overflow check
          // of every parameter (1561, float() of a device sum) waits on the reduction stream for
          // the previous parameter's copy to the host. No backward kernel is launched meanwhile.
          // (v0.8 drops the synchronize; the per-parameter check stays.)
          co_await reduce_grads(module, &grads);
        } else {
          engine_.spawn(reduce_grads(module, &grads));
        }
      }
    }
  }
  co_await grads.wait();
  passes_s_ = engine_.now() - iteration_start;
  // The optimizer must not change the states a checkpoint is still saving.
  if (checkpoint_done_ && iter > 0) co_await checkpoint_done_->wait();

  const double step_start = engine_.now();
  const double partition = w_.zero_stage >= 1 ? total_params_ / dp_ : total_params_;
  if (!cpu_step_) {
    // GPU Adam is memory-bound: it reads and writes the optimizer states, reads the gradients,
    // converts them to fp32 and writes the working-precision parameters.
    const double bytes = partition * (2 * sb_.optimizer + sb_.grads + 2 * 4.0 + sb_.params);
    co_await gpu_->use(gpu_kernel_s(s_.hardware.gpu, em_, 0, bytes),
                       Tag{activity::kOptimizer, 2, 0});
  } else {
    if (zero12_cpu_offload_) {
      // unscale_and_clip_grads over the pinned fp32 gradient partition before CPU Adam
      // (stage2.py:1372-1414, timer optimizer_gradients; 1506-1508 mul_).
      co_await cpu_->use(rpn_ * partition / pinned_unscale_node_params_per_s_,
                         Tag{activity::kOptimizer, 2, 0});
    }
    const ZeroBuffers zb = zero_buffers(w_);
    const double sub = zero12_cpu_offload_           ? kCpuAdamTileParams
                       : w_.optimizer == Tier::kNvme ? zb.nvme_sub_group_params
                                                     : zb.sub_group_params;
    const int chunks = std::max(1, int(std::ceil(partition / sub)));
    Latch done(engine_, chunks);
    // NVMe swapping streams sub-groups through two pinned buffers, so reading the next overlaps
    // stepping and writing back the current one.
    // The stage 1-2 offload path's tiles wait for nothing but the CPU: v0.3.0 launches each
    // tile's copy kernel on the current stream, flips its two staging buffers and steps the next
    // tile at once (cpu_adam.cpp:550-556; no stream synchronisation until v0.4.0's
    // SynchronizeStreams), so a tile's copy runs beside the next tiles' Adam.
    Semaphore buffers(engine_, 2);
    for (int c = 0; c < chunks; ++c) {
      if (w_.optimizer == Tier::kNvme) co_await buffers.acquire();
      engine_.spawn(optimizer_chunk(partition / chunks, c, w_.optimizer == Tier::kNvme ? &buffers : nullptr,
                                    &done));
    }
    co_await done.wait();
  }
  if (w_.zero_stage >= 1 && w_.zero_stage <= 2) {
    // Stages 1-2 keep full parameters on every rank: all-gather the updated partitions.
    const double full = total_params_ * sb_.params;
    co_await collective(ring_allgather_bytes(full, dp_), ring_allgather_bytes(full, nodes_),
                        Tag{activity::kAllgatherUpdated, 2, 0});
    if (zero12_cpu_offload_) {
      // The gather's own device copies (kAllgatherCopyBackCopies, kOneRankAllgatherCopies), which
      // run even on one GPU. Only on the offload path, which this file models at v0.3.0; other
      // stage 1-2 runs name no DeepSpeed version and may gather into one flat tensor.
      const double copies = kAllgatherCopyBackCopies + (dp_ > 1 ? 0.0 : kOneRankAllgatherCopies);
      co_await gpu_->use(gpu_kernel_s(s_.hardware.gpu, em_, 0, copies * 2 * full),
                         Tag{activity::kAllgatherUpdated, 2, 0});
    }
  }
  optimizer_s_ = engine_.now() - step_start;
}

Task TrainingSim::main_process() {
  for (int iter = 0; iter < iterations_; ++iter) {
    const double start = engine_.now();
    co_await iteration(iter);
    last_iteration_s_ = engine_.now() - start;
    if (checkpoint_ && iter == 0) {
      engine_.spawn(checkpoint_run_->run(checkpoint_done_.get()));
      // torch.save-style writers block the training loop until the file is durable.
      if (s_.checkpoint.writer == CheckpointWorkload::Writer::kTorchSave)
        co_await checkpoint_done_->wait();
    }
  }
}

double TrainingSim::run() {
  const LlmSpec& m = s_.model;
  const HostSpec& host = s_.hardware.host;
  const GpuSpec& gpu = s_.hardware.gpu;
  layout_ = training_layout(s_);
  dp_ = layout_.data_parallel;
  rpn_ = layout_.ranks_per_node;
  nodes_ = std::max(1, w_.nodes);
  sb_ = state_bytes_per_param(w_.precision, w_.optimizer_kind);
  cpu_step_ = w_.optimizer_on_cpu || w_.optimizer != Tier::kGpu;
  // (DeepSpeed offloads the optimizer of stages 1-2 to host memory only, never to NVMe.)
  zero12_cpu_offload_ = w_.optimizer == Tier::kCpu && w_.zero_stage >= 1 && w_.zero_stage <= 2 &&
                        w_.gradients == Tier::kCpu &&
                        w_.precision == TrainingWorkload::Precision::kMixed;

  // Modules: embedding (a gather), the layers, the head (one GEMM over the vocabulary).
  const ParamCounts pc = count_params(m);
  total_params_ = pc.total;
  const double tokens = layout_.micro_batch * w_.sequence_tokens;
  const double act = tokens * m.hidden * sb_.params;
  modules_.push_back({pc.embedding, 0, 2 * act});
  // A sliding-window model's attention runs as Megatron-LM's eager attention runs any: over every
  // key of the sequence under a mask (the s x s scores model/training_memory.cpp keeps), so the
  // window saves neither FLOPs nor memory here.
  for (int l = 0; l < m.layers; ++l)
    modules_.push_back({pc.per_layer,
                        layer_gemm_flops(m, tokens) + attention_flops(m, tokens, w_.sequence_tokens),
                        pc.per_layer * sb_.params + 16 * act});
  const double head_params = m.tied_embeddings ? pc.embedding : pc.lm_head;
  modules_.push_back({m.tied_embeddings ? 0.0 : pc.lm_head, 2 * tokens * head_params,
                      head_params * sb_.params + tokens * m.vocab * 6.0});
  n_modules_ = static_cast<int>(modules_.size());

  gpu_ = &engine_.add_resource(resource::kGpu.at(), WorkUnit::kSeconds, 1.0);
  h2d_ = &engine_.add_resource(resource::kPcieH2d.at(), WorkUnit::kBytes,
                               units::gbps_to_bytes_per_s(h2d_gbps(gpu, host)));
  d2h_ = &engine_.add_resource(resource::kPcieD2h.at(), WorkUnit::kBytes,
                               units::gbps_to_bytes_per_s(d2h_gbps(gpu, host)));
  // Inside a node every rank exchanges over its own NVLink (or PCIe peer) port.
  peer_ = &engine_.add_resource(resource::kGpuPeer.at(), WorkUnit::kBytes,
                                units::gbps_to_bytes_per_s(gpu_peer_gbps(gpu, host)));
  if (nodes_ > 1)
    net_ = &engine_.add_resource(resource::kNetwork.at(), WorkUnit::kBytes,
                                 units::gbps_to_bytes_per_s(w_.network_gbps));
  if (s_.hardware.nvme.count > 0) {
    nvme_ = &engine_.add_resource(resource::kNvme.at(), WorkUnit::kSeconds, 1.0);
    const ZeroBuffers zb = zero_buffers(w_);
    const auto t = nvme_array_timing(s_.hardware.nvme, host, s_.policy.aio,
                                     zb.nvme_sub_group_params * sb_.optimizer);
    nvme_read_bps_ = units::gbps_to_bytes_per_s(t.read_gbps);
    nvme_write_bps_ = units::gbps_to_bytes_per_s(t.write_gbps);
    // Every transfer runs at these rates: its load is that of one second's bytes in one second.
    nvme_read_load_ = nvme_load(s_.hardware.nvme, IoDirection::kRead, nvme_read_bps_, 1.0);
    nvme_write_load_ = nvme_load(s_.hardware.nvme, IoDirection::kWrite, nvme_write_bps_, 1.0);
  }
  cpu_ = &engine_.add_resource(resource::kCpu.at(), WorkUnit::kSeconds, 1.0);
  const double cpu_dram_bytes_per_s =
      units::gbps_to_bytes_per_s(host.dram_gbps) * em_.cpu_dram_efficiency;
  // The gradient unscaling reads and writes each fp32 gradient once.
  cpu_unscale_node_params_per_s_ = cpu_dram_bytes_per_s / (2 * 4.0);
  // A pinned buffer lives on one socket: the CUDA driver allocates and locks its pages when the
  // buffer is created (stage2.py:426 pin_memory()), from the creating thread, and Linux's default
  // policy takes them from that thread's node (numa(7), MPOL_DEFAULT: local allocation). A pass
  // over it runs at that socket's DRAM rate, whichever cores run it; each rank pins its own, so
  // the node's ranks spread over up to all sockets.
  {
    const double sockets = std::max(1, host.sockets);
    const double used = std::min(sockets, std::max(1.0, rpn_));
    pinned_unscale_node_params_per_s_ = cpu_unscale_node_params_per_s_ * used / sockets;
  }
  if (w_.cpu_adam_params_per_s > 0) {
    cpu_adam_node_params_per_s_ = w_.cpu_adam_params_per_s;
  } else {
    // CPU Adam streams every state through DRAM: it reads and writes the fp32 master weights and
    // moments, reads the fp32 gradients and writes the fp16 parameters; its vectorised arithmetic
    // (~12 FLOPs per parameter) is rarely the limit.
    const double bytes = 2 * sb_.optimizer + 4.0 + sb_.params;
    const double memory_rate = cpu_dram_bytes_per_s / bytes;
    const double compute_rate = host.cpu_fp32_gflops * units::kGiga * std::max(1, host.sockets) / 12.0;
    cpu_adam_node_params_per_s_ = compute_rate > 0 ? std::min(memory_rate, compute_rate) : memory_rate;
  }
  slots_ = std::make_unique<Semaphore>(engine_, s_.policy.prefetch_layers + 1);
  for (int i = 0; i < iterations_ * 2 * n_modules_; ++i) ready_.emplace_back(engine_);

  if (checkpoint_) {
    const CheckpointWorkload& c = s_.checkpoint;
    const int writers = std::max(1, std::min(c.writers_per_node, int(rpn_)));
    const double n = total_params_;
    // The node's share of the checkpoint: every rank's fp16 weights and optimizer partition
    // (data-parallel ranks hold replicas below stage 3; one copy is saved).
    const double weights = n * sb_.params / nodes_;
    const double optim = c.include_optimizer ? n * sb_.optimizer / nodes_ : 0.0;
    auto share = [](Tier t, Tier where) { return t == where ? 1.0 : 0.0; };
    CheckpointPlan plan = plan_for(c, writers);
    plan.gpu_bytes = (weights * share(w_.params, Tier::kGpu) + optim * share(w_.optimizer, Tier::kGpu)) / writers;
    plan.host_bytes = (weights * share(w_.params, Tier::kCpu) + optim * share(w_.optimizer, Tier::kCpu)) / writers;
    plan.nvme_bytes = (weights * share(w_.params, Tier::kNvme) + optim * share(w_.optimizer, Tier::kNvme)) / writers;
    plan.tensor_bytes = average_tensor_bytes(m, sb_.params);
    CheckpointResources res = make_checkpoint_resources(engine_, s_, writers, d2h_, nvme_);
    checkpoint_run_ = std::make_unique<CheckpointRun>(engine_, plan, std::move(res),
                                                      checkpoint_software(s_.hardware.host));
    checkpoint_done_ = std::make_unique<Flag>(engine_);
  }

  engine_.spawn(main_process());
  engine_.run();
  return engine_.now();
}

}  // namespace

RunResult simulate_training(const Scenario& scenario, const SimOptions& options) {
  RunResult result;
  result.workload = "training";
  const TrainingWorkload& w = scenario.training;
  if (const auto issue = training_rules::offload_issue(scenario))
    throw ModelError(std::string(issue->key) + ": " + issue->message);
  // The capacity model (tiersim capacity) lays ranks out over tensor x pipeline GPUs; the
  // simulated iteration does not.
  const auto& par = scenario.policy.parallelism;
  if (par.tensor * par.pipeline > 1)
    throw ModelError(
        "policy.parallelism: tensor and pipeline parallelism are not modelled for "
        "training runs (tiersim capacity sizes them); use policy.parallelism tensor: "
        "1, pipeline: 1");

  Scenario s = scenario;
  if (w.params_auto) {
    const CapacitySearch found = largest_trainable(s, options.exec);
    if (!found.found) {
      result.fits = false;
      result.shortfall = "even the smallest model of the family does not fit: " + found.limit;
      return result;
    }
    s.model = found.model;
    result.set(metric::kMaxParamsB, found.params / 1e9);
    result.set(metric::kMaxParamsLayers, found.model.layers);
    result.set(metric::kMaxParamsHidden, found.model.hidden);
  }
  const TrainingLayout layout = training_layout(s);
  if (s.training.global_batch % layout.data_parallel != 0)
    throw ModelError("global_batch (" + std::to_string(s.training.global_batch) +
                     ") must be a multiple of the data-parallel degree (" +
                     std::to_string(layout.data_parallel) + ")");
  const CapacityReport cap = training_capacity(s, options.exec);
  result.memory = cap.tiers;
  result.fits = cap.fits;
  result.shortfall = cap.shortfall;
  for (const auto& t : cap.tiers) result.set(metric::tier_memory_metric(t.tier), t.required_bytes);
  if (!cap.fits) return result;

  TrainingSim base(s, options, 2, false);
  const double base_end = base.run();
  const double iter_s = base.last_iteration_s();
  const double n = count_params(s.model).total;
  const double tokens_rank = layout.micro_batch * s.training.sequence_tokens;
  double model_flops = 0;
  {
    // Model FLOPs (forward + backward, without recompute), as MFU counts them.
    const ParamCounts pc = count_params(s.model);
    model_flops = 3.0 * (s.model.layers * (layer_gemm_flops(s.model, tokens_rank) +
                                           attention_flops(s.model, tokens_rank, s.training.sequence_tokens)) +
                         2.0 * tokens_rank * (s.model.tied_embeddings ? pc.embedding : pc.lm_head));
  }
  result.set(metric::kParamsB, n / 1e9);
  result.set(metric::kIterationS, iter_s);
  result.set(metric::kSamplesPerS, s.training.global_batch / iter_s);
  result.set(metric::kTokensPerS,
             double(s.training.global_batch) * s.training.sequence_tokens / iter_s);
  result.set(metric::kAchievedTflopsPerGpu, model_flops / iter_s / units::kTera);
  result.set(metric::kOptimizerStepS, base.optimizer_s());
  result.set(metric::kForwardBackwardS, base.passes_s());
  if (base.cpu_adam_s() > 0) result.set(metric::kCpuAdamS, base.cpu_adam_s());
  result.set(metric::kParamGatherWaitS, base.gather_wait_s() / 2);
  result.set(metric::kDataParallel, layout.data_parallel);
  collect_usage(base.engine(), base_end, result);

  if (s.training.checkpoint_interval_iters > 0) {
    // The same two iterations with a checkpoint after the first: what it adds is its cost.
    TrainingSim with(s, options, 2, true);
    const double end = with.run();
    const double stall = std::max(0.0, end - base_end);
    const double interval_s = s.training.checkpoint_interval_iters * iter_s;
    result.set(metric::kCheckpointStallS, stall);
    result.set(metric::kCheckpointOverheadPct, 100.0 * stall / (interval_s + stall));
    // The checkpoint on its own, from the same states and storage.
    Scenario alone = s;
    alone.kind = WorkloadKind::kCheckpoint;
    alone.checkpoint.weights_dtype = s.training.precision == TrainingWorkload::Precision::kFp32
                                         ? CheckpointWorkload::Dtype::kFp32
                                         : CheckpointWorkload::Dtype::kFp16;
    alone.checkpoint.writers_per_node =
        std::max(1, std::min(s.checkpoint.writers_per_node, layout.ranks_per_node));
    const RunResult c = simulate_checkpoint(alone, options);
    result.set(metric::kCheckpointS, c.get(metric::kCheckpointS));
    result.set(metric::kCheckpointBytes, c.get(metric::kCheckpointBytes));
    result.set(metric::kWriteGbps, c.get(metric::kWriteGbps));
  }
  return result;
}

namespace workloads {
const WorkloadOps training_workload{
    "training", WorkloadKind::kTraining,
    "training iterations with ZeRO stages and offload of parameters, gradients and optimizer "
    "states, with periodic checkpoints",
    &simulate_training};
}  // namespace workloads

}  // namespace tiersim::sim
