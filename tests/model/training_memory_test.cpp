// ZeRO-Offload / ZeRO-Infinity memory terms (model/training_memory.hpp): each term against its
// DeepSpeed buffer arithmetic, and the paper's strategy ordering on one node.
#include <catch2/catch.hpp>

#include <algorithm>

#include "config/scenario_loader.hpp"
#include "model/training_memory.hpp"
#include "tests/support.hpp"

namespace model_training_memory_test {

using namespace tiersim;

namespace {

const char* kDgx2 = R"(
name: t
hardware:
  gpu: {model: V100-32GB, count: 16}
  host: {model: dgx-2}
  nvme: {model: generic-gen3, count: 8, capacity_tb: 3.84}
model: {name: opt-13b}
workload: {kind: training, global_batch: 16, sequence_tokens: 1024, zero_stage: 3,
           params: gpu, gradients: gpu, optimizer: gpu}
)";

Scenario with_strategy(const char* name, std::vector<std::string> sets = {}) {
  Scenario s = test::load_yaml(kDgx2, std::move(sets));
  for (const auto& st : zero_strategies())
    if (std::string(st.name) == name) apply_strategy(s, st);
  return s;
}

// Bytes of the named row on a tier, 0 when the tier has no such row.
double row_bytes(const CapacityReport& r, const std::string& tier, const std::string& what) {
  for (const auto& t : r.tiers)
    if (t.tier == tier)
      for (const auto& i : t.items)
        if (i.what == what) return i.bytes;
  return 0;
}

}  // namespace

TEST_CASE("the largest operator is one Linear, split by TiledLinear, or the embedding",
          "[training][zero-infinity]") {
  LlmSpec m;
  m.hidden = 8192;
  m.ffn = 4 * 8192;
  m.heads = 64;
  m.kv_heads = 64;
  m.vocab = 1000;  // small, so the FFN matrix is the largest operator
  CHECK(largest_operator_params(m, 1) == Approx(8192.0 * 4 * 8192));
  CHECK(largest_operator_params(m, 4) == Approx(8192.0 * 8192));
  // Tiling cannot shrink the working set below the embedding table, which it does not split.
  m.vocab = 50000;
  CHECK(largest_operator_params(m, 64) == Approx(50000.0 * 8192));
}

TEST_CASE("ZeRO-3 gathers submodules, and keeps the recomputed layer up to the reuse distance",
          "[training][zero-infinity]") {
  const Scenario s = with_strategy("zero3");
  const ZeroBuffers zb;
  const ParamCounts c = count_params(s.model);
  const double op = largest_operator_params(s.model, 1);
  TrainingWorkload w = s.training;
  w.activation_checkpointing = false;
  CHECK(gathered_params_bytes(s.model, w, zb) == Approx((op + zb.prefetch_bucket_params) * 2));
  w.activation_checkpointing = true;
  CHECK(gathered_params_bytes(s.model, w, zb) ==
        Approx(
            (op + zb.prefetch_bucket_params + std::min(c.per_layer, zb.max_reuse_distance_params)) *
            2));
  // Far smaller than a whole layer plus prefetched layers once layers are large.
  const LlmSpec big = scaled_model(s.model, TrainingWorkload::Shape::kWidthDepth, 300);
  CHECK(gathered_params_bytes(big, w, zb) < 2 * count_params(big).per_layer * 2);
  w.linear_tiles = 8;
  TrainingWorkload untiled = w;
  untiled.linear_tiles = 1;
  CHECK(gathered_params_bytes(big, w, zb) < gathered_params_bytes(big, untiled, zb));
}

