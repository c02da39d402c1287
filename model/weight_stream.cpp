// The weight-stream model (model/weight_stream.hpp): pure arithmetic on the scenario.
#include "model/weight_stream.hpp"

#include <algorithm>

#include "model/llm.hpp"
#include "model/units.hpp"
#include "model/zero3_swap.hpp"

namespace tiersim {

NvmeArrayTiming nvme_transfer_timing(const Scenario& s, double transfer_bytes, int readers) {
  if (s.hardware.nvme.count <= 0) return {};
  return nvme_array_timing(s.hardware.nvme, s.hardware.host, s.policy.aio, transfer_bytes, readers);
}

WeightStreamPoint weight_stream_point(const Scenario& s, const ExecutionModel& em,
                                      const std::vector<WeightModule>& modules) {
  const Policy& p = s.policy;
  const HostSpec& host = s.hardware.host;
  WeightStreamPoint pt;
  double largest = 0;
  for (const auto& mod : modules)
    for (const auto& t : mod.tensors) largest = std::max(largest, t.bytes);
  // The reader's window is bounded by the requests of one transfer; the largest tensor's NVMe
  // share is the largest transfer the fetch issues.
  // With ZeRO-3 data-parallel ranks every rank swaps in its own partition of each tensor, with a
  // swapper and aio handle of its own (DeepSpeed v0.7.2 partitioned_param_swapper.py
  // AsyncPartitionedParameterSwapper._configure_aio: aio_read_handle built from the aio config's
  // block size, queue depth and thread count in every process, files under rank<N>/), and the
  // ranks fetch the same module at once: the array serves `data` readers' windows together.
  const int readers = std::max(1, p.parallelism.data);
  pt.nvme_transfer_bytes = largest * p.weights.nvme / readers;
  pt.nvme = nvme_transfer_timing(s, pt.nvme_transfer_bytes, readers);
  pt.link_bytes_per_s = units::gbps_to_bytes_per_s(h2d_gbps(s.hardware.gpu, host));
  pt.pageable_bytes_per_s =
      std::min(pt.link_bytes_per_s,
               units::gbps_to_bytes_per_s(pageable_h2d_gbps(host, em.pageable_copy_gbps)));
  pt.tp = p.parallelism.tensor;
  pt.dp = p.parallelism.data;
  pt.small_limit_bytes = resident_param_limit_bytes(em, p.aio);
  pt.fetch_overhead_s = em.fetch_overhead_s;
  pt.swap_in_overhead_s = em.swap_in_overhead_s;
  // Each of the gather's copies reads and writes the bytes once in GPU memory (model/stack.cpp
  // hf-deepspeed-0.7); a plain copy kernel, timed like any memory-bound kernel. How many a tensor
  // takes is its gather call's, with one rank or with the data-parallel ranks
  // (model/zero3_swap.hpp).
  if (p.stack.zero3_gather_copies_v07) {
    pt.device_copy_s_per_byte = gpu_kernel_s(s.hardware.gpu, em, 0, 2.0);
    // On one GPU no prefetch is spelled policy.prefetch_layers 0 (the coordinator's bucket 0,
    // as the inference workload's swap schedule reads it).
    Zero3Settings z = p.zero3;
    if (p.parallelism.data <= 1 && p.prefetch_layers <= 0) z.prefetch_bucket_size = 0;
    pt.gather_copies = zero3_v07_tensor_gather_copies(s.model, modules, z, readers);
  }
  pt.gds = p.io_path == IoPath::kGds;
  // With data-parallel ranks too: v0.7.2's all_gather_coalesced takes the same steps for any
  // world size (swap in and wait, then each partition's blocking `.to()` out of its swap buffer,
  // then the all-gather), so each rank's reads and its copies of what was read alternate.
  pt.bounce_in_gather = p.stack.zero3_swap_in_copy_in_gather && !pt.gds;
  pt.pinned = p.pin_memory;
  pt.weights = p.weights;
  pt.moe_fetch = p.moe_fetch;
  pt.zero3 = p.zero3;
  pt.zero3_persistence = p.stack.zero3_persistence || p.parallelism.data > 1;
  return pt;
}

double stream_experts_hit(const LlmSpec& m, const Policy& p, double tokens) {
  if (p.moe_fetch == MoeFetch::kAll) return kEveryExpert;
  return expected_distinct_experts(m, tokens);
}

TensorStream tensor_stream(const WeightStreamPoint& pt, const WeightTensor& t, double experts_hit,
                           double gather_copies) {
  TensorStream f;
  // A routed expert is fetched for the share of passes that hit it: experts 0..n-1 in full and a
  // share of the next (the expected number of distinct experts hit).
  const double share = t.expert < 0 || pt.moe_fetch == MoeFetch::kAll
                           ? 1.0
                           : std::clamp(experts_hit - t.expert, 0.0, 1.0);
  if (share <= 0) return f;
  // ZeRO-3 keeps persistent parameters whole on every GPU: nothing to fetch or gather.
  if (pt.zero3_persistence && zero3_persistent(t, pt.zero3)) return f;
  const TensorSource src = tensor_source(t.bytes, pt.weights, pt.small_limit_bytes);
  f.nvme_bytes = src.nvme_bytes * share;
  f.cpu_bytes = src.cpu_bytes * share;
  if (f.nvme_bytes > 0)
    f.read_s = pt.nvme.read_gbps > 0 ? pt.nvme.read_s(f.nvme_bytes)
                                     : std::numeric_limits<double>::infinity();
  f.nvme_link_bytes = f.nvme_bytes / (pt.tp * pt.dp);
  f.host_link_bytes = f.cpu_bytes / pt.tp;
  f.nvme_link_s = f.nvme_link_bytes / pt.link_bytes_per_s;
  f.host_link_s = f.host_link_bytes / pt.link_bytes_per_s;
  f.pageable_copy_s = f.host_link_bytes / pt.pageable_bytes_per_s;
  const double copy_s_per_byte = gather_copies * pt.device_copy_s_per_byte;
  f.gather_copy_s = f.host_link_bytes * copy_s_per_byte;
  if (pt.bounce_in_gather) f.bounce_gather_copy_s = f.nvme_bytes / pt.tp * copy_s_per_byte;
  return f;
}

double ModuleStream::nvme_bytes() const {
  double b = 0;
  for (const auto& t : tensors) b += t.nvme_bytes;
  return b;
}

bool same_module_stream(const WeightModule& a, const WeightModule& b) {
  if (a.kind != b.kind || a.tensors.size() != b.tensors.size()) return false;
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    const WeightTensor &x = a.tensors[i], &y = b.tensors[i];
    if (x.name != y.name || x.elements != y.elements || x.bytes != y.bytes ||
        x.quantized != y.quantized || x.expert != y.expert ||
        x.largest_part_elements != y.largest_part_elements)
      return false;
  }
  return true;
}

