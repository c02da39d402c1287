#include "model/weight_stream.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/layout.hpp"
#include "model/units.hpp"
#include "tests/support.hpp"

namespace model_weight_stream_test {

using namespace tiersim;

namespace {

const char* kScenario = R"(
name: t
hardware:
  gpu: {model: A100-80GB, count: 1}
  host: {model: generic-2s-ddr5}
  nvme: {model: generic-gen4, count: 2}
model: {name: llama-3-8b}
workload: {kind: inference, batch: 4, prompt_tokens: 64, gen_tokens: 4}
policy: {weights: {cpu: 0.25, nvme: 0.75}, kv_cache: gpu, io_path: aio}
)";

Scenario load(std::vector<std::string> sets = {}) {
  return test::load_yaml(kScenario, std::move(sets));
}

const WeightTensor& largest_tensor(const std::vector<WeightModule>& modules) {
  const WeightTensor* best = &modules.front().tensors.front();
  for (const auto& mod : modules)
    for (const auto& t : mod.tensors)
      if (t.bytes > best->bytes) best = &t;
  return *best;
}

}  // namespace

TEST_CASE("the weight stream's operating point is the array's at the largest NVMe transfer",
          "[model][weight_stream]") {
  const Scenario s = load();
  const ExecutionModel em;
  const auto modules = weight_modules(s.model, s.policy);
  const WeightStreamPoint pt = weight_stream_point(s, em, modules);
  const double transfer = largest_tensor(modules).bytes * 0.75;
  CHECK(pt.nvme_transfer_bytes == transfer);
  const NvmeArrayTiming expected =
      nvme_array_timing(s.hardware.nvme, s.hardware.host, s.policy.aio, transfer);
  CHECK(pt.nvme.read_gbps == expected.read_gbps);
  CHECK(pt.nvme.read_latency_s == expected.read_latency_s);
  CHECK(pt.link_bytes_per_s ==
        units::gbps_to_bytes_per_s(h2d_gbps(s.hardware.gpu, s.hardware.host)));
  CHECK(pt.pageable_bytes_per_s ==
        std::min(pt.link_bytes_per_s, units::gbps_to_bytes_per_s(em.pageable_copy_gbps)));
  CHECK(pt.small_limit_bytes == resident_param_limit_bytes(em, s.policy.aio));
  // A host's measured rates replace the default: its host-to-device rate for large pageable
  // sources first, else its pageable copy rate (measured device-to-host).
  Scenario measured = s;
  measured.hardware.host.pageable_copy_gbps = 9;
  CHECK(weight_stream_point(measured, em, modules).pageable_bytes_per_s ==
        units::gbps_to_bytes_per_s(9));
  measured.hardware.host.pageable_h2d_gbps = 6;
  CHECK(weight_stream_point(measured, em, modules).pageable_bytes_per_s ==
        units::gbps_to_bytes_per_s(6));

  // The drive model (a calibrated profile replaces it) sets the rate: a slower drive, a slower
  // read of the same tensor.
  Scenario slow = s;
  slow.hardware.nvme.model.read.peak_gbps /= 2;
  const WeightStreamPoint slow_pt = weight_stream_point(slow, em, modules);
  const WeightTensor& big = largest_tensor(modules);
  CHECK(tensor_stream(slow_pt, big).read_s > 1.5 * tensor_stream(pt, big).read_s);
  // No drives: no array.
  Scenario none = load({"policy.weights=cpu", "hardware.nvme.count=0"});
  CHECK(weight_stream_point(none, em, modules).nvme.read_gbps == 0);
}

