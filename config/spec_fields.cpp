#include "config/spec_fields.hpp"

namespace tiersim::config {

// Ranges reject values that are physically meaningless (negative bandwidth, zero layers) so a
// typo in a catalog or an override fails loudly instead of producing a silent nonsense result.
const std::vector<SpecField<GpuSpec>>& gpu_fields() {
  using G = GpuSpec;
  static const std::vector<SpecField<G>> kFields = {
      {"memory_mib", &G::memory_mib, "MiB", 0, kNoLimit, true,
       "device memory as nvidia-smi reports its total (MiB = 2^20 bytes)"},
      {"memory_label", &G::memory_label, "", 0, 0, false,
       "the marketing figure (e.g. \"141 GB HBM3e\"); a label only"},
      {"memory_reserved_mib", &G::memory_reserved_mib, "MiB", 0, kNoLimit, false,
       "part of the total the driver reserves (nvidia-smi -q: Reserved); CUDA cannot allocate it"},
      {"arch", &G::arch, "", 0, 0, false,
       "GPU generation (volta, turing, ampere, ampere-ga10x, ada, hopper, blackwell, "
       "blackwell-gb20x, cdna3): sizes the CUDA context and library workspaces"},
      {"sm_count", &G::sm_count, "", 1, 100000, false,
       "streaming multiprocessors (compute units): the CUDA context reserves local memory for "
       "every resident thread of each"},
      {"cuda_context_mib", &G::cuda_context_mib, "MiB", 0, kNoLimit, false,
       "measured GPU memory a PyTorch process holds outside its tensors after its first GEMMs "
       "(optional; replaces the modelled CUDA context; tools/gpu/context_memory_probe.py)"},
      {"rates_from", &G::rates_from, "", 0, 0, false,
       "catalog GPU whose achieved rates this entry inherits, not having measured its own"},
      {"hbm_gbps", &G::hbm_gbps, "GB/s", 0, kNoLimit, true, "device memory bandwidth"},
      {"fp16_tflops", &G::fp16_tflops, "TFLOP/s", 0, kNoLimit, true,
       "dense FP16/BF16 tensor throughput"},
      {"fp16_achieved_tflops", &G::fp16_achieved_tflops, "TFLOP/s", 0, kNoLimit, true,
       "achieved dense FP16 GEMM rate of long runs (optional; replaces fp16_tflops x the GEMM "
       "efficiency)"},
      {"fp16_decode_achieved_tflops", &G::fp16_decode_achieved_tflops, "TFLOP/s", 0, kNoLimit, true,
       "achieved FP16 GEMM rate of decode GEMMs, one batch of tokens (optional; FlexGen's runtime "
       "only; replaces fp16_achieved_tflops there)"},
      {"l2_shared_read_gbps", &G::l2_shared_read_gbps, "GB/s", 0, kNoLimit, true,
       "achieved L2 read rate when many SMs read the same lines (optional; re-reads of the KV "
       "cache by the query heads of one KV head are served from L2 at this rate)"},
      {"fp8_achieved_tflops", &G::fp8_achieved_tflops, "TFLOP/s", 0, kNoLimit, true,
       "achieved dense FP8 GEMM rate of large products (optional; caps fp8_tflops x the stack's "
       "FP8 efficiency)"},
      {"fp4_achieved_tflops", &G::fp4_achieved_tflops, "TFLOP/s", 0, kNoLimit, true,
       "achieved dense FP4 (NVFP4) GEMM rate of large products (optional; caps fp4_tflops x the "
       "stack's FP4 efficiency)"},
      {"fp16_power_limited_share", &G::fp16_power_limited_share, "", 0, 1, true,
       "share of the boost-clock fp16/bf16 rates (fp16_achieved_tflops, fused attention kernels' "
       "published rates) the board keeps held at full math rate under its power limit (optional; "
       "tools/gpu/power_probe.py)"},
      {"fp8_power_limited_share", &G::fp8_power_limited_share, "", 0, 1, true,
       "the same for FP8 GEMMs (fp8_achieved_tflops; optional)"},
      {"gemm_exposed_weight_gbps", &G::gemm_exposed_weight_gbps, "GB/s", 0, kNoLimit, true,
       "rate at which an fp16/bf16 GEMM's weight bytes add to its math time, the loads its "
       "pipeline does not hide (optional; fitted on the board's GEMM shape sweep; unset = the "
       "math hides them)"},
      {"fp8_gemm_exposed_weight_gbps", &G::fp8_gemm_exposed_weight_gbps, "GB/s", 0, kNoLimit, true,
       "the same for FP8 GEMMs (optional)"},
      {"int8_tops", &G::int8_tops, "TOP/s", 0, kNoLimit, false,
       "dense INT8 (or FP8) tensor throughput"},
      {"fp8_tflops", &G::fp8_tflops, "TFLOP/s", 0, kNoLimit, false,
       "dense FP8 tensor throughput; 0 = no FP8 tensor cores (before Ada and Hopper)"},
      {"fp4_tflops", &G::fp4_tflops, "TFLOP/s", 0, kNoLimit, false,
       "dense FP4 tensor throughput; 0 = no FP4 tensor cores (before Blackwell)"},
      {"fp32_tflops", &G::fp32_tflops, "TFLOP/s", 0, kNoLimit, false,
       "non-tensor FP32 throughput (elementwise work)"},
      {"pcie_gen", &G::pcie_gen, "", 1, 7, false, "PCIe generation of the host link"},
      {"pcie_lanes", &G::pcie_lanes, "", 1, 32, false, "lanes of the host link"},
      {"pcie_h2d_gbps", &G::pcie_h2d_gbps, "GB/s", 0, kNoLimit, false,
       "achieved pinned host-to-device copy rate; 0 = derive from the link"},
      {"pcie_d2h_gbps", &G::pcie_d2h_gbps, "GB/s", 0, kNoLimit, false,
       "achieved pinned device-to-host copy rate; 0 = derive from the link"},
      {"pcie_copy_overhead_us", &G::pcie_copy_overhead_us, "us", 0, kNoLimit, false,
       "fixed cost of one pinned host<->GPU copy on top of its bytes at the copy rate (optional; "
       "charged per KV block a serving KV tier copies; unset = none)"},
      {"nvlink_gbps", &G::nvlink_gbps, "GB/s", 0, kNoLimit, false,
       "GPU-to-GPU bandwidth per direction; 0 = no NVLink"},
      {"pcie_p2p", &G::pcie_p2p, "", 0, 1, false,
       "two boards without NVLink reach each other's memory over PCIe (CUDA peer access); false "
       "= collectives go through host memory (GeForce boards)"},
      {"tdp_w", &G::tdp_w, "W", 0, kNoLimit, false, "board power limit"},
      {"idle_w", &G::idle_w, "W", 0, kNoLimit, false, "idle power with a CUDA context open"},
      {"memory_power_fraction", &G::memory_power_fraction, "", 0, 1, false,
       "fraction of the dynamic power range (tdp_w - idle_w) a kernel streaming device memory at "
       "the achieved bandwidth draws; compute-bound kernels draw all of it"},
      {"power_limit_w", &G::power_limit_w, "W", 0, kNoLimit, false,
       "power limit the board is set to (nvidia-smi -pl), at most tdp_w; 0 = tdp_w. Kernels "
       "whose power by activity exceeds it run at a lower SM clock"},
      {"clock_power_exponent", &G::clock_power_exponent, "", 1, 3, false,
       "exponent of the SM clock in the math units' dynamic power (P ~ f^exponent; 3 = voltage "
       "in proportion to the clock, 1 = at the voltage floor)"},
      {"gds", &G::gds, "", 0, 1, false, "supports GPUDirect Storage"},
  };
  return kFields;
}

const std::vector<SpecField<HostSpec>>& host_fields() {
  using H = HostSpec;
  static const std::vector<SpecField<H>> kFields = {
      {"sockets", &H::sockets, "", 1, 16, false, "CPU sockets"},
      {"cores_per_socket", &H::cores_per_socket, "", 1, 1024, false, "cores per socket"},
      {"dram_gb", &H::dram_gb, "GB", 0, kNoLimit, true,
       "installed DRAM (1e9 bytes); a catalog host's value is the most it holds "
       "(hardware.host.size_dram)"},
      {"dram_gbps", &H::dram_gbps, "GB/s", 0, kNoLimit, true,
       "aggregate DRAM bandwidth over all sockets (theoretical)"},
      {"memory_channels", &H::memory_channels, "", 0, 64, false,
       "DRAM channels per socket; with min_dimm_gib the floor of sized DRAM (each channel the "
       "same DIMM); 0 = not known"},
      {"dimms_per_channel", &H::dimms_per_channel, "", 1, 4, false,
       "DIMMs in each channel of the least population the platform ships"},
      {"min_dimm_gib", &H::min_dimm_gib, "GiB", 0, kNoLimit, false,
       "smallest DIMM the platform's vendor sells for it (GiB = 2^30 bytes); 0 = not known"},
      {"nonbinary_dimms", &H::nonbinary_dimms, "", 0, 1, false,
       "1: the platform's vendor also sells DDR5 non-binary RDIMMs (48 and 96 GiB), steps of "
       "sized DRAM between the doublings of min_dimm_gib; 0 = binary sizes only"},
      {"cpu_fp16_gflops", &H::cpu_fp16_gflops, "GFLOP/s", 0, kNoLimit, false,
       "achieved per-socket CPU fp16 batched matmul rate"},
      {"cpu_fp32_gflops", &H::cpu_fp32_gflops, "GFLOP/s", 0, kNoLimit, false,
       "achieved per-socket CPU fp32 matmul rate"},
      {"cpu_tdp_w", &H::cpu_tdp_w, "W", 0, kNoLimit, false, "CPU power limit per socket"},
      {"cpu_idle_w", &H::cpu_idle_w, "W", 0, kNoLimit, false, "CPU idle power per socket"},
      {"dram_w_per_gb_active", &H::dram_w_per_gb_active, "W/GB", 0, kNoLimit, false,
       "DRAM power per GB while the memory bus is busy"},
      {"dram_w_per_gb_idle", &H::dram_w_per_gb_idle, "W/GB", 0, kNoLimit, false,
       "DRAM power per GB while idle"},
      {"platform_w", &H::platform_w, "W", 0, kNoLimit, false,
       "constant DC power of board, BMC, NICs, switches, boot drives (and of fans and PSU loss "
       "where those are not modelled apart)"},
      {"fan_max_w", &H::fan_max_w, "W", 0, kNoLimit, false,
       "power of all fans at full speed; 0 = fans are in platform_w"},
      {"fan_min_speed", &H::fan_min_speed, "", 0, 1, false,
       "fan speed floor at light load (fraction of full speed)"},
      {"cooling_design_w", &H::cooling_design_w, "W", 0, kNoLimit, false,
       "heat at which the fans reach full speed (fan speed goes with heat, power with speed^3)"},
      {"psu_count", &H::psu_count, "", 0, 64, false,
       "installed power supplies; 0 = PSU conversion loss is in platform_w"},
      {"psu_standby", &H::psu_standby, "", 0, 64, false,
       "PSUs held in standby (hot spare), carrying no load"},
      {"psu_rating_w", &H::psu_rating_w, "W", 0, kNoLimit, false, "DC output rating of one PSU"},
      {"psu_efficiency", &H::psu_efficiency, "", 0, 0, false,
       "80 PLUS level of the PSUs (bronze, silver, gold, platinum, titanium): the efficiency "
       "curve of the 230 V internal redundant certification"},
      {"pcie_gen", &H::pcie_gen, "", 1, 7, false,
       "host PCIe generation (caps GPU and drive links)"},
      {"nvme_io_gbps", &H::nvme_io_gbps, "GB/s", 0, kNoLimit, false,
       "cap of the kernel storage path on aggregate NVMe I/O; 0 = none"},
      {"virtual_machine", &H::virtual_machine, "", 0, 1, false,
       "the host is a virtual machine guest (a cloud instance): fresh pages fault in at the rate "
       "measured in a KVM guest; false = bare metal, at the bare-metal figure"},
      {"page_fault_gbps", &H::page_fault_gbps, "GB/s", 0, kNoLimit, false,
       "per-thread rate of first touch (fault-in and zeroing) of fresh pages measured on this "
       "host; 0 = the figure of its virtual_machine label"},
      {"pageable_copy_gbps", &H::pageable_copy_gbps, "GB/s", 0, kNoLimit, false,
       "measured device-to-host copy into warm pageable memory on one thread (the driver's "
       "staging); 0 = not measured, each workload's default"},
      {"pageable_h2d_gbps", &H::pageable_h2d_gbps, "GB/s", 0, kNoLimit, false,
       "measured host-to-device copy from pageable memory on one thread, of tensors as large as "
       "a model's weights (the driver's staging memcpy); 0 = not measured, pageable_copy_gbps "
       "or the inference default"},
      {"gpus_per_pcie_switch", &H::gpus_per_pcie_switch, "", 0, 64, false,
       "GPUs behind one PCIe switch, sharing its uplink to the CPU (peer traffic between them "
       "stays in the switch); 0 = each GPU on a root port of its own"},
      {"pcie_switch_uplink_gbps", &H::pcie_switch_uplink_gbps, "GB/s", 0, kNoLimit, false,
       "achieved per-direction rate of a PCIe switch's uplink; 0 = x16 of the host's PCIe "
       "generation at the GPU links' efficiency"},
      {"gpu_p2p", &H::gpu_p2p, "", 0, 1, false,
       "the platform allows GPU peer access over PCIe; false = collectives between GPUs without "
       "NVLink go through host memory even where the boards support peer access"},
  };
  return kFields;
}

const std::vector<SpecField<NvmeSpec>>& drive_fields() {
  using N = NvmeSpec;
  static const std::vector<SpecField<N>> kFields = {
      {"pcie_gen", &N::pcie_gen, "", 1, 7, false, "PCIe generation of the drive"},
      {"pcie_lanes", &N::pcie_lanes, "", 1, 16, false, "PCIe lanes of the drive"},
      {"capacity_tb", &N::capacity_tb, "TB", 0, kNoLimit, true, "capacity (1e12 bytes)"},
      {"read_gbps", &N::read_gbps, "GB/s", 0, kNoLimit, true,
       "sequential read per drive (128 KiB+ blocks, high queue depth)"},
      {"write_gbps", &N::write_gbps, "GB/s", 0, kNoLimit, true, "sequential write per drive"},
      {"rand_read_kiops", &N::rand_read_kiops, "kIOPS", 0, kNoLimit, false,
       "4 KiB random read IOPS (thousands)"},
      {"rand_write_kiops", &N::rand_write_kiops, "kIOPS", 0, kNoLimit, false,
       "4 KiB random write IOPS (thousands)"},
      {"read_latency_us", &N::read_latency_us, "us", 0, kNoLimit, false,
       "4 KiB read latency at queue depth 1"},
      {"write_latency_us", &N::write_latency_us, "us", 0, kNoLimit, false,
       "4 KiB write latency at queue depth 1"},
      {"active_w", &N::active_w, "W", 0, kNoLimit, false,
       "maximum active power per drive"},
      {"active_read_w", &N::active_read_w, "W", 0, kNoLimit, false,
       "active power per drive reading at its rated sequential rate (0 = active_w)"},
      {"active_write_w", &N::active_write_w, "W", 0, kNoLimit, false,
       "active power per drive writing at its rated sequential rate (0 = active_w)"},
      {"idle_w", &N::idle_w, "W", 0, kNoLimit, false, "idle power per drive"},
      {"dwpd", &N::dwpd, "1/day", 0, kNoLimit, false,
       "endurance rating: drive writes per day over the warranty period (0 = not rated)"},
  };
  return kFields;
}

const std::vector<SpecField<LlmSpec>>& llm_fields() {
  using L = LlmSpec;
  static const std::vector<SpecField<L>> kFields = {
      // First: a config.json replaces every architecture field, which the rows below may then
      // override one by one.
      {"hf_config", &L::hf_config, "", 0, 0, false,
       "a Hugging Face config.json to read the architecture from (relative to the scenario "
       "file; in the catalog, to its folder)"},
      {"family", &L::family, "", 0, 0, false,
       "architecture family (HF model_type: opt, llama, ...)"},
      // Simulation time and the weight layout grow with layers. The deepest published
      // transformers have about 1000 (DeepNet, Wang et al. 2022); 100000 leaves ample room.
      {"layers", &L::layers, "", 1, 100000, false, "transformer layers"},
      {"hidden", &L::hidden, "", 1, kNoLimit, false, "hidden size"},
      {"ffn", &L::ffn, "", 1, kNoLimit, false, "FFN inner size (per expert for MoE)"},
      {"heads", &L::heads, "", 1, kNoLimit, false, "attention heads"},
      {"kv_heads", &L::kv_heads, "", 1, kNoLimit, false,
       "key/value heads (== heads without grouped-query attention)"},
      {"vocab", &L::vocab, "", 1, kNoLimit, false, "vocabulary size"},
      // Published MoEs route among a few hundred experts (DeepSeek-V3: 256 routed, arXiv
      // 2412.19437). The layout holds every expert's tensors, so memory grows with the count
      // (1e6 experts took 7.6 GB to report "does not fit"); 16384 leaves ample room.
      {"experts", &L::experts, "", 1, 16384, false, "FFN experts (1 = dense)"},
      {"experts_per_token", &L::experts_per_token, "", 1, kNoLimit, false,
       "experts routed per token (top-k)"},
      {"shared_ffn", &L::shared_ffn, "", 0, kNoLimit, false,
       "inner width of the shared experts every token runs beside its routed ones (0 = none)"},
      {"dense_first_layers", &L::dense_first_layers, "", 0, 100000, false,
       "MoE: the first layers run one dense MLP of dense_ffn instead of the experts (HF "
       "first_k_dense_replace; 0 = none)"},
      {"moe_layer_step", &L::moe_layer_step, "", 1, 100000, false,
       "MoE: experts on layer l (from 0) when (l + 1) is a multiple of this (HF "
       "decoder_sparse_step); the other layers run the dense MLP"},
      {"dense_ffn", &L::dense_ffn, "", 0, kNoLimit, false,
       "MoE: inner width of the dense MLP of the layers without experts (HF intermediate_size "
       "beside moe_intermediate_size; 0 = ffn)"},
      {"ffn_kind", &L::ffn_kind, "", 0, 0, false, "mlp (up+down) or gated (gate+up+down)"},
      {"tied_embeddings", &L::tied_embeddings, "", 0, 1, false,
       "output projection shares the input embedding"},
      {"learned_positions", &L::learned_positions, "", 0, 1, false,
       "learned position table (OPT/BLOOM style)"},
      {"max_positions", &L::max_positions, "", 1, kNoLimit, false, "maximum sequence length"},
      {"published_params_b", &L::published_params_b, "1e9 params", 0, kNoLimit, false,
       "published parameter count, for the catalog cross-check only"},
      {"head_dim", &L::head_size, "", 0, kNoLimit, false,
       "width of one attention head where the model sets it apart (0 = hidden / heads)"},
      {"sliding_window", &L::sliding_window, "", 0, kNoLimit, false,
       "sliding-window attention span in tokens (0 = none): a sliding layer attends to the last "
       "this many tokens; whether the cache keeps only those is the stack's"},
      {"full_attention_layers", &L::full_attention_layers, "", 0, kNoLimit, false,
       "of a model with a sliding window, the layers that attend over the whole context all the "
       "same (HF layer_types full_attention; 0 = every layer slides)"},
      {"chunked_attention", &L::chunked_attention, "", 0, 1, false,
       "of a model with a sliding window, the sliding layers attend within fixed chunks of "
       "sliding_window tokens (HF attention_chunk_size, Llama 4): a query sees its own chunk's "
       "keys up to itself"},
      {"kv_lora_rank", &L::kv_lora_rank, "", 0, kNoLimit, false,
       "multi-head latent attention: elements of the compressed key/value latent per token (HF "
       "kv_lora_rank; 0 = not MLA)"},
      {"qk_rope_dim", &L::qk_rope_dim, "", 0, kNoLimit, false,
       "MLA: elements of the rotary key every head shares, part of head_dim (HF "
       "qk_rope_head_dim)"},
      {"q_lora_rank", &L::q_lora_rank, "", 0, kNoLimit, false,
       "MLA: width of the query's down projection (HF q_lora_rank; 0 = one q_proj)"},
      {"v_head_dim", &L::v_head_size, "", 0, kNoLimit, false,
       "width of one value head where it differs from head_dim (HF v_head_dim; 0 = head_dim)"},
      {"dtype", &L::dtype, "", 0, 0, false, "the checkpoint's torch_dtype (informational)"},
  };
  return kFields;
}

const std::vector<std::string>& ffn_kind_names() {
  static const std::vector<std::string> kNames = {"mlp", "gated"};
  return kNames;
}

}  // namespace tiersim::config