ModuleStream module_stream(const WeightStreamPoint& pt, const WeightModule& mod,
                           double experts_hit) {
  ModuleStream m;
  for (std::size_t i = 0; i < mod.tensors.size(); ++i) {
    TensorStream f = tensor_stream(pt, mod.tensors[i], experts_hit, pt.gather_copies_of(mod, i));
    if (f.nvme_bytes <= 0 && f.cpu_bytes <= 0) continue;
    if (f.nvme_bytes > 0) ++m.nvme_reads;
    f.tensor = static_cast<int>(i);
    m.tensors.push_back(f);
  }
  return m;
}

ModuleStreamTime module_stream_time(const WeightStreamPoint& pt, const ModuleStream& m) {
  ModuleStreamTime f;
  double serial_s = 0;
  for (const auto& t : m.tensors) {
    serial_s += pt.fetch_overhead_s;
    if (t.nvme_bytes > 0) {
      serial_s += pt.swap_in_overhead_s;
      f.nvme_s += t.read_s;
      f.h2d_s += t.nvme_link_s;
      // GDS: drive to GPU in one flow at the slower rate. AIO: the read lands in a pinned
      // bounce buffer and its copy to the GPU overlaps the next read, unless the gather makes
      // that copy (then read, copy and the gather's device copies in series).
      if (pt.gds)
        serial_s += std::max(t.read_s, t.nvme_link_s);
      else if (pt.bounce_in_gather)
        serial_s += t.read_s + t.nvme_link_s + t.bounce_gather_copy_s;
      else
        serial_s += t.read_s;
    }
    if (t.cpu_bytes > 0) {
      serial_s += t.host_fetch_s(pt);
      f.h2d_s += t.host_link_s;
      // Pageable memory: one CPU thread stages the copy through the driver's pinned buffers.
      if (!pt.pinned) f.cpu_s += t.pageable_copy_s;
    }
  }
  f.time_s = std::max(serial_s, f.h2d_s);
  return f;
}

}  // namespace tiersim