TEST_CASE("a tensor's fetch splits it by placement and prices each part", "[model][weight_stream]") {
  const Scenario s = load();
  const ExecutionModel em;
  const auto modules = weight_modules(s.model, s.policy);
  const WeightStreamPoint pt = weight_stream_point(s, em, modules);
  const WeightTensor& big = largest_tensor(modules);
  const TensorStream f = tensor_stream(pt, big);
  CHECK(f.nvme_bytes == big.bytes * 0.75);
  CHECK(f.cpu_bytes == big.bytes * 0.25);
  CHECK(f.read_s == pt.nvme.read_s(f.nvme_bytes));
  CHECK(f.nvme_link_bytes == f.nvme_bytes);
  CHECK(f.host_link_bytes == f.cpu_bytes);
  CHECK(f.host_link_s == Approx(f.cpu_bytes / pt.link_bytes_per_s).epsilon(1e-15));
  CHECK(f.host_copy_s(pt) == f.host_link_s);  // pinned
  // A norm's weight is below DeepSpeed's swap limit: all of it from host DRAM, no read (where it
  // is fetched at all: above ZeRO-3's persistence threshold here).
  WeightTensor norm{"norm", 4096, 8192};
  Zero3Settings fetch_all;
  fetch_all.param_persistence_threshold = 0;
  WeightStreamPoint all = pt;
  all.zero3 = fetch_all;
  const TensorStream small = tensor_stream(all, norm);
  CHECK(small.nvme_bytes == 0);
  CHECK(small.read_s == 0);
  CHECK(small.cpu_bytes == 8192);
  // Pageable host memory: the copy is staged no faster than the CPU's memcpy.
  const Scenario pageable = load({"policy.pin_memory=false"});
  const WeightStreamPoint ppt = weight_stream_point(pageable, em, modules);
  const TensorStream pf = tensor_stream(ppt, big);
  CHECK(pf.host_copy_s(ppt) == pf.pageable_copy_s);
  CHECK(pf.pageable_copy_s == Approx(pf.host_link_bytes / ppt.pageable_bytes_per_s));
  CHECK(pf.pageable_copy_s >= pf.host_link_s);
  // GPU-resident weights move nothing.
  const Scenario gpu = load({"policy.weights=gpu", "hardware.gpu.count=1"});
  const WeightStreamPoint gpt = weight_stream_point(gpu, em, modules);
  for (const auto& mod : modules) CHECK(module_stream(gpt, mod).tensors.empty());
}

TEST_CASE("tensor and data parallelism share out the link bytes", "[model][weight_stream]") {
  const ExecutionModel em;
  const Scenario s = load({"policy.parallelism.tensor=2", "hardware.gpu.count=2"});
  const auto modules = weight_modules(s.model, s.policy);
  const WeightStreamPoint pt = weight_stream_point(s, em, modules);
  const WeightTensor& big = largest_tensor(modules);
  const TensorStream f = tensor_stream(pt, big);
  // The array reads the whole tensor; each GPU's link carries its half.
  CHECK(f.read_s == pt.nvme.read_s(big.bytes * 0.75));
  CHECK(f.nvme_link_bytes == f.nvme_bytes / 2);
  CHECK(f.host_link_bytes == f.cpu_bytes / 2);

  // ZeRO-3 data-parallel ranks: each rank's link takes its partition of the NVMe part, and
  // persistent parameters (at most param_persistence_threshold elements) are not fetched at all.
  const Scenario dp = load({"policy.parallelism.data=2", "hardware.gpu.count=2", "workload.batch=4"});
  const WeightStreamPoint dpt = weight_stream_point(dp, em, modules);
  const TensorStream df = tensor_stream(dpt, big);
  CHECK(df.nvme_link_bytes == df.nvme_bytes / 2);
  WeightTensor norm{"norm", 4096, 8192};
  REQUIRE(zero3_persistent(norm, dp.policy.zero3));
  CHECK(tensor_stream(dpt, norm).cpu_bytes == 0);
  // One GPU: DeepSpeed keeps it there too (the default stack, ZeRO-3's persistence); Accelerate's
  // hooks copy it every pass.
  CHECK(tensor_stream(pt, norm).cpu_bytes == 0);
  const Scenario acc =
      load({"policy.parallelism.tensor=2", "hardware.gpu.count=2", "policy.stack=hf-accelerate"});
  CHECK(tensor_stream(weight_stream_point(acc, em, modules), norm).cpu_bytes == 8192);
}

TEST_CASE("the layer's biases and norms persist when each of them is under the threshold",
          "[model][weight_stream]") {
  // OPT-175B's shape: together the biases and norms of a layer are 159,744 elements, above
  // DeepSpeed's default threshold of 1e5, but each is at most fc1's bias (49,152), so each is
  // persistent (v0.7.2 stage3.py _mark_persistent_parameters compares every parameter's ds_numel).
  const LlmSpec m = load({"model.name=opt-175b", "model.layers=2"}).model;
  REQUIRE(m.hidden == 12288);
  REQUIRE(m.ffn == 49152);
  const auto modules = weight_modules(m, Policy{});
  const WeightModule& layer = modules[1];
  const auto small = std::find_if(layer.tensors.begin(), layer.tensors.end(), [](const auto& t) {
    return std::string(t.name) == "norms_biases";
  });
  REQUIRE(small != layer.tensors.end());
  CHECK(small->elements == Approx(4 * 12288 + 4 * 12288 + 49152 + 12288));
  CHECK(small->largest_part_elements == 49152);
  Zero3Settings z;
  CHECK(zero3_persistent(*small, z));
  z.param_persistence_threshold = 49151;  // fc1's bias would be fetched: none is taken as kept
  CHECK_FALSE(zero3_persistent(*small, z));
  // A tensor that is one parameter is compared whole.
  CHECK_FALSE(zero3_persistent(layer.tensors.front(), Zero3Settings{}));
}