TEST_CASE("host gradient buffers follow DeepSpeed's allocations", "[training][zero-infinity]") {
  const ZeroBuffers zb;
  TrainingWorkload w;
  w.gradients = Tier::kCpu;
  w.optimizer = Tier::kCpu;
  const double partition = 2e9;
  // Stage 1/2 (stage_1_and_2.py): an fp32 gradient partition.
  w.zero_stage = 2;
  CHECK(host_grad_partition_bytes(partition, w) == Approx(4 * partition));
  // Stage 3 (stage3.py grad_partitions_flat_buffer): the model dtype, 2 B in mixed precision ...
  w.zero_stage = 3;
  CHECK(host_grad_partition_bytes(partition, w) == Approx(2 * partition));
  // ... and fp32 for one sub-group only, sub_group_size on the CPU, the NVMe sub-group on NVMe.
  CHECK(fp32_grad_sub_group_bytes(partition, w, zb) == Approx(4 * zb.sub_group_params));
  CHECK(fp32_grad_sub_group_bytes(1e6, w, zb) == Approx(4 * 1e6));
  w.optimizer = Tier::kNvme;
  CHECK(fp32_grad_sub_group_bytes(partition, w, zb) == Approx(4 * zb.nvme_sub_group_params));
  // The optimizer swapper: buffer_count fp32 buffers of the largest sub-group.
  CHECK(optimizer_swap_buffer_bytes(partition, w, zb) ==
        Approx(zb.optimizer_swap_buffer_count * zb.nvme_sub_group_params * 4));
}

TEST_CASE("NVMe parameter swap buffers hold one partition each, at least buffer_size",
          "[training][zero-infinity]") {
  const Scenario s = with_strategy("zero_infinity_nvme");
  const ZeroBuffers zb;
  CHECK(param_swap_buffer_bytes(s.model, s.training, 16, zb) ==
        Approx(zb.param_swap_buffer_count * zb.param_swap_buffer_elems * 2));
  const LlmSpec big = scaled_model(s.model, TrainingWorkload::Shape::kWidthDepth, 600);
  const double partition = largest_operator_params(big, 1) / 16;
  REQUIRE(partition > zb.param_swap_buffer_elems);
  CHECK(param_swap_buffer_bytes(big, s.training, 16, zb) ==
        Approx(zb.param_swap_buffer_count * partition * 2));
}

TEST_CASE("cpu_checkpointing moves exactly the activation checkpoints to host memory",
          "[training][zero-infinity]") {
  const ExecutionModel em;
  Scenario s = with_strategy("zero_infinity_cpu");
  REQUIRE(s.training.cpu_checkpointing);
  const CapacityReport off = training_capacity(s, em);
  s.training.cpu_checkpointing = false;
  const CapacityReport on_gpu = training_capacity(s, em);
  const double ckpt = activation_checkpoint_bytes(s.model, 1, 1024);
  CHECK(ckpt == Approx(s.model.layers * 2.0 * 1024 * s.model.hidden));
  CHECK(row_bytes(on_gpu, "gpu", "activations") - row_bytes(off, "gpu", "activations") ==
        Approx(ckpt));
  CHECK(row_bytes(off, "cpu", "activation checkpoints") == Approx(16 * ckpt));
  CHECK(row_bytes(on_gpu, "cpu", "activation checkpoints") == 0);
}

TEST_CASE("ZeRO-Offload keeps fp16 parameters on every GPU and 16 B/param in host memory",
          "[training][zero-infinity]") {
  const ExecutionModel em;
  const Scenario s = with_strategy("zero_offload");
  const CapacityReport r = training_capacity(s, em);
  const double n = count_params(s.model).total;
  CHECK(row_bytes(r, "gpu", "parameters") == Approx(2 * n));
  CHECK(row_bytes(r, "gpu", "gradients") == 0);
  // The stage 1-2 all-gather writes in place in the flat fp16 group: no bucket of its own. One
  // reduce bucket of DeepSpeed's default 5e8 elements, two with overlap_comm.
  CHECK(row_bytes(r, "gpu", "parameter all-gather bucket") == 0);
  CHECK(row_bytes(r, "gpu", "gradient reduce bucket") == Approx(5e8 * 2));
  Scenario overlapped = s;
  overlapped.training.overlap_comm = true;
  CHECK(row_bytes(training_capacity(overlapped, em), "gpu", "gradient reduce bucket") ==
        Approx(2 * 5e8 * 2));
  overlapped.training.reduce_bucket_elems = 5e7;
  CHECK(row_bytes(training_capacity(overlapped, em), "gpu", "gradient reduce bucket") ==
        Approx(2 * 5e7 * 2));
  // Stage 3 reduces through one flat bucket whatever overlap_comm says (stage3.py).
  Scenario stage3 = with_strategy("zero3");
  stage3.training.overlap_comm = true;
  CHECK(row_bytes(training_capacity(stage3, em), "gpu", "gradient reduce bucket") ==
        Approx(5e8 * 2));
  // fp32 master + Adam moments (12 B) and the fp32 gradient partition (4 B), over 16 ranks.
  CHECK(row_bytes(r, "cpu", "optimizer states") + row_bytes(r, "cpu", "fp32 gradient partition") ==
        Approx(16 * n));
  CHECK(row_bytes(r, "cpu", "fp32 gradient buffer (one sub-group)") == 0);
}

