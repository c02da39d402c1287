#pragma once
// A fully resolved scenario: the hardware, the model, the workload and the policy, with every
// catalog reference already looked up and every override applied. config/scenario_loader builds
// it from YAML; the simulator and the models only ever see this struct.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/hardware.hpp"
#include "model/llm.hpp"
#include "model/provenance.hpp"
#include "model/ssd_model.hpp"
#include "model/stack.hpp"

namespace tiersim {

enum class Tier { kGpu, kCpu, kNvme };
const char* to_string(Tier t);

// Fractions of a quantity (weights, KV cache) kept on each tier; they sum to 1.
struct Placement {
  double gpu = 0;
  double cpu = 0;
  double nvme = 0;
  static Placement all_on(Tier t) {
    Placement p;
    (t == Tier::kGpu ? p.gpu : t == Tier::kCpu ? p.cpu : p.nvme) = 1.0;
    return p;
  }
  double on(Tier t) const { return t == Tier::kGpu ? gpu : t == Tier::kCpu ? cpu : nvme; }
};

enum class IoPath {
  kAio,  // NVMe -> pinned host bounce buffer -> GPU (DeepSpeed AIO / DeepNVMe default)
  kGds   // NVMe -> GPU memory directly (GPUDirect Storage)
};

// How ZeRO-Inference's DeepNVMe reads: each thread owns an async queue of `queue_depth` requests
// of `block_size_bytes`.
struct AioConfig {
  double block_size_bytes = 16.0 * 1024 * 1024;
  int queue_depth = 64;
  int threads = 8;
  int swap_buffers = 5;  // pinned host buffers for the AIO bounce (DeepSpeed's default is 5)
};

struct Parallelism {
  int tensor = 1;    // tensor-parallel degree (Megatron-style: two all-reduces per layer)
  int pipeline = 1;  // pipeline stages (layers split in contiguous blocks over GPUs)
  int micro_batches = 1;  // pipeline micro-batches per batch
  // Inference: data-parallel ranks of DeepSpeed's multi-GPU ZeRO-Inference (ZeRO stage 3). Every
  // rank runs workload.batch / data sequences of its own; each parameter is partitioned over the
  // ranks (1/data on each, in GPU memory or offloaded) and all-gathered before its module runs
  // (Zero3Settings). Training derives its data-parallel degree from the GPU count instead.
  int data = 1;
  // GPUs one simulated GPU resource stands for: the tensor-parallel ranks of a stage and the
  // data-parallel ranks, all in lockstep (energy counts each of them).
  int gpus_in_lockstep() const { return tensor * data; }
};

// DeepSpeed's ZeRO stage 3 settings as multi-GPU ZeRO-Inference uses them (policy.zero3.*;
// deepspeed/runtime/zero/config.py names and defaults). Elements, not bytes.
struct Zero3Settings {
  // stage3_param_persistence_threshold: a parameter of at most this many elements is not
  // partitioned but kept whole on every GPU, never gathered (partition_parameters.py,
  // Init._convert_to_deepspeed_param: ds_persist = ds_numel <= param_persistence_threshold).
  double param_persistence_threshold = 1e5;
  // stage3_prefetch_bucket_size: elements of the upcoming modules' parameters whose all-gather
  // is started ahead of use (partitioned_param_coordinator.py fetch_sub_module); 0 = no prefetch.
  double prefetch_bucket_size = 5e7;
  // stage3_max_live_parameters: gathered elements allowed in GPU memory at once; the prefetch
  // takes at most what is left of it.
  double max_live_parameters = 1e9;
};

// Which experts of an MoE layer the runtime fetches for a forward pass.
enum class MoeFetch {
  // Every expert: DeepSpeed-MoE runs every local expert on its (padded) capacity chunk
  // (deepspeed/moe/experts.py Experts.forward), and ZeRO-3 with an HF MoE block marked a leaf
  // (deepspeed/utils/z3_leaf_module.py set_z3_leaf_modules) gathers all of the block's params.
  kAll,
  // Only experts with routed tokens: HF transformers' MixtralSparseMoeBlock.forward calls only the
  // experts in expert_hit, so per-expert offload hooks (accelerate) load only those; likewise
  // mixtral-offloading (selected_experts.unique()) and llama.cpp's mul_mat_id.
  kRouted
};

enum class Schedule {
  kZeroInference,  // every layer's weights fetched once per forward pass of the whole batch
  kFlexGenBlock,   // the batch is split in gpu_batches; each fetched layer serves all of them
  kFlexGen         // FlexGen's own runtime with its whole policy (FlexGenPolicy below)
};

// FlexGen's policy as its command line gives it (FMInference/FlexiGen flexgen/flex_opt.py, the
// Policy dataclass and add_parser_arguments). The six percentages are --percent: weights,
// attention (KV) cache and activations on the GPU and the CPU; the rest of each pair's 100 is on
// disk. Used when Policy::schedule is kFlexGen.
struct FlexGenPolicy {
  double w_gpu_percent = 100;
  double w_cpu_percent = 0;
  double cache_gpu_percent = 100;
  double cache_cpu_percent = 0;
  double act_gpu_percent = 100;
  double act_cpu_percent = 0;
  int gpu_batch_size = 4;          // sequences per GPU batch (--gpu-batch-size)
  int num_gpu_batches = 1;         // GPU batches served by each loaded layer (--num-gpu-batches)
  bool cpu_cache_compute = false;  // decode attention on the CPU (--cpu-cache-compute)
  bool overlap = true;             // I/O on side streams overlapped with compute (--overlap)
  bool pin_weight = true;          // CPU-resident weight matrices pinned (--pin-weight)
  bool compress_weight = false;    // 4-bit group-wise weights (--compress-weight)
  bool compress_cache = false;     // 4-bit group-wise KV cache (--compress-cache)
  // --debug-mode fewer_batch: FlexGen times the prefill and layers 10..19 of the first decode
  // token, and projects every decode token from their mean (how bench_suite.py's offloaded
  // cases were measured).
  bool debug_fewer_batch = false;
  double w_disk_percent() const { return 100 - w_gpu_percent - w_cpu_percent; }
  double cache_disk_percent() const { return 100 - cache_gpu_percent - cache_cpu_percent; }
};

struct Policy {
  Placement weights = Placement::all_on(Tier::kGpu);
  Placement kv_cache = Placement::all_on(Tier::kGpu);  // gpu or cpu (cpu: attention on the CPU)
  int weight_bits = 16;  // 16, 8 or 4 (quantised; how they run is the stack's property)
  int kv_bits = 16;      // KV cache element precision (8: FP8/INT8 KV cache)
  int quant_group_size = 64;
  IoPath io_path = IoPath::kAio;
  int prefetch_layers = 1;  // layers fetched ahead of the one computing
  bool pin_memory = true;   // host-resident weights pinned (DMA) or pageable (CPU-staged copies)
  AioConfig aio;
  Parallelism parallelism;
  Schedule schedule = Schedule::kZeroInference;
  int gpu_batches = 1;  // FlexGen block schedule: number of GPU batches per block
  MoeFetch moe_fetch = MoeFetch::kAll;  // MoE models: which experts each pass fetches
  // The software that runs the kernels (model/stack.hpp); eager PyTorch with DeepSpeed unless
  // the scenario names another.
  ExecutionStack stack = execution_stack(kDefaultStackName);
  FlexGenPolicy flexgen;  // schedule kFlexGen only
  Zero3Settings zero3;    // parallelism.data > 1 only

