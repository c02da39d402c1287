#pragma once
// The weight-stream model: what each module's fetch needs from which tier, at which operating
// point. The one place these are worked out; every consumer reads them from here:
// - the inference workload's engine (sim/workloads/inference/inference.cpp) turns each tensor's
//   fetch into resource requests (the NVMe array for read_s, the link for the link bytes, the CPU
//   for a pageable copy's staging) and lets the engine queue them;
// - the serving workload's iteration cost (sim/workloads/serving/iteration_cost.cpp) adds them up
//   with module_stream_time, the fetch process alone;
// - the planner's optimistic bound (study/planner.cpp) adds them up, pass by pass, as a lower
//   bound;
// - the replay (replay/replay.cpp) reads the NVMe share of each module that the fetches name;
// - FlexGen's runtime (sim/workloads/inference/flexgen.cpp), whose placement is its own
//   (model/layout.hpp flexgen_sublayers), times its disk transfers with nvme_transfer_timing.
//
// The rules, each with its source:
// - placement: DeepSpeed's small-tensor rule (model/layout.hpp tensor_source) splits each tensor
//   between NVMe and host DRAM by the policy's weight placement; GPU-resident shares move nothing;
// - ZeRO-3 keeps persistent parameters whole on every GPU: not fetched, with data-parallel
//   ranks and, on one GPU, on a stack with ZeRO-3's persistence (model/layout.hpp
//   zero3_persistent, model/stack.hpp zero3_persistence; Accelerate's hooks have none);
// - MoE models whose runtime fetches only routed experts fetch the share of each expert a pass's
//   tokens hit (model/llm.hpp expected_distinct_experts);
// - the NVMe array reads at the reader's operating point: policy.aio's block size, threads x
//   queue depth, bounded by the requests of the largest transfer (the largest tensor's NVMe share;
//   with ZeRO-3 data-parallel ranks each rank's partition of it, read by every rank's own reader
//   at once), on the drive model of hardware.nvme.model (datasheet or calibrated profile;
//   model/perf.hpp nvme_array_timing); a read costs the first request's latency, then the
//   sustained rate;
// - each GPU's link carries its tensor-parallel (and, with data-parallel ranks, its partition's)
//   share of the NVMe part and its tensor-parallel share of the host part; pinned host memory
//   copies at the link's rate, pageable memory is staged by a CPU thread no faster than the
//   execution model's pageable_copy_gbps (model/perf.hpp ExecutionModel);
// - every tensor moved costs the fetch process ExecutionModel::fetch_overhead_s, and every NVMe
//   swap-in ExecutionModel::swap_in_overhead_s more; the next read waits for both;
// - a stack whose ZeRO-3 gather copies each parameter in GPU memory after its host copy
//   (ExecutionStack::zero3_gather_copies_v07, DeepSpeed v0.7) holds the fetch process for those
//   copies, at the GPU's memory rate (gpu_kernel), after each synchronous host copy: they run on
//   the gather stream that the next host copy waits for. Their number per byte is the gather
//   call's (model/zero3_swap.hpp zero3_v07_tensor_gather_copies: one for a parameter gathered
//   alone on one GPU, none with several ranks, 1 + 1/ranks for one gathered with others). On the
//   same stack the NVMe part's copy
//   out of its swap buffer is the gather's own blocking copy (ExecutionStack::
//   zero3_swap_in_copy_in_gather): the fetch process waits for the read, then for that copy and
//   the device copies, before the next swap-in. Elsewhere the bounce copy is asynchronous and
//   overlaps the next read.
#include <array>
#include <cstddef>
#include <limits>
#include <vector>

#include "model/layout.hpp"
#include "model/perf.hpp"
#include "model/scenario.hpp"