TEST_CASE("ZeRO-Infinity CPU holds 16 B/param plus one fp32 sub-group per rank in host memory",
          "[training][zero-infinity]") {
  const ExecutionModel em;
  const Scenario s = with_strategy("zero_infinity_cpu");
  const CapacityReport r = training_capacity(s, em);
  const double n = count_params(s.model).total;
  const double per_param = row_bytes(r, "cpu", "parameters") +
                           row_bytes(r, "cpu", "optimizer states") +
                           row_bytes(r, "cpu", "gradient partitions (flat buffer)");
  CHECK(per_param == Approx(16 * n));
  CHECK(row_bytes(r, "cpu", "fp32 gradient buffer (one sub-group)") ==
        Approx(16 * 4 * std::min(n / 16, ZeroBuffers{}.sub_group_params)));
}

TEST_CASE("ZeRO-Infinity NVMe keeps no per-parameter fp32 state in host memory",
          "[training][zero-infinity]") {
  const ExecutionModel em;
  const Scenario s = with_strategy("zero_infinity_nvme");
  const CapacityReport r = training_capacity(s, em);
  const double n = count_params(s.model).total;
  CHECK(row_bytes(r, "cpu", "optimizer states") == 0);
  CHECK(row_bytes(r, "cpu", "parameters") == 0);
  CHECK(row_bytes(r, "cpu", "gradient partitions (flat buffer)") == Approx(2 * n));
  CHECK(row_bytes(r, "nvme", "optimizer states") == Approx(12 * n));
  CHECK(row_bytes(r, "nvme", "fp32 gradients (swapped sub-groups)") == Approx(4 * n));
  CHECK(row_bytes(r, "nvme", "parameters") == Approx(2 * n));
}

TEST_CASE("DeepSpeed 0.3.15-0.5 keeps fp32 gradients over the partition, or swaps them to NVMe",
          "[training][zero-infinity]") {
  const ExecutionModel em;
  // ZeRO-Infinity CPU: every sub-group's own fp32 gradient buffer (stage3.py
  // initialize_optimizer_states, subgroup_gradient_buffer): 18 B/param on the host, no fp16 flat
  // partition and no separate fp32 sub-group buffer.
  Scenario cpu = with_strategy("zero_infinity_cpu", {"workload.zero3_host_grads=fp32_partition"});
  REQUIRE(cpu.training.zero3_host_grads == TrainingWorkload::Zero3HostGrads::kFp32Partition);
  const CapacityReport r = training_capacity(cpu, em);
  const double n = count_params(cpu.model).total;
  CHECK(row_bytes(r, "cpu", "fp32 gradient partition") == Approx(4 * n));
  CHECK(row_bytes(r, "cpu", "gradient partitions (flat buffer)") == 0);
  CHECK(row_bytes(r, "cpu", "fp32 gradient buffer (one sub-group)") == 0);
  CHECK(row_bytes(r, "cpu", "parameters") + row_bytes(r, "cpu", "optimizer states") +
            row_bytes(r, "cpu", "fp32 gradient partition") ==
        Approx(18 * n));
  // Today's rule on the same scenario holds 2 B/param less per parameter but one fp32 sub-group
  // more, so the release trains a smaller model on the host-bound node.
  const Scenario today = with_strategy("zero_infinity_cpu");
  CHECK(largest_trainable(cpu, em).params < largest_trainable(today, em).params);

  // ZeRO-Infinity NVMe: the fp32 gradients go to NVMe with the optimizer states
  // (partition_previous_reduced_grads: swap_out_gradients); the host keeps one sub-group buffer.
  const Scenario nvme =
      with_strategy("zero_infinity_nvme", {"workload.zero3_host_grads=fp32_partition"});
  const CapacityReport rn = training_capacity(nvme, em);
  const double nn = count_params(nvme.model).total;
  CHECK(host_grad_partition_bytes(nn / 16, nvme.training) == 0);
  CHECK(row_bytes(rn, "cpu", "gradient partitions (flat buffer)") == 0);
  CHECK(row_bytes(rn, "cpu", "fp32 gradient partition") == 0);
  CHECK(row_bytes(rn, "cpu", "fp32 gradient buffer (one sub-group)") ==
        Approx(16 * 4 * std::min(nn / 16, ZeroBuffers{}.nvme_sub_group_params)));
  CHECK(row_bytes(rn, "nvme", "fp32 gradients (swapped sub-groups)") == Approx(4 * nn));

  // Stages 1-2 are the same in both releases (an fp32 partition).
  TrainingWorkload w;
  w.zero_stage = 2;
  w.zero3_host_grads = TrainingWorkload::Zero3HostGrads::kFp32Partition;
  CHECK(host_grad_partition_bytes(1e9, w) == Approx(4e9));
  CHECK(host_grads_are_fp32(w));
}