TEST_CASE("data-parallel ranks read their partitions at once, each with its own reader",
          "[model][weight_stream]") {
  // DeepSpeed v0.7.2: every rank builds its own AsyncPartitionedParameterSwapper with an aio
  // handle of the policy's block size, queue depth and threads, and swaps in its own partition
  // of each tensor: the array serves `data` readers' windows, each of a partition.
  const ExecutionModel em;
  const std::vector<std::string> one_window = {"policy.aio.block_size=1MiB",
                                               "policy.aio.queue_depth=1", "policy.aio.threads=1"};
  std::vector<std::string> four_sets = one_window;
  for (const char* set : {"policy.parallelism.data=4", "hardware.gpu.count=4", "workload.batch=4"})
    four_sets.push_back(set);
  const Scenario one = load(one_window);
  const Scenario four = load(four_sets);
  const auto modules = weight_modules(one.model, one.policy);
  const double transfer = largest_tensor(modules).bytes * 0.75;
  const WeightStreamPoint pt1 = weight_stream_point(one, em, modules);
  const WeightStreamPoint pt4 = weight_stream_point(four, em, modules);
  CHECK(pt4.nvme_transfer_bytes == transfer / 4);
  const NvmeArrayTiming expected =
      nvme_array_timing(four.hardware.nvme, four.hardware.host, four.policy.aio, transfer / 4, 4);
  CHECK(pt4.nvme.read_gbps == expected.read_gbps);
  CHECK(pt4.nvme.read_latency_s == expected.read_latency_s);
  // Four windows of one request keep the drives busier than one: a faster array.
  CHECK(pt4.nvme.read_gbps > 1.1 * pt1.nvme.read_gbps);
  // The array still reads every rank's partition of a tensor: the whole tensor at that rate.
  const WeightTensor& big = largest_tensor(modules);
  CHECK(tensor_stream(pt4, big).read_s == pt4.nvme.read_s(big.bytes * 0.75));
}

TEST_CASE("DeepSpeed v0.7's gather copies each rank's swap buffer, as on one GPU",
          "[model][weight_stream]") {
  // v0.7.2 all_gather_coalesced swaps in and waits, then copies each partition out of its swap
  // buffer with a blocking `.to()`, whatever the world size (model/stack.cpp hf-deepspeed-0.7).
  const ExecutionModel em;
  const Scenario dp = load({"policy.parallelism.data=2", "hardware.gpu.count=2", "workload.batch=4",
                            "policy.stack=hf-deepspeed-0.7"});
  const auto modules = weight_modules(dp.model, dp.policy);
  const WeightStreamPoint pt = weight_stream_point(dp, em, modules);
  CHECK(pt.bounce_in_gather);
  // Read, then this rank's copy of its half, in series; no device copies with several ranks.
  ModuleStream m;
  m.tensors.push_back(tensor_stream(pt, largest_tensor(modules)));
  const TensorStream& t = m.tensors.front();
  CHECK(t.bounce_gather_copy_s == 0);
  CHECK(module_stream_time(pt, m).time_s >= t.read_s + t.nvme_link_s + t.host_link_s);
  // The stack whose copy is asynchronous overlaps it with the next read.
  const Scenario async =
      load({"policy.parallelism.data=2", "hardware.gpu.count=2", "workload.batch=4"});
  CHECK_FALSE(weight_stream_point(async, em, modules).bounce_in_gather);
}

TEST_CASE("a routed-expert runtime fetches the share of the experts a pass hits",
          "[model][weight_stream]") {
  const ExecutionModel em;
  Scenario s = load({"model.name=mixtral-8x7b", "policy.moe_fetch=routed"});
  const auto modules = weight_modules(s.model, s.policy);
  const WeightStreamPoint pt = weight_stream_point(s, em, modules);
  const double hit = stream_experts_hit(s.model, s.policy, 1.0);  // one decode token
  REQUIRE(hit == Approx(2.0));  // top-2 routing: two distinct experts for one token
  WeightTensor expert0{"w1", 1e8, 2e8};
  expert0.expert = 0;
  WeightTensor expert5 = expert0;
  expert5.expert = 5;
  CHECK(tensor_stream(pt, expert0, hit).nvme_bytes == 2e8 * 0.75);
  CHECK(tensor_stream(pt, expert5, hit).nvme_bytes == 0);
  // Fetching every expert (the default runtime) ignores what is hit.
  const Scenario all = load({"model.name=mixtral-8x7b"});
  CHECK(stream_experts_hit(all.model, all.policy, 1.0) == kEveryExpert);
  CHECK(tensor_stream(weight_stream_point(all, em, modules), expert5).nvme_bytes == 2e8 * 0.75);
}