namespace tiersim {

// The NVMe array of a scenario (hardware.nvme: the drive model of its datasheet or calibrated
// profile, the drive count, the host's I/O path) at the reader's operating point (policy.aio)
// for one transfer of `transfer_bytes`; zero without drives. Every streamed NVMe transfer is
// timed by it: ZeRO-Inference's tensor reads (WeightStreamPoint::nvme) and FlexGen's disk reads
// and writes (sim/workloads/inference/flexgen.cpp).
// `readers`: processes reading transfers of that size at once, each with its own reader
// (nvme_array_timing).
NvmeArrayTiming nvme_transfer_timing(const Scenario& s, double transfer_bytes, int readers = 1);

// The operating point of a scenario's weight stream: the array at the reader's operating point
// and the rates of one GPU's link, with the policy's placement and the runtime's rules.
struct WeightStreamPoint {
  NvmeArrayTiming nvme;               // the array at the reader's operating point (zero: no NVMe)
  // [bytes] the transfer that sets it: the largest tensor's NVMe share, or with ZeRO-3
  // data-parallel ranks its partition, which each rank reads with its own reader at once
  double nvme_transfer_bytes = 0;
  double link_bytes_per_s = 0;        // [bytes/s] pinned host-to-device copies over one GPU's link
  double pageable_bytes_per_s = 0;    // [bytes/s] pageable copies: min(link, CPU staging memcpy)
  double tp = 1;                      // tensor-parallel GPUs sharing each tensor
  double dp = 1;                      // ZeRO-3 data-parallel ranks partitioning each tensor
  double small_limit_bytes = 0;       // [bytes] DeepSpeed's small-tensor limit (layout.hpp)
  double fetch_overhead_s = 0;        // [s] the fetch process's cost per tensor moved
  double swap_in_overhead_s = 0;      // [s] and per NVMe swap-in, beyond that
  double device_copy_s_per_byte = 0;  // [s/byte] one copy of a byte in GPU memory (read, write)
  // The gather's copies in GPU memory per fetched byte of each tensor, indexed by
  // WeightModule::Kind and tensor index (model/zero3_swap.hpp zero3_v07_tensor_gather_copies);
  // empty where the stack makes none.
  std::array<std::vector<double>, 3> gather_copies;
  double gather_copies_of(const WeightModule& mod, std::size_t tensor) const {
    const auto& k = gather_copies[static_cast<std::size_t>(mod.kind)];
    return tensor < k.size() ? k[tensor] : 0.0;
  }
  bool gds = false;                   // NVMe straight into GPU memory (else AIO bounce buffers)
  // AIO with a stack whose gather copies the swap buffer to the GPU
  // (ExecutionStack::zero3_swap_in_copy_in_gather), on one GPU or on each data-parallel rank:
  // read, copy and device copies in series.
  bool bounce_in_gather = false;
  bool pinned = true;                 // host-resident weights pinned (else pageable)
  Placement weights;                  // the policy's weight placement
  MoeFetch moe_fetch = MoeFetch::kAll;
  Zero3Settings zero3;
  // ZeRO-3's persistent parameters are never fetched (ExecutionStack::zero3_persistence; always
  // with data-parallel ranks)
  bool zero3_persistence = false;
};

// The point of a scenario whose modules are `modules` (weight_modules(s.model, s.policy)).
// `em` is the execution model the consumer runs with.
WeightStreamPoint weight_stream_point(const Scenario& s, const ExecutionModel& em,
                                      const std::vector<WeightModule>& modules);

// One tensor's fetch: the bytes from each tier and what moving them costs, before contention.
struct TensorStream {
  int tensor = -1;             // its index in the module's tensors (WeightModule::tensors)
  double nvme_bytes = 0;       // [bytes] read from the NVMe array (every rank's partition)
  double cpu_bytes = 0;        // [bytes] copied from host DRAM (every rank's partition)
  double read_s = 0;           // [s] the array's read of nvme_bytes at the point (0: none)
  double nvme_link_bytes = 0;  // [bytes] of the NVMe part over each GPU's link: nvme / (tp x dp)
  double host_link_bytes = 0;  // [bytes] of the host part over each GPU's link: cpu / tp
  double nvme_link_s = 0;      // [s] nvme_link_bytes at the link's rate
  double host_link_s = 0;      // [s] host_link_bytes at the link's rate (the pinned copy)
  double pageable_copy_s = 0;  // [s] host_link_bytes staged by a CPU thread (pageable memory)
  // [s] the gather's copies in GPU memory of the host part (cpu_bytes / tp, the whole tensor's:
  // the copies' count is in units of it) after the host copy, which the fetch process waits for
  // (WeightStreamPoint::gather_copies; 0 on most stacks)
  double gather_copy_s = 0;
  // [s] the same copies of the NVMe part (nvme_bytes / tp) after the swap buffer's copy to the
  // GPU, where the gather makes that copy (WeightStreamPoint::bounce_in_gather; 0 elsewhere)
  double bounce_gather_copy_s = 0;
  // [s] the fetch process's synchronous copy of the host part: pinned at the link's rate,
  // pageable at the staging rate (and the CPU busy for as long).
  double host_copy_s(const WeightStreamPoint& pt) const {
    return pt.pinned ? host_link_s : pageable_copy_s;
  }
  // [s] the fetch process's whole hold for the host part: the copy, then the gather's copies.
  double host_fetch_s(const WeightStreamPoint& pt) const { return host_copy_s(pt) + gather_copy_s; }
};

// Distinct experts every layer's routed experts a pass of `tokens` tokens hits, as the policy's
// MoE fetch sees it: infinity (every expert) unless the runtime fetches only routed experts.
double stream_experts_hit(const LlmSpec& m, const Policy& p, double tokens);
inline constexpr double kEveryExpert = std::numeric_limits<double>::infinity();

// One tensor's fetch at the point, for a pass that hits `experts_hit` experts per layer (the
// share of an expert's tensor fetched: clamp(experts_hit - expert, 0, 1)); `gather_copies`: the
// gather's copies in GPU memory per byte of it (WeightStreamPoint::gather_copies_of, which
// module_stream passes).
TensorStream tensor_stream(const WeightStreamPoint& pt, const WeightTensor& t,
                           double experts_hit = kEveryExpert, double gather_copies = 0);

// One module's fetch: its tensors with something to move, in fetch order.
struct ModuleStream {
  std::vector<TensorStream> tensors;
  int nvme_reads = 0;  // tensors with an NVMe part
  double nvme_bytes() const;  // [bytes]
};
ModuleStream module_stream(const WeightStreamPoint& pt, const WeightModule& mod,
                           double experts_hit = kEveryExpert);
// True when module_stream gives `a` and `b` the same stream at any point: the same kind (the
// gather's copies are per kind and tensor position) and the same tensors. The layers of a dense
// model are alike, so a stream worked out for one serves the others.
bool same_module_stream(const WeightModule& a, const WeightModule& b);

// A module's fetch by the fetch process alone, without contention (the serving workload's rule):
// the process's serial chain (per-tensor overhead, each NVMe read, with GDS the read and its link
// copy as one flow at the slower rate, with AIO the bounce copy overlapping the next read, and
// the synchronous host copies) or the total time on the link, whichever is longer.
struct ModuleStreamTime {
  double time_s = 0;  // [s] the module's weights on the GPU
  double h2d_s = 0;   // [s] on each GPU's link
  double nvme_s = 0;  // [s] on the NVMe array
  double cpu_s = 0;   // [s] of CPU staging pageable copies
};
ModuleStreamTime module_stream_time(const WeightStreamPoint& pt, const ModuleStream& m);

}  // namespace tiersim