// Largest model per strategy, in zero_strategies() order.
static std::vector<double> capacities(std::vector<std::string> sets) {
  const ExecutionModel em;
  std::vector<double> out;
  for (const auto& st : zero_strategies()) {
    Scenario s = test::load_yaml(kDgx2, sets);
    apply_strategy(s, st);
    const CapacitySearch found = largest_trainable(s, em);
    out.push_back(found.found ? found.params : 0.0);
  }
  return out;
}

TEST_CASE("on one GPU, ZeRO-Offload outgrows ZeRO-3 and the offload strategies keep their order",
          "[training][zero-infinity]") {
  const std::vector<double> c = capacities({"hardware.gpu.count=1", "workload.global_batch=1"});
  REQUIRE(c.size() == 5);
  // data_parallel, zero_offload, zero3, zero_infinity_cpu, zero_infinity_nvme
  CHECK(c[1] > c[2]);
  CHECK(c[2] >= c[0]);
  CHECK(c[3] >= c[1]);
  CHECK(c[4] >= c[3]);
}

TEST_CASE("each later ZeRO strategy trains at least as large a model on the same node",
          "[training][zero-infinity]") {
  const ExecutionModel em;
  double previous = 0;
  std::string previous_name = "none";
  for (const auto& st : zero_strategies()) {
    Scenario s = test::load_yaml(kDgx2);
    apply_strategy(s, st);
    const CapacitySearch found = largest_trainable(s, em);
    REQUIRE(found.found);
    INFO(st.name << " " << found.params << " after " << previous_name << " " << previous);
    CHECK(found.params >= previous);
    previous = found.params;
    previous_name = st.name;
  }
}

TEST_CASE("ranks that talk to other GPUs hold NCCL's buffers; one GPU does not",
          "[training][capacity]") {
  const ExecutionModel em;
  const Scenario s = with_strategy("zero3");
  const double nccl = em.vllm_non_torch_tp_bytes - em.vllm_non_torch_bytes;
  CHECK(row_bytes(training_capacity(s, em), "gpu", "NCCL communicator buffers") == Approx(nccl));
  const Scenario one = with_strategy("zero3", {"hardware.gpu.count=1", "workload.global_batch=1"});
  CHECK(row_bytes(training_capacity(one, em), "gpu", "NCCL communicator buffers") == 0);
}
TEST_CASE("with checkpointing the loss's logits and a recomputed layer are not held together",
          "[training]") {
  const LlmSpec m = with_strategy("zero_offload").model;
  const double b = 8, seq = 1024;
  const double ckpt = activation_checkpoint_bytes(m, b, 1024);
  const double layer = seq * b * m.hidden * (34.0 + 5.0 * m.heads * seq / m.hidden);
  const double logits = seq * b * m.vocab * 6.0;
  CHECK(activation_bytes(m, b, 1024, true) == Approx(ckpt + std::max(layer, logits)));
  // Without checkpointing every layer's set is still held when the loss runs.
  CHECK(activation_bytes(m, b, 1024, false) == Approx(m.layers * layer + logits));
}

