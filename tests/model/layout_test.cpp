#include <catch2/catch.hpp>

#include <string>

#include "model/layout.hpp"
#include "model/perf.hpp"
#include "tests/support.hpp"

namespace model_layout_test {

using namespace tiersim;

TEST_CASE("tensors below DeepSpeed's swap limit stay in host memory", "[model][layout]") {
  ExecutionModel em;
  AioConfig aio;
  aio.block_size_bytes = 8.0 * 1024 * 1024;
  // max(1 MiB, block): the AIO block size governs when it is the larger.
  const double limit = resident_param_limit_bytes(em, aio);
  CHECK(limit == 8.0 * 1024 * 1024);
  aio.block_size_bytes = 4096;
  CHECK(resident_param_limit_bytes(em, aio) == em.small_param_bytes);

  Placement w;
  w.cpu = 0.25;
  w.nvme = 0.75;
  const TensorSource big = tensor_source(16e6, w, 1e6);
  CHECK(big.nvme_bytes == 12e6);
  CHECK(big.cpu_bytes == 4e6);
  const TensorSource small = tensor_source(0.5e6, w, 1e6);  // all of it from host DRAM
  CHECK(small.nvme_bytes == 0);
  CHECK(small.cpu_bytes == 0.5e6);
  const TensorSource on_gpu = tensor_source(16e6, Placement::all_on(Tier::kGpu), 1e6);
  CHECK(on_gpu.nvme_bytes == 0);
  CHECK(on_gpu.cpu_bytes == 0);
}

TEST_CASE("shared experts are fetched with every layer, whatever the routing", "[model][layout]") {
  LlmSpec m = test::llama7b();
  m.layers = 2;
  m.ffn = 1408;
  m.experts = 8;
  m.experts_per_token = 2;
  m.shared_ffn = 5632;
  const double h = m.hidden;
  Policy p;
  const std::vector<WeightModule> mods = weight_modules(m, p);
  const WeightModule& layer = mods.at(1);
  double shared = 0, routed = 0, elements = 0;
  for (const WeightTensor& t : layer.tensors) {
    elements += t.elements;
    if (std::string(t.name).rfind("shared_", 0) == 0) {
      CHECK(t.expert < 0);  // no routing decides whether it is fetched
      shared += t.elements;
    } else if (t.expert >= 0) {
      routed += t.elements;
    }
  }
  CHECK(shared == 3.0 * h * m.shared_ffn);
  CHECK(routed == m.experts * 3.0 * h * m.ffn);
  // The layer's tensors still hold exactly its parameters.
  CHECK(elements == Approx(count_params(m).per_layer));
  // Every token runs its top-2 routed experts and the shared one.
  CHECK(layer_active_params(m) ==
        Approx(4.0 * h * h + 3.0 * h * (2.0 * m.ffn + m.shared_ffn) + h * m.experts));
}

TEST_CASE("a drained read pays the falling queue depth of its last requests", "[model][perf]") {
  NvmeArray array;
  array.count = 1;
  array.model.read.peak_gbps = 7.0;  // a Gen4 drive's order of magnitude
  array.model.read.io_overhead_us = 10;
  array.model.read.latency_us = 80;
  HostSpec host;
  AioConfig aio;
  aio.block_size_bytes = 1 << 20;
  aio.queue_depth = 4;
  aio.threads = 1;
  const double block = aio.block_size_bytes;
  // Six requests with a window of four: the first three complete at depth 4, then 3, 2, 1. The
  // drive gets each 1 MiB request as two 512 KiB pieces (model/perf.cpp nvme_array_timing).
  double expected = 0;
  for (double d : {4.0, 4.0, 4.0, 3.0, 2.0, 1.0})
    expected += block / (array.model.read.bandwidth_gbps(block / 2, 2 * d) * 1e9);
  CHECK(nvme_drained_read_s(array, host, aio, 6 * block) == Approx(expected).epsilon(1e-12));
  // Slower than the steady rate at full depth, which the simulator uses.
  const NvmeArrayTiming steady = nvme_array_timing(array, host, aio, 6 * block);
  CHECK(nvme_drained_read_s(array, host, aio, 6 * block) > 6 * block / (steady.read_gbps * 1e9));
  CHECK(nvme_drained_read_s(array, host, aio, 0) == 0);
}
}  // namespace model_layout_test