TEST_CASE("a module's fetch by the fetch process alone", "[model][weight_stream]") {
  const ExecutionModel em;
  for (const char* path : {"aio", "gds"}) {
    for (const char* pin : {"true", "false"}) {
      INFO(path << " pinned " << pin);
      const Scenario s =
          load({std::string("policy.io_path=") + path, std::string("policy.pin_memory=") + pin});
      const auto modules = weight_modules(s.model, s.policy);
      const WeightStreamPoint pt = weight_stream_point(s, em, modules);
      const ModuleStream layer = module_stream(pt, modules[1]);
      REQUIRE(layer.nvme_reads > 0);
      double serial = 0, link = 0, nvme = 0, cpu = 0;
      for (const auto& t : layer.tensors) {
        serial += em.fetch_overhead_s;
        if (t.nvme_bytes > 0)
          serial += em.swap_in_overhead_s + (pt.gds ? std::max(t.read_s, t.nvme_link_s) : t.read_s);
        serial += t.host_copy_s(pt);
        link += t.nvme_link_s + t.host_link_s;
        nvme += t.read_s;
        if (!pt.pinned) cpu += t.pageable_copy_s;
      }
      const ModuleStreamTime time = module_stream_time(pt, layer);
      CHECK(time.time_s == Approx(std::max(serial, link)));
      CHECK(time.h2d_s == Approx(link));
      CHECK(time.nvme_s == Approx(nvme));
      CHECK(time.cpu_s == Approx(cpu));
      if (pt.pinned) CHECK(time.cpu_s == 0);
      else CHECK(time.cpu_s > 0);
      CHECK(layer.nvme_bytes() > 0);
    }
  }
}
TEST_CASE("DeepSpeed v0.7's one-GPU gather copies the NVMe swap buffer: read, copy, copies in series",
          "[model][weight_stream][stack]") {
  // model/stack.cpp hf-deepspeed-0.7 (zero3_swap_in_copy_in_gather): all_gather_coalesced copies
  // the swapped-in partition to the GPU, then makes its two device copies, before the next
  // swap-in is issued. GDS has no swap buffer, and with data-parallel ranks the gather is the
  // all-gather modelled apart: neither is charged.
  const ExecutionModel em;
  const auto point = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> sets = {"hardware.gpu.model=T4", "hardware.nvme.count=2",
                                     "policy.weights=nvme"};
    sets.insert(sets.end(), extra.begin(), extra.end());
    const Scenario s = load(sets);
    return std::make_pair(s, weight_stream_point(s, em, weight_modules(s.model, s.policy)));
  };
  const auto [s, pt] = point({"policy.io_path=aio", "policy.stack=hf-deepspeed-0.7"});
  REQUIRE(pt.bounce_in_gather);
  CHECK_FALSE(point({"policy.io_path=aio"}).second.bounce_in_gather);
  CHECK_FALSE(point({"policy.io_path=gds", "policy.stack=hf-deepspeed-0.7"}).second.bounce_in_gather);
  const WeightModule mod = weight_modules(s.model, s.policy)[1];
  const ModuleStream layer = module_stream(pt, mod);
  REQUIRE(layer.nvme_reads > 0);
  double serial = 0, link = 0;
  for (const auto& t : layer.tensors) {
    serial += em.fetch_overhead_s;
    if (t.nvme_bytes > 0) {
      CHECK(t.bounce_gather_copy_s ==
            Approx(t.nvme_bytes * pt.gather_copies_of(mod, static_cast<std::size_t>(t.tensor)) *
                   pt.device_copy_s_per_byte));
      CHECK(t.bounce_gather_copy_s > 0);
      serial += em.swap_in_overhead_s + t.read_s + t.nvme_link_s + t.bounce_gather_copy_s;
      link += t.nvme_link_s;
    }
    if (t.cpu_bytes > 0) {
      serial += t.host_fetch_s(pt);
      link += t.host_link_s;
    }
  }
  const ModuleStreamTime time = module_stream_time(pt, layer);
  CHECK(time.time_s == Approx(std::max(serial, link)));
  CHECK(time.h2d_s == Approx(link));
}