TEST_CASE("a layer's activations follow its own widths and reduce to 34h for a GPT layer",
          "[training]") {
  // Llama-2-7B's widths with a plain MLP four times as wide: a GPT layer.
  LlmSpec gpt = test::llama7b();
  gpt.layers = 2;
  gpt.ffn = 4 * 4096;
  gpt.ffn_kind = FfnKind::kMlp;
  CHECK(layer_token_activation_bytes(gpt, false) == 34.0 * 4096);
  // Llama-3-8B: grouped-query K and V (8 of 32 heads), a gated MLP of 14,336. By hand: norms 4h,
  // QKV input 2h, Q 2h, K and V 2 x 2 x 1024, output input 2h, mask h; MLP input and mask 3h,
  // 4 x 2 x 14,336.
  LlmSpec llama = gpt;
  llama.kv_heads = 8;
  llama.ffn = 14336;
  llama.ffn_kind = FfnKind::kGated;
  const double h = 4096;
  CHECK(layer_token_activation_bytes(llama, false) ==
        4 * h + 2 * h + 2 * h + 4 * 1024 + 2 * h + h + 3 * h + 8.0 * 14336);
  // MLA (DeepSeek-V3's widths): K and V widened per head and the two latents kept besides.
  LlmSpec mla = gpt;
  mla.hidden = 7168;
  mla.heads = 128;
  mla.kv_heads = 128;
  mla.head_size = 192;
  mla.v_head_size = 128;
  mla.kv_lora_rank = 512;
  mla.qk_rope_dim = 64;
  mla.q_lora_rank = 1536;
  mla.ffn = 18432;
  mla.ffn_kind = FfnKind::kGated;
  const double H = 7168, q = 128 * 192.0, v = 128 * 128.0;
  const double attention = 4 * H + 2 * H + 2 * q + 2 * q + 2 * v + 2 * v + H + 2 * (1536 + 512);
  CHECK(layer_token_activation_bytes(mla, false) == Approx(attention + 3 * H + 8.0 * 18432));
  // An MoE layer: each token's 8 experts keep a copy of it and their inner activations, the
  // shared expert its own, the router its fp32 probabilities.
  LlmSpec moe = mla;
  moe.experts = 256;
  moe.experts_per_token = 8;
  moe.ffn = 2048;
  moe.shared_ffn = 2048;
  moe.dense_ffn = 18432;
  moe.dense_first_layers = 1;
  CHECK(layer_token_activation_bytes(moe, true) ==
        Approx(attention + 3 * H + 8 * (2 * H + 8.0 * 2048) + 8.0 * 2048 + 4.0 * 256));
  CHECK(layer_token_activation_bytes(moe, false) == Approx(attention + 3 * H + 8.0 * 18432));
  // Without checkpointing the dense first layer and the expert layer each count once.
  const double seq = 512, b = 1;
  const double scores = 5.0 * 128 * seq;
  CHECK(activation_bytes(moe, b, 512, false) ==
        Approx(seq * b *
                   (layer_token_activation_bytes(moe, true) +
                    layer_token_activation_bytes(moe, false) + 2 * scores) +
               seq * b * moe.vocab * 6.0));
}

TEST_CASE("ZeRO-Offload's 4B and 8B models fit one V100-32GB at the batches it trained them with",
          "[training][zero-offload]") {
  // ATC'21 Table 3 (scenarios/training/zero-offload-v100-gpt2-{4b,8b}.yaml): the paper trained
  // both on one GPU; summing the logits with a recomputed layer refused them by 2.0 and 1.0 GB.
  const ExecutionModel em;
  for (const char* size : {"4b", "8b"}) {
    INFO(size);
    const Scenario s =
        config::load_scenario(std::string(TIERSIM_SOURCE_DIR) +
                              "/scenarios/training/zero-offload-v100-gpt2-" + size + ".yaml");
    const CapacityReport r = training_capacity(s, em);
    CHECK(r.fits);
  }
}
}  // namespace model_training_memory_test