  // GPU batches each fetched layer serves: gpu_batches under FlexGen's block schedule, else 1
  // (only that schedule splits the batch).
  int batches_per_fetch() const {
    return schedule == Schedule::kFlexGenBlock && gpu_batches > 1 ? gpu_batches : 1;
  }
};

struct NvmeArray {
  NvmeSpec drive;         // per-drive spec (catalog entry plus overrides)
  int count = 0;          // drives in the RAID-0 volume; 0 = no NVMe
  SsdModel model;         // per-drive device model (datasheet-derived or calibrated profile)
  std::string profile_path;  // non-empty when the model came from a calibrated profile
};

struct Hardware {
  GpuSpec gpu;
  int gpu_count = 1;
  HostSpec host;
  NvmeArray nvme;
};

// One enumerator per line of sim/workloads/registry.def (the list of workload kinds).
enum class WorkloadKind {
#define TIERSIM_WORKLOAD(Enumerator, name) Enumerator,
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD
};
inline constexpr int kWorkloadKindCount = 0
#define TIERSIM_WORKLOAD(Enumerator, name) +1
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD
    ;
const char* to_string(WorkloadKind k);

struct InferenceWorkload {
  int batch = 1;           // sequences decoded together
  int prompt_tokens = 512;
  int gen_tokens = 32;     // generated tokens per sequence (the first comes out of prefill)
};

// Online serving: a stream of requests arriving over time, batched by a scheduler on the same
// GPUs, tiers and per-layer cost model as `inference` (sim/workloads/serving/).
struct ServingWorkload {
  int requests = 1000;             // requests simulated (the first N rows of a trace)
  double arrival_rate_per_s = -1;  // mean arrival rate; -1 = unset (a trace gives the arrivals)
  double arrival_cv = 1;           // coefficient of variation of inter-arrival gaps (1 = Poisson)
  std::string trace;               // CSV of requests (Azure LLM inference trace or plain); "" = none
  // Length distributions of prompts and outputs when no trace gives them.
  enum class Lengths { kFixed, kUniform, kLognormal };
  Lengths prompt_dist = Lengths::kFixed;
  int prompt_tokens = 512;         // fixed: the length; uniform: the upper bound; lognormal: median
  int prompt_tokens_min = 1;       // uniform: the lower bound
  double prompt_sigma = 1;         // lognormal: standard deviation of ln(length)
  Lengths output_dist = Lengths::kFixed;
  int output_tokens = 128;
  int output_tokens_min = 1;
  double output_sigma = 1;
  enum class Scheduler {
    kStatic,
    kContinuous,
    kChunked,
    kInflight
  } scheduler = Scheduler::kContinuous;
  int max_batch = 256;             // requests in one batch (static) or running at once
  double max_wait_s = 0;           // static: longest the oldest request waits for a full batch
  int token_budget = 0;            // tokens per iteration; 0 = the scheduler's default
  int block_tokens = 16;           // paged KV cache block
  double gpu_memory_utilization = 0.9;  // share of GPU memory the server may use
  // What a preempted request loses: recompute drops its KV cache and prefills again; swap copies
  // its KV blocks to host DRAM and back before it resumes (vLLM's preemption_mode).
  enum class Preemption { kRecompute, kSwap } preemption = Preemption::kRecompute;
  // How requests are admitted into the KV pool: the execution stack's rule
  // (ExecutionStack::kv_admission), or one named here (a TensorRT-LLM run's
  // capacity_scheduler_policy, a what-if).
  enum class Admission {
    kStack,
    kPromptBlocks,
    kGuaranteedNoEvict
  } kv_admission = Admission::kStack;
  double swap_space_bytes = 4.0 * 1024 * 1024 * 1024;  // host DRAM for swapped KV, per GPU
  double slo_ttft_s = -1;          // time-to-first-token target; -1 = none
  double slo_tbt_s = -1;           // time-between-tokens target (per-request mean); -1 = none
  int seed = 1;
  // Requests, the first in arrival order, left out of the latency, SLO and prefix-hit metrics:
  // the warm-up of the queue and the KV cache. -1 = unset: workload.requests / 20 where requests
  // carry prefix structure, else 0 (sim/workloads/serving/serving.cpp warmup_requests).
  int warmup_requests = -1;
  // Prefix reuse and the KV cache hierarchy (sim/workloads/serving/prefix_stream.hpp,
  // kv_tiers.hpp). Synthetic conversations: turns per session (geometric with this mean; 1 = none),
  // the mean think time between a turn's arrival and the next, and a pool of shared system prompts
  // drawn with a Zipf popularity.
  double turns = 1;
  double think_time_s = 30;
  // The shortest of those gaps [s]: a gap is think_time_min_s plus an exponential with mean
  // think_time_s - think_time_min_s (0: a plain exponential). A coding agent's next call cannot
  // come before its answer is generated and its tool has run.
  double think_time_min_s = 0;
  int shared_prefixes = 0;
  int shared_prefix_tokens = 0;
  double prefix_zipf = 1.0;
  int prefix_block_tokens = 512;  // tokens per hashed KV block (Mooncake's traces: 512)
  bool prefix_caching = true;     // reuse cached prefix blocks (vLLM enable_prefix_caching)
  // Whether the GPU's paged pool keeps freed prefix blocks for reuse; false with a DRAM or NVMe
  // tier: every hit comes from a lower tier (vLLM with prefix caching off and a KV offloading
  // connector on, as the connector's published benchmarks run).
  bool gpu_prefix_caching = true;
  // Host DRAM and NVMe tiers for KV blocks, per server [bytes]; 0 = none, negative = `auto` (what
  // the server has left, model/capacity.hpp serving_kv_tiers).
  double kv_host_cache_bytes = 0;
  double kv_nvme_cache_bytes = 0;
  // Whether the run keeps KV blocks in host DRAM or on NVMe at all (either tier given or auto).
  bool kv_tiers() const { return kv_host_cache_bytes != 0 || kv_nvme_cache_bytes != 0; }
  enum class KvWrite { kWriteThrough, kWriteBack } kv_write = KvWrite::kWriteThrough;
  // Whether a prefix cached only on NVMe is always loaded, or loaded only when the array reads it
  // faster than the GPUs recompute it (sim/workloads/serving/serving.cpp cached_prefix).
  enum class KvLoad { kAlways, kIfFaster } kv_load = KvLoad::kAlways;
};

// A raw transfer benchmark of the NVMe array (what DeepSpeed's ds_io measures).
struct IoWorkload {
  bool write = false;
  double bytes = 1e9;       // bytes per transfer
  enum class Buffer { kCpu, kGpuBounce, kGpuDirect } buffer = Buffer::kCpu;
};

// Training with ZeRO offload (see sim/workloads/training/training.hpp and model/training_memory.hpp).
struct TrainingWorkload {
  // Mixed precision keeps fp16/bf16 parameters and gradients with fp32 master weights in the
  // optimizer; fp32 keeps everything in fp32.
  enum class Precision { kMixed, kFp32 } precision = Precision::kMixed;
  enum class Optimizer { kAdam, kSgdMomentum } optimizer_kind = Optimizer::kAdam;
  // How the capacity solver grows a model: every dimension in proportion (GPT-style: hidden in
  // steps of one 64-wide head, layers in the base model's layers/hidden ratio) or layers only.
  enum class Shape { kWidthDepth, kLayers } capacity_shape = Shape::kWidthDepth;
  int global_batch = 1;          // sequences per iteration over all data-parallel ranks
  int sequence_tokens = 1024;
  int nodes = 1;                 // data-parallel degree = gpu_count * nodes / (tp * pp)
  int zero_stage = 3;
  Tier params = Tier::kGpu;      // where fp16 parameters live between uses
  Tier gradients = Tier::kGpu;
  Tier optimizer = Tier::kGpu;   // fp32 master weights, Adam moments
  bool activation_checkpointing = true;
  // DeepSpeed activation_checkpointing.cpu_checkpointing: checkpointed layer inputs are moved to
  // host memory in the forward pass and copied back one layer at a time in the backward pass
  // (deepspeed/runtime/activation_checkpointing/checkpointing.py, CheckpointFunction). ZeRO-Infinity
  // (SC21) offloads activation checkpoints this way.
  bool cpu_checkpointing = false;
  // Memory-centric tiling (ZeRO-Infinity, SC21; deepspeed/runtime/zero/tiling.py TiledLinear): each
  // Linear is split into this many tiles (in_splits x out_splits) that ZeRO-3 gathers and releases
  // one at a time, so the largest operator's parameters in GPU memory shrink by this factor.
  int linear_tiles = 1;
  // The host gradient buffers of ZeRO-3 with the optimizer on the CPU, which changed between
  // DeepSpeed releases (model/training_memory.hpp host_grad_partition_bytes):
  // kFlatFp16: today's stage3.py: a flat gradient partition at the model dtype (2 B/param) plus
  //   one fp32 sub-group the step converts into.
  // kFp32Partition: DeepSpeed 0.3.15-0.5 (ZeRO-Infinity's releases, the SC21 paper's runs):
  //   stage3.py initialize_optimizer_states gives every sub-group its own fp32 gradient buffer
  //   (subgroup_gradient_buffer, 4 B/param over the partition) that the backward copies into;
  //   a sub-group whose optimizer states are on NVMe swaps its fp32 gradients out instead
  //   (partition_previous_reduced_grads: optimizer_swapper.swap_out_gradients) and holds none.
  enum class Zero3HostGrads {
    kFlatFp16,
    kFp32Partition
  } zero3_host_grads = Zero3HostGrads::kFlatFp16;
  // DeepSpeed's zero_optimization.reduce_bucket_size [elements]: gradients fused before a
  // reduction; the GPU holds buckets of this size (model/training_memory.cpp training_capacity).
  double reduce_bucket_elems = 5e8;
  // zero_optimization.overlap_comm (DeepSpeed's default for stages 1-2: false): stages 1-2
  // allocate a second reduce bucket to reduce one while the backward fills the other.
  bool overlap_comm = false;
  bool optimizer_on_cpu = false;  // CPU Adam instead of GPU Adam
  double cpu_adam_params_per_s = 0;  // 0 = from host catalog estimate
  bool params_auto = false;       // find the largest model of this shape family that fits
  int checkpoint_interval_iters = 0;  // 0 = no periodic checkpoint
  double network_gbps = 25;       // inter-node bandwidth per node and direction (all NICs)
};

struct StorageTarget {
  enum class Kind { kLocalNvme, kNetwork } kind = Kind::kLocalNvme;
  double per_node_gbps = 0;   // network file system: what one node's client can push
  double aggregate_gbps = 0;  // network file system: what the servers can absorb in total
  std::string name;
};

struct CheckpointWorkload {
  enum class Writer { kTorchSave, kFastPersist } writer = Writer::kTorchSave;
  // Precision of the saved model weights (optimizer states are always fp32).
  enum class Dtype { kFp16, kBf16, kFp32 } weights_dtype = Dtype::kFp16;
  double size_bytes = 0;      // 0 = from the model and optimizer states
  int writers_per_node = 1;   // processes writing per node (each one torch.save or FastPersist writer)
  bool include_optimizer = true;
  double io_buffer_bytes = 256.0 * 1024 * 1024;  // FastPersist: each of the two pinned buffers
  // torch.save's file format. The zip format (torch.save's default) runs a CRC-32 over every
  // byte; the legacy format does not. FastPersist always writes the legacy format: its
  // overlapped storage writes hook into the legacy serialiser only.
  enum class Serialization { kZipfile, kLegacy } serialization = Serialization::kZipfile;
  // Bytes of Python source the pickler parses (unit: bytes). Pickling a whole nn.Module object
  // (not a state dict) in the legacy format records the source of every distinct module class;
  // CPython 3.9-3.12 parses the entire defining file once per class. 0 for a state dict.
  double pickled_source_bytes = 0;
  StorageTarget target;
};

// A purchase price with its provenance. usd < 0 means "no price known".
struct PriceQuote {
  double usd = -1;
  std::string date;
  std::string source;
  bool known() const { return usd >= 0; }
};

// Prices of the scenario's components, resolved from scenarios/catalog/prices.yaml or overridden.
struct ComponentPrices {
  PriceQuote gpu;           // per GPU
  PriceQuote platform;      // server without GPUs, DRAM and drives (per node)
  PriceQuote dram_per_gb;   // per 1e9 bytes of DRAM
  PriceQuote drive;         // per NVMe drive
};

// A cloud instance rented by the hour (scenarios/catalog/prices.yaml `cloud`), the "rent" side
// of rent versus buy. It must hold the scenario's GPUs (same catalog model, same count).
struct CloudInstance {
  std::string name;  // "" = no rented alternative named
  std::string gpu;   // catalog GPU name
  int gpus = 0;      // GPUs in one instance
  PriceQuote hourly;  // usd = on-demand USD per instance-hour
};

// Inputs for the power and cost models (issue: energy per token and return per dollar).
struct Economics {
  double usd_per_kwh = 0.12;
  double pue = 1.3;
  double amortization_years = 3;
  double duty_cycle = 1.0;  // fraction of wall time the system serves this workload
  ComponentPrices prices;
  CloudInstance cloud;
};

// A published measurement attached to a reference scenario (scenarios/reference/).
struct Reference {
  std::string case_name;
  std::string source;
  std::string metric;  // name of a result metric, e.g. throughput_tokens_per_s
  double value = 0;
  bool approx = false;
  // A calibration reference was used to set a hardware parameter of its scenario (e.g. a host's
  // storage-path cap from ds_io runs on that host); a prediction reference was not.
  bool calibration = false;
  // Validation group (scenarios/validation/groups.yaml); empty = derived from the scenario by
  // study/validation.hpp reference_group().
  std::string group;
  // A ratio the publication states between two configurations: `value` is this scenario's metric
  // over the same metric of the scenario in this file (a path relative to this scenario's
  // folder). Empty: `value` is the metric itself.
  std::string ratio_to;
};

// The validation group of measured energy and power: it bands every run's energy metrics,
// whatever group the run's other metrics belong to (reports/decision.cpp band_group). The groups
// themselves are data (scenarios/validation/groups.yaml).
inline constexpr const char* kEnergyGroup = "energy";

// Something a reader of the numbers must know about an input that no value shows: a calibrated
// device profile whose calibration warned that it may describe a cache (copied from the profile's
// `warnings:`), or where the price and power of a profiled drive came from (a profile measures
// performance only). config/input_notes.hpp builds them; run, compare and the report print them.
struct InputNote {
  enum class Kind {
    kWarning,  // the numbers may not mean what they seem: read them with this in mind
    kSource,   // where an input came from, when the scenario does not say it
  };
  Kind kind = Kind::kSource;
  std::string subject;  // the scenario key it is about, e.g. "hardware.nvme.profile"
  std::string message;  // one sentence for people
};
// "warning" or "source": the word run, compare and the report print, and the JSON `kind`.
const char* to_string(InputNote::Kind k);

struct Scenario {
  std::string name;
  std::string description;  // free text from the scenario file (optional)
  std::string file;  // the YAML file it came from ("" when built in code)
  Hardware hardware;
  LlmSpec model;
  WorkloadKind kind = WorkloadKind::kInference;
  InferenceWorkload inference;
  ServingWorkload serving;
  TrainingWorkload training;
  CheckpointWorkload checkpoint;
  IoWorkload io;
  Policy policy;
  Economics economics;
  std::vector<Reference> references;
  // Where each resolved input came from: key path -> "catalog: <source>", "override", "profile:
  // <file>" or "default" (model/provenance.hpp). Reports print it next to the numbers.
  Provenance provenance;
  // What a reader must know about the inputs beyond their values (InputNote); empty for most
  // scenarios. Not part of the resolved YAML or the hash: the loader derives them again from the
  // same inputs, so a stored run's resolved scenario reloads with the same notes.
  std::vector<InputNote> notes;
  // The fully resolved scenario as canonical YAML (every catalog value inlined), so that any stored
  // result can be re-run, and its hash.
  std::string resolved_yaml;
  std::string hash;
  // resolved_yaml with the path of every file it names (a config.json, a request trace, a device
  // profile) made absolute, when one of them was relative; "" when resolved_yaml names none that
  // way. What the results database keeps: a relative path there was relative to the folder the
  // run was started from, so `tiersim report` from any other folder could not reload the run.
  std::string portable_yaml;
};

}  // namespace tiersim
