// Checkpoint writers on the event engine (see sim/workloads/checkpoint/checkpoint.hpp for the mechanisms).
#include "sim/workloads/checkpoint/checkpoint.hpp"
#include "sim/workloads/workload.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "model/errors.hpp"
#include "model/layout.hpp"
#include "model/perf.hpp"
#include "model/power.hpp"
#include "model/training_memory.hpp"
#include "model/units.hpp"
#include "sim/workloads/checkpoint/metrics.hpp"

namespace tiersim::sim {

namespace {
double dtype_bytes(CheckpointWorkload::Dtype d) {
  return d == CheckpointWorkload::Dtype::kFp32 ? 4.0 : 2.0;
}
double bytes_per_s(double gbps) { return units::gbps_to_bytes_per_s(gbps); }
}  // namespace

double checkpoint_bytes(const Scenario& s) {
  const CheckpointWorkload& c = s.checkpoint;
  if (c.size_bytes > 0) return c.size_bytes;
  const double n = count_params(s.model).total;
  double bytes = n * dtype_bytes(c.weights_dtype);
  if (c.include_optimizer)
    bytes += n * state_bytes_per_param(s.training.precision, s.training.optimizer_kind).optimizer;
  return bytes;
}

double average_tensor_bytes(const LlmSpec& m, double bytes_per_param) {
  double elements = 0, tensors = 0;
  for (const auto& mod : weight_modules(m, Policy{}))
    for (const auto& t : mod.tensors) {
      elements += t.elements;
      tensors += 1;
    }
  return tensors > 0 ? elements / tensors * bytes_per_param : 64e6;
}

CheckpointSoftware checkpoint_software(const HostSpec& host) {
  CheckpointSoftware sw;
  const double copy_gbps = pageable_copy_gbps(host, sw.pageable_copy_gbps);
  const double page_cache_s_per_gb = 1.0 / sw.page_cache_write_gbps - 1.0 / sw.pageable_copy_gbps;
  sw.pageable_copy_gbps = copy_gbps;
  sw.page_cache_write_gbps = 1.0 / (1.0 / copy_gbps + page_cache_s_per_gb);
  sw.fresh_allocation_gbps = fresh_allocation_rate_gbps(host);
  return sw;
}

CheckpointPlan plan_for(const CheckpointWorkload& c, int writers) {
  CheckpointPlan plan;
  plan.writer = c.writer;
  plan.writers = writers;
  plan.io_buffer_bytes = c.io_buffer_bytes;
  plan.serialization = c.serialization;
  plan.pickled_source_bytes = c.pickled_source_bytes;
  return plan;
}

CheckpointResources make_checkpoint_resources(Engine& engine, const Scenario& s, int writers,
                                              Resource* d2h0, Resource* nvme) {
  const CheckpointWorkload& c = s.checkpoint;
  CheckpointResources r;
  const double d2h = units::gbps_to_bytes_per_s(d2h_gbps(s.hardware.gpu, s.hardware.host));
  for (int w = 0; w < writers; ++w) {
    r.d2h.push_back(w == 0 && d2h0
                        ? d2h0
                        : &engine.add_resource(resource::kCkptD2h.at(w), WorkUnit::kBytes, d2h));
    r.threads.push_back(&engine.add_resource(resource::kCkptThread.at(w), WorkUnit::kSeconds, 1.0));
  }
  if (c.target.kind == StorageTarget::Kind::kNetwork) {
    if (c.target.per_node_gbps <= 0 || c.target.aggregate_gbps <= 0)
      throw ModelError("a network checkpoint target needs per_node_gbps and aggregate_gbps > 0");
    const double nodes = std::max(1, s.training.nodes);
    r.net_node = &engine.add_resource(resource::kStorageClient.at(), WorkUnit::kBytes,
                                      bytes_per_s(c.target.per_node_gbps));
    // Every node writes at once; symmetric nodes each get an equal share of the servers.
    r.net_servers = &engine.add_resource(resource::kStorageServers.at(), WorkUnit::kBytes,
                                         bytes_per_s(c.target.aggregate_gbps / nodes));
  }
  if (s.hardware.nvme.count > 0) {
    r.nvme = nvme ? nvme : &engine.add_resource(resource::kNvme.at(), WorkUnit::kSeconds, 1.0);
    const CheckpointSoftware sw;
    const double buffer = std::max(c.io_buffer_bytes, 1.0);
    const auto direct = nvme_array_timing(s.hardware.nvme, s.hardware.host, s.policy.aio, buffer);
    const auto buffered = nvme_array_timing(s.hardware.nvme, s.hardware.host, sw.writeback, buffer);
    r.direct_write_gbps = direct.write_gbps;
    r.buffered_write_gbps = buffered.write_gbps;
    r.read_gbps = direct.read_gbps;
    // Every transfer runs at these rates: its load is that of one second's bytes in one second.
    const auto load = [&](IoDirection dir, double gbps) {
      return nvme_load(s.hardware.nvme, dir, bytes_per_s(gbps), 1.0);
    };
    r.direct_write_load = load(IoDirection::kWrite, r.direct_write_gbps);
    r.buffered_write_load = load(IoDirection::kWrite, r.buffered_write_gbps);
    r.read_load = load(IoDirection::kRead, r.read_gbps);
  } else if (c.target.kind == StorageTarget::Kind::kLocalNvme) {
    throw ModelError("a local_nvme checkpoint target needs hardware.nvme.count >= 1");
  }
  return r;
}

Task CheckpointRun::store(double bytes, bool direct, Latch* written, Semaphore* buffer) {
  const Tag tag{activity::kCheckpointWrite, 0, 0};
  if (res_.net_node) {
    std::vector<Demand> demands{Demand{res_.net_node, bytes}, Demand{res_.net_servers, bytes}};
    co_await engine_.use_all(std::move(demands), tag);
  } else {
    const double gbps = direct ? res_.direct_write_gbps : res_.buffered_write_gbps;
    co_await res_.nvme->use(
        bytes / bytes_per_s(gbps),
        Tag{tag.activity, 0, 0, direct ? res_.direct_write_load : res_.buffered_write_load});
  }
  if (buffer) buffer->release();
  written->count_down();
}

Task CheckpointRun::pageable_dma(Resource* d2h, double bytes, int chunk, Latch* done) {
  co_await d2h->use(bytes, Tag{activity::kCkptD2hPageable, 0, chunk});
  done->count_down();
}

Task CheckpointRun::pickle(Resource* thread) {
  // The object graph is pickled before the first storage is written, on the writer's thread.
  if (plan_.pickled_source_bytes > 0)
    co_await thread->use(plan_.pickled_source_bytes * sw_.source_parse_s_per_byte,
                         Tag{activity::kCkptPickleSource, 0, 0});
}

namespace {

// Walks a checkpoint in chunks of `chunk_bytes`, visiting tensors in order: GPU-resident first,
// then host-resident, then NVMe-resident; says where each chunk's bytes come from.
struct ChunkWalk {
  struct Chunk {
    double bytes, from_gpu, from_host, from_nvme;
  };
  // `key`: the option that sets chunk_bytes, for the error when the chunks of all the plan's
  // writers are too many.
  ChunkWalk(const CheckpointPlan& plan, double chunk_bytes, const char* key)
      : chunk(chunk_bytes),
        left(plan.gpu_bytes + plan.host_bytes + plan.nvme_bytes),
        gpu_left(plan.gpu_bytes),
        nvme_left(plan.nvme_bytes),
        chunks(transfer_pieces(left, chunk, key, std::max(1, plan.writers))) {}
  Chunk next() {
    const double b = std::min(chunk, left);
    left -= b;
    const double from_gpu = std::min(b, gpu_left);
    gpu_left -= from_gpu;
    const double from_nvme = std::min(b - from_gpu, nvme_left);
    nvme_left -= from_nvme;
    return {b, from_gpu, b - from_gpu - from_nvme, from_nvme};
  }
  double chunk, left, gpu_left, nvme_left;
  int chunks;
};

// torch.save's unit is the model's average tensor, not an option; named by what sets it.
constexpr const char* kTensorKey = "model (its average tensor size)";
constexpr const char* kBufferKey = "workload.io_buffer";

}  // namespace

CheckpointRun::CheckpointRun(Engine& engine, CheckpointPlan plan, CheckpointResources res,
                             CheckpointSoftware sw)
    : engine_(engine), plan_(plan), res_(std::move(res)), sw_(sw) {
  // The walks the writers will make, checked here: inside a writer's coroutine the error would
  // surface only when the engine runs it. An io_buffer of 1 byte used to wrap the chunk count
  // (a checkpoint "in 4e-10 s"), and 8-64 bytes ran for minutes.
  if (plan_.writer == CheckpointWorkload::Writer::kTorchSave)
    (void)ChunkWalk(plan_, plan_.tensor_bytes, kTensorKey);
  else
    (void)ChunkWalk(plan_, plan_.io_buffer_bytes, kBufferKey);
}

Task CheckpointRun::torch_save_writer(int w, Latch* finished) {
  Resource* d2h = res_.d2h[static_cast<std::size_t>(w)];
  Resource* thread = res_.threads[static_cast<std::size_t>(w)];
  ChunkWalk walk(plan_, plan_.tensor_bytes, kTensorKey);
  Latch written(engine_, walk.chunks);
  co_await pickle(thread);
  const bool zip = plan_.serialization == CheckpointWorkload::Serialization::kZipfile;
  for (int i = 0; i < walk.chunks; ++i) {
    const auto [b, from_gpu, from_host, from_nvme] = walk.next();
    if (from_gpu > 0) {
      // The driver's staging memcpy lands in a fresh CPU storage: every page faults in, and is
      // unmapped again when the storage is freed after its write.
      const double thread_s = from_gpu / bytes_per_s(sw_.pageable_copy_gbps) +
                              from_gpu / bytes_per_s(sw_.fresh_allocation_gbps);
      if (sw_.staged_copy_overlaps_dma) {
        // The link's DMA runs under the thread's copy (CheckpointSoftware). Two bookings, not one
        // flow over both: the link carries only the bytes, so other transfers sharing it (the
        // training's, for writer 0) are not held up for the thread's whole copy.
        Latch dma_done(engine_, 1);
        engine_.spawn(pageable_dma(d2h, from_gpu, i, &dma_done));
        co_await thread->use(thread_s, Tag{activity::kCkptStagingCopy, 0, i});
        co_await dma_done.wait();
      } else {
        co_await d2h->use(from_gpu, Tag{activity::kCkptD2hPageable, 0, i});
        co_await thread->use(thread_s, Tag{activity::kCkptStagingCopy, 0, i});
      }
    }
    if (from_nvme > 0)
      co_await res_.nvme->use(from_nvme / bytes_per_s(res_.read_gbps),
                              Tag{activity::kCkptRead, 0, i, res_.read_load});
    // One thread serialises (the zip format's CRC-32) and copies the record into the page cache.
    co_await thread->use(
        (zip ? b / bytes_per_s(sw_.crc32_gbps) : 0.0) + b / bytes_per_s(sw_.page_cache_write_gbps),
        Tag{activity::kCkptSerialiseWrite, 0, i});
    // Dirty pages drain in the background; fsync at the end waits for all of them.
    engine_.spawn(store(b, false, &written, nullptr));
  }
  co_await written.wait();
  finished->count_down();
}

Task CheckpointRun::fast_persist_writer(int w, Latch* finished) {
  Resource* d2h = res_.d2h[static_cast<std::size_t>(w)];
  Resource* thread = res_.threads[static_cast<std::size_t>(w)];
  ChunkWalk walk(plan_, plan_.io_buffer_bytes, kBufferKey);
  // Two pinned buffers: one fills while the other's O_DIRECT write is in flight.
  Semaphore buffers(engine_, 2);
  Latch written(engine_, walk.chunks);
  co_await pickle(thread);
  for (int i = 0; i < walk.chunks; ++i) {
    const auto [b, from_gpu, from_host, from_nvme] = walk.next();
    co_await buffers.acquire();
    if (from_gpu > 0) co_await d2h->use(from_gpu, Tag{activity::kCkptD2hPinned, 0, i});
    if (from_host > 0)
      co_await thread->use(from_host / bytes_per_s(sw_.pageable_copy_gbps),
                           Tag{activity::kCkptCopy, 0, i});
    if (from_nvme > 0)
      co_await res_.nvme->use(from_nvme / bytes_per_s(res_.read_gbps),
                              Tag{activity::kCkptRead, 0, i, res_.read_load});
    engine_.spawn(store(b, true, &written, &buffers));
  }
  co_await written.wait();
  finished->count_down();
}

Task CheckpointRun::run(Flag* done) {
  Latch finished(engine_, plan_.writers);
  for (int w = 0; w < plan_.writers; ++w)
    engine_.spawn(plan_.writer == CheckpointWorkload::Writer::kTorchSave
                      ? torch_save_writer(w, &finished)
                      : fast_persist_writer(w, &finished));
  co_await finished.wait();
  done->set();
}

RunResult simulate_checkpoint(const Scenario& s, const SimOptions& options) {
  RunResult result;
  result.workload = "checkpoint";
  const CheckpointWorkload& c = s.checkpoint;
  const int nodes = std::max(1, s.training.nodes);
  const double total = checkpoint_bytes(s);
  // Writers take GPUs in turn; with more writers than GPUs some share a link.
  const int writers = std::max(1, c.writers_per_node);
  CheckpointPlan plan = plan_for(c, writers);
  plan.gpu_bytes = total / nodes / writers;  // standalone: the state is in GPU memory
  plan.tensor_bytes = average_tensor_bytes(s.model, dtype_bytes(c.weights_dtype));

  Engine engine;
  engine.enable_trace(options.trace);
  engine.keep_spans(options.breakdown);
  engine.stop_when(options.stop);
  CheckpointResources res = make_checkpoint_resources(engine, s, std::min(writers, s.hardware.gpu_count));
  while (int(res.d2h.size()) < writers) {
    const std::size_t i = res.d2h.size();
    res.d2h.push_back(res.d2h[i % static_cast<std::size_t>(s.hardware.gpu_count)]);
    res.threads.push_back(&engine.add_resource(resource::kCkptThread.at(static_cast<int>(i)),
                                               WorkUnit::kSeconds, 1.0));
  }
  const CheckpointResources used = res;
  CheckpointRun run(engine, plan, used, checkpoint_software(s.hardware.host));
  Flag done(engine);
  engine.spawn(run.run(&done));
  engine.run();
  const double t = engine.now();
  result.set(metric::kCheckpointS, t);
  result.set(metric::kCheckpointBytes, total);
  result.set(metric::kWriteGbps, t > 0 ? total / t / units::kGB : 0);
  if (used.nvme) {
    result.set(metric::kNvmeDirectWriteGbpsModel, used.direct_write_gbps);
    result.set(metric::kNvmeBufferedWriteGbpsModel, used.buffered_write_gbps);
  }
  collect_usage(engine, t, result);
  return result;
}

namespace workloads {
const WorkloadOps checkpoint_workload{
    "checkpoint", WorkloadKind::kCheckpoint,
    "one checkpoint of a model's state from GPU memory to local NVMe or a network file system "
    "(torch.save or FastPersist)",
    &simulate_checkpoint};
}  // namespace workloads

}  // namespace tiersim::sim