TEST_CASE("DeepSpeed v0.7's gather holds the fetch for its GPU copies of each host byte",
          "[model][weight_stream][stack]") {
  // model/stack.cpp hf-deepspeed-0.7: each copy reads and writes the bytes once at the GPU's
  // memory rate; how many each tensor takes is its gather call's (model/zero3_swap.hpp).
  const ExecutionModel em;
  const std::vector<std::string> t4 = {"hardware.gpu.model=T4", "hardware.nvme.count=0",
                                       "policy.weights=cpu"};
  for (const char* stack : {"hf-deepspeed", "hf-deepspeed-0.7"}) {
    INFO(stack);
    std::vector<std::string> sets = t4;
    sets.push_back(std::string("policy.stack=") + stack);
    const Scenario s = load(sets);
    const auto modules = weight_modules(s.model, s.policy);
    const WeightStreamPoint pt = weight_stream_point(s, em, modules);
    const bool v07 = std::string(stack) != "hf-deepspeed";
    const double per_byte =
        v07 ? 2.0 / (units::gbps_to_bytes_per_s(s.hardware.gpu.hbm_gbps) * em.hbm_efficiency) : 0;
    CHECK(pt.device_copy_s_per_byte == Approx(per_byte));
    const ModuleStream layer = module_stream(pt, modules[1]);
    REQUIRE_FALSE(layer.tensors.empty());
    double serial = 0, link = 0, copies = 0;
    for (const auto& t : layer.tensors) {
      const double n = pt.gather_copies_of(modules[1], static_cast<std::size_t>(t.tensor));
      copies += n;
      CHECK(t.gather_copy_s == Approx(t.host_link_bytes * n * per_byte));
      CHECK(t.host_fetch_s(pt) == Approx(t.host_copy_s(pt) + t.gather_copy_s));
      serial += em.fetch_overhead_s + t.host_copy_s(pt) + t.gather_copy_s;
      link += t.host_link_s;
    }
    if (v07)
      CHECK(copies > 0);
    else
      CHECK(copies == 0);
    const ModuleStreamTime time = module_stream_time(pt, layer);
    CHECK(time.time_s == Approx(std::max(serial, link)));
    CHECK(time.h2d_s == Approx(link));
    if (v07)
      CHECK(time.time_s > link + em.fetch_overhead_s * static_cast<double>(layer.tensors.size()));
  }
}

TEST_CASE("DeepSpeed v0.7's gather copies follow the call, with one rank or several",
          "[model][weight_stream][stack]") {
  // OPT-30B's fc2: at DeepSpeed's defaults each weight is gathered alone (one NCCL copy on
  // one GPU, none with data-parallel ranks); without prefetch and persistence each Linear's
  // weight and bias go in one call (two copies on one GPU, 1 + 1/ranks with several). On one GPU
  // policy.zero3 is accepted for this stack, whose gather calls it sets.
  const ExecutionModel em;
  const auto fc2_copies = [&](std::vector<std::string> sets) {
    sets.insert(sets.end(), {"model.name=opt-30b", "hardware.nvme.count=0", "policy.weights=cpu",
                             "policy.stack=hf-deepspeed-0.7"});
    const Scenario s = load(sets);
    const auto modules = weight_modules(s.model, s.policy);
    const WeightStreamPoint pt = weight_stream_point(s, em, modules);
    // fc2 (ffn_down): layer 0's q_proj shares a call with the position table (zero3_swap_test).
    for (const TensorStream& t : module_stream(pt, modules[1]).tensors) {
      const auto i = static_cast<std::size_t>(t.tensor);
      if (std::string(modules[1].tensors[i].name) != "ffn_down") continue;
      const double n = pt.gather_copies_of(modules[1], i);
      CHECK(t.gather_copy_s == Approx(t.host_link_bytes * n * pt.device_copy_s_per_byte));
      return n;
    }
    FAIL("no ffn_down fetched");
    return -1.0;
  };
  const std::vector<std::string> two = {"hardware.gpu.count=2", "policy.parallelism.data=2"};
  const std::vector<std::string> coalesced = {"policy.zero3.param_persistence_threshold=0",
                                              "policy.zero3.prefetch_bucket_size=0"};
  CHECK(fc2_copies({}) == 1);
  CHECK(fc2_copies(two) == 0);
  CHECK(fc2_copies(coalesced) == 2);
  std::vector<std::string> both = two;
  both.insert(both.end(), coalesced.begin(), coalesced.end());
  CHECK(fc2_copies(both) == Approx(1.5));
}
}  // namespace model_weight_stream_test
