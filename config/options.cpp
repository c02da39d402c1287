#include "config/options.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "config/option_rows.hpp"
#include "config/spec_fields.hpp"
#include "model/errors.hpp"

namespace tiersim::config {

namespace {

// policy.stack's help: every stack by name with its own description (model/stack.cpp), so a new
// stack, or a changed one, is described where it is defined.
std::string stack_help() {
  std::string h = "software that runs the kernels:";
  const auto& names = stack_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    h += (i == 0                  ? " "
          : i + 1 == names.size() ? " or "
                                  : ", ") +
         names[i] + " (" + execution_stack(names[i]).description + ")";
  }
  return h;
}

// One option per field of a catalog spec: `section.<field>`, defaulting to the catalog's value.
template <class T>
void add_spec_fields(std::vector<Option>& out, const std::string& section,
                     const std::vector<SpecField<T>>& fields, T& (*spec)(Scenario&)) {
  for (const auto& f : fields) {
    Option o;
    o.path = section + "." + f.name;
    o.unit = f.unit;
    o.min = f.min;
    o.max = f.max;
    o.min_exclusive = f.min_exclusive;
    o.from_catalog = true;
    o.help = f.help;
    // A number whose struct default is negative is optional: unset, it is left out of resolved
    // scenarios (so adding such a field changes no existing scenario's YAML or hash).
    if (const auto* m = std::get_if<double T::*>(&f.member); m && (T{}.*(*m)) < 0)
      o.omit_when_unset = true;
    std::visit(
        [&](auto m) {
          using M = decltype(m);
          if constexpr (std::is_same_v<M, double T::*>) {
            o.type = ValueType::kNumber;
            o.field = [spec, m](Scenario& s) -> FieldRef { return &(spec(s).*m); };
          } else if constexpr (std::is_same_v<M, int T::*>) {
            o.type = ValueType::kInt;
            if (f.min_exclusive) o.min = f.min + 1, o.min_exclusive = false;
            o.field = [spec, m](Scenario& s) -> FieldRef { return &(spec(s).*m); };
          } else if constexpr (std::is_same_v<M, bool T::*>) {
            o.type = ValueType::kBool;
            o.field = [spec, m](Scenario& s) -> FieldRef { return &(spec(s).*m); };
          } else if constexpr (std::is_same_v<M, std::string T::*>) {
            o.type = ValueType::kText;
            o.field = [spec, m](Scenario& s) -> FieldRef { return &(spec(s).*m); };
            // An empty text (no rates_from, no config.json, no dtype) is unset: a scenario cannot
            // write "", so the resolved one leaves the key out. The accessor only reads here.
            o.emit_when = [spec, m](const Scenario& s) {
              return !(spec(const_cast<Scenario&>(s)).*m).empty();
            };
          } else {
            o.type = ValueType::kChoice;
            o.choices = ffn_kind_names();
            o.field = [spec, m](Scenario& s) -> FieldRef { return enum_ref(&(spec(s).*m)); };
          }
        },
        f.member);
    out.push_back(std::move(o));
  }
}

// Every registered workload's rows, in sim/workloads/registry.def order.
std::vector<WorkloadOptionRows> workload_option_rows() {
  std::vector<WorkloadOptionRows> all;
#define TIERSIM_WORKLOAD(Enumerator, name) name##_option_rows(all.emplace_back());
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD
  return all;
}

std::vector<Option> build_table() {
  using VT = ValueType;
  const std::vector<std::string> tiers = {"gpu", "cpu", "nvme"};
  std::vector<Option> t;
  // Room for every row at once (about 300): each regrowth moved every row, and a start builds
  // the table.
  t.reserve(512);

  t.push_back(required(opt("name", VT::kText, "", "", "scenario name (used in reports)", F(name))));
  t.push_back(optional(opt("description", VT::kText, "", "", "free text", F(description))));

  // Hardware: a catalog name first, then every spec field as an optional override.
  t.push_back(resolving(
      required(opt("hardware.gpu.model", VT::kText, "", "", "GPU catalog name (tiersim catalog gpus)",
                   F(hardware.gpu.name))),
      [](Scenario& s, const Catalog& c) { s.hardware.gpu = c.gpu(s.hardware.gpu.name); }));
  // The simulator holds resources per GPU (1e9 ended in bad_alloc). One NVLink domain is at most
  // 576 GPUs (NVIDIA's NVLink Switch system); 1024 leaves room.
  t.push_back(range(integer("hardware.gpu.count", 1, "1", "GPUs per node", F(hardware.gpu_count)),
                    1, 1024));
  add_spec_fields<GpuSpec>(t, "hardware.gpu", gpu_fields(),
                           [](Scenario& s) -> GpuSpec& { return s.hardware.gpu; });
  // Only a stack with FP8 (FP4) GEMMs reads the FP8 (FP4) rate; an override is written in any
  // case, so that the resolved scenario keeps its provenance. The FP4 rate, added later, is
  // written only where the GPU has one, so that a scenario without FP4 keeps its hash.
  for (auto& o : t) {
    if (o.path == "hardware.gpu.fp8_tflops")
      o.emit_when = [](const Scenario& s) {
        return s.policy.stack.fp8_gemm_efficiency > 0 ||
               s.provenance.source("hardware.gpu.fp8_tflops") == "override";
      };
    if (o.path == "hardware.gpu.fp4_tflops")
      o.emit_when = [](const Scenario& s) {
        return (s.policy.stack.fp4_gemm_efficiency > 0 && s.hardware.gpu.fp4_tflops > 0) ||
               s.provenance.source("hardware.gpu.fp4_tflops") == "override";
      };
  }

  t.push_back(resolving(
      opt("hardware.host.model", VT::kText, "", "generic-2s-ddr5",
          "host catalog name (tiersim catalog hosts)", F(hardware.host.name)),
      [](Scenario& s, const Catalog& c) { s.hardware.host = c.host(s.hardware.host.name); }));
  add_spec_fields<HostSpec>(t, "hardware.host", host_fields(),
                            [](Scenario& s) -> HostSpec& { return s.hardware.host; });
  // Added after most scenarios were written: a host without its own fault-in rate (0, the
  // execution model's) keeps the resolved text, and so the hash, it had before.
  for (auto& o : t)
    if (o.path == "hardware.host.page_fault_gbps")
      o.emit_when = [](const Scenario& s) { return s.hardware.host.page_fault_gbps > 0; };
  // Likewise a host's measured pageable copy rate.
  for (auto& o : t) {
    if (o.path == "hardware.host.pageable_copy_gbps")
      o.emit_when = [](const Scenario& s) { return s.hardware.host.pageable_copy_gbps > 0; };
    if (o.path == "hardware.host.pageable_h2d_gbps")
      o.emit_when = [](const Scenario& s) { return s.hardware.host.pageable_h2d_gbps > 0; };
  }
  // Likewise the PCIe switch topology (added with ZeRO-Inference's data-parallel ranks).
  for (auto& o : t) {
    if (o.path == "hardware.host.gpus_per_pcie_switch")
      o.emit_when = [](const Scenario& s) { return s.hardware.host.gpus_per_pcie_switch > 0; };
    if (o.path == "hardware.host.pcie_switch_uplink_gbps")
      o.emit_when = [](const Scenario& s) { return s.hardware.host.pcie_switch_uplink_gbps > 0; };
  }
  // Likewise the DRAM population (issue 33): a host without it keeps its resolved text.
  for (auto& o : t) {
    if (o.path == "hardware.host.memory_channels")
      o.emit_when = [](const Scenario& s) { return s.hardware.host.memory_channels > 0; };
    if (o.path == "hardware.host.dimms_per_channel")
      o.emit_when = [](const Scenario& s) { return s.hardware.host.dimms_per_channel != 1; };
    if (o.path == "hardware.host.min_dimm_gib")
      o.emit_when = [](const Scenario& s) { return s.hardware.host.min_dimm_gib > 0; };
    if (o.path == "hardware.host.nonbinary_dimms")
      o.emit_when = [](const Scenario& s) { return s.hardware.host.nonbinary_dimms != 0; };
  }
  {
    Option o = flag("hardware.host.size_dram", "true",
                    "while hardware.host.dram_gb is the catalog's, price and power the DRAM the "
                    "configuration needs (+25%, each memory channel the same DIMM, at least the "
                    "platform's floor, at most the catalog's dram_gb; "
                    "metric dram_sized_gb); false: the catalog's dram_gb",
                    F(hardware.host.size_dram));
    // Written only when off, so scenarios that never set it keep their resolved YAML and hash.
    o.emit_when = [](const Scenario& s) { return !s.hardware.host.size_dram; };
    t.push_back(std::move(o));
  }

  t.push_back(resolving(
      optional(opt("hardware.nvme.model", VT::kText, "", "",
                   "drive catalog name (tiersim catalog drives); omit for no NVMe",
                   F(hardware.nvme.drive.name))),
      [](Scenario& s, const Catalog& c) { s.hardware.nvme.drive = c.drive(s.hardware.nvme.drive.name); }));
  t.push_back(optional(opt("hardware.nvme.profile", VT::kPath, "", "",
                           "calibrated device profile (tiersim calibrate); replaces the "
                           "datasheet device model (capacity, power and price: "
                           "hardware.nvme.model, else the profile's catalog_drive)",
                           F(hardware.nvme.profile_path))));
  t.push_back(integer("hardware.nvme.count", 0, "1",
                      "drives in the RAID-0 volume (0 = no NVMe; 0 when neither model nor profile "
                      "is given)",
                      F(hardware.nvme.count)));
  add_spec_fields<NvmeSpec>(t, "hardware.nvme", drive_fields(),
                            [](Scenario& s) -> NvmeSpec& { return s.hardware.nvme.drive; });

  // A catalog name, or (model.hf_config) a Hugging Face config.json; one of the two is needed.
  t.push_back(resolving(
      opt("model.name", VT::kText, "", "",
          "model catalog name (tiersim catalog models); with model.hf_config, the model's name",
          F(model.name)),
      [](Scenario& s, const Catalog& c) { s.model = c.model(s.model.name); }));
  add_spec_fields<LlmSpec>(t, "model", llm_fields(),
                           [](Scenario& s) -> LlmSpec& { return s.model; });
  // A config.json the scenario names is written out; a catalog entry's is the catalog's business
  // (its fields are inlined either way, so the file's content is in the resolved scenario).
  for (auto& o : t) {
    if (o.path == "model.hf_config")
      o.emit_when = [](const Scenario& s) {
        return !s.model.hf_config.empty() && s.provenance.source("model.hf_config") == "override";
      };
    // A model without shared experts resolves (and hashes) as it did before the key existed.
    if (o.path == "model.shared_ffn")
      o.emit_when = [](const Scenario& s) { return s.model.shared_ffn > 0; };
    // Likewise a model whose every layer has its experts (or none: a dense model).
    if (o.path == "model.dense_first_layers")
      o.emit_when = [](const Scenario& s) { return s.model.dense_first_layers > 0; };
    if (o.path == "model.moe_layer_step")
      o.emit_when = [](const Scenario& s) { return s.model.moe_layer_step != 1; };
    if (o.path == "model.dense_ffn")
      o.emit_when = [](const Scenario& s) { return s.model.dense_ffn > 0; };
    // And a model without latent attention or narrower value heads.
    if (o.path == "model.kv_lora_rank")
      o.emit_when = [](const Scenario& s) { return s.model.kv_lora_rank > 0; };
    if (o.path == "model.qk_rope_dim")
      o.emit_when = [](const Scenario& s) { return s.model.qk_rope_dim > 0; };
    if (o.path == "model.q_lora_rank")
      o.emit_when = [](const Scenario& s) { return s.model.q_lora_rank > 0; };
    if (o.path == "model.v_head_dim")
      o.emit_when = [](const Scenario& s) { return s.model.v_head_size > 0; };
    // And one whose layers all slide, or that has no window (where the catalog's split means
    // nothing: a model whose window is set to 0 resolves as one that never had one).
    if (o.path == "model.full_attention_layers")
      o.emit_when = [](const Scenario& s) {
        return s.model.full_attention_layers > 0 && s.model.sliding_window > 0;
      };
    if (o.path == "model.chunked_attention")
      o.emit_when = [](const Scenario& s) {
        return s.model.chunked_attention && s.model.sliding_window > 0;
      };
  }

  // Workload. kind is read first by the loader; the other keys apply to some kinds only.
  t.push_back(required(choice("workload.kind", workload_kind_names(), "", "what to simulate",
                              E(kind))));
  // Each workload's own keys, from sim/workloads/<name>/options.cpp in registry.def order.
  std::vector<WorkloadOptionRows> contributed = workload_option_rows();
  for (auto& w : contributed)
    t.insert(t.end(), std::make_move_iterator(w.workload.begin()),
             std::make_move_iterator(w.workload.end()));

  // Policy.
  t.push_back(choices(opt("policy.weights", VT::kPlacement, "", "gpu",
                          "where weights live: gpu | cpu | nvme or fractions {gpu, cpu, nvme} "
                          "summing to 1",
                          F(policy.weights)),
                      tiers));
  t.push_back(choices(opt("policy.kv_cache", VT::kPlacement, "", "gpu",
                          "where the KV cache lives: gpu | cpu or fractions {gpu, cpu}",
                          F(policy.kv_cache)),
                      {"gpu", "cpu"}));
  t.push_back(choices(integer("policy.weight_bits", 4, "16",
                              "weight precision (4, 8: quantised; stored and run as policy.stack "
                              "does: FP8 GEMMs at 8 bits and NVFP4 GEMMs at 4 where the stack and "
                              "the GPU have them, else weight-only at the fp16 rate)",
                              F(policy.weight_bits)),
                      {"16", "8", "4"}));
  t.push_back(choices(integer("policy.kv_bits", 4, "16",
                              "KV cache precision (8: an FP8 or INT8 KV cache)", F(policy.kv_bits)),
                      {"16", "8", "4"}));
  t.push_back(integer("policy.quant_group_size", 1, "64", "elements per quantisation group",
                      F(policy.quant_group_size)));
  t.push_back(choice("policy.io_path", {"aio", "gds"}, "aio",
                     "NVMe reads via a pinned host bounce buffer (aio) or GPUDirect Storage (gds)",
                     E(policy.io_path)));
  t.push_back(flag("policy.pin_memory", "true",
                   "weights offloaded to host DRAM sit in pinned memory (DMA copies); false: "
                   "pageable memory, copied by the CPU through the driver's staging buffers",
                   F(policy.pin_memory)));
  {
    Option o = integer("policy.prefetch_layers", 0, "1", "layers fetched ahead of the one computing",
                       F(policy.prefetch_layers));
    // ZeRO-Inference's data-parallel ranks take their prefetch depth from policy.zero3.* and
    // refuse this key, so their resolved scenarios leave it out (and load again).
    o.emit_when = [](const Scenario& s) { return s.policy.parallelism.data == 1; };
    t.push_back(std::move(o));
  }
  t.push_back(range(opt("policy.aio.block_size", VT::kSize, "bytes", "16MiB",
                        "bytes per NVMe request", F(policy.aio.block_size_bytes)),
                    0, kInf, true));
  t.push_back(integer("policy.aio.queue_depth", 1, "64", "requests outstanding per thread",
                      F(policy.aio.queue_depth)));
  t.push_back(integer("policy.aio.threads", 1, "8", "I/O threads", F(policy.aio.threads)));
  // DeepSpeed's default is 5 (offload_param.buffer_count); each is a pinned buffer of the largest
  // streamed tensor, so thousands already exceed any host's memory (1e9 ended in bad_alloc).
  t.push_back(range(integer("policy.aio.swap_buffers", 1, "5",
                            "swap buffers (offload_param.buffer_count): NVMe reads in flight at once",
                            F(policy.aio.swap_buffers)),
                    1, 4096));
  t.push_back(integer("policy.parallelism.tensor", 1, "1", "tensor-parallel degree",
                      F(policy.parallelism.tensor)));
  t.push_back(integer("policy.parallelism.pipeline", 1, "1", "pipeline stages",
                      F(policy.parallelism.pipeline)));
  t.push_back(integer("policy.parallelism.micro_batches", 1, "1", "pipeline micro-batches",
                      F(policy.parallelism.micro_batches)));
  {
    // The execution stack by name (model/stack.hpp); resolved YAML names it only when it is not
    // the default, so scenarios written before the key existed keep their hash.
    Option o = choice(
        "policy.stack", stack_names(), kDefaultStackName, stack_help(),
        [](Scenario& s) -> FieldRef {
          ExecutionStack* st = &s.policy.stack;
          return EnumRef{
              [st](int i) { *st = execution_stack(stack_names()[static_cast<std::size_t>(i)]); },
              [st] {
                const auto& names = stack_names();
                return static_cast<int>(std::find(names.begin(), names.end(), st->name) -
                                        names.begin());
              }};
        });
    o.emit_when = [](const Scenario& s) { return s.policy.stack.name != kDefaultStackName; };
    t.push_back(std::move(o));
  }
  t.push_back(choice("policy.schedule", {"zero-inference", "flexgen-block", "flexgen"},
                     "zero-inference",
                     "weight fetch schedule; flexgen = FlexGen's own runtime with the "
                     "policy.flexgen keys (its --percent placement, GPU batches, CPU attention, "
                     "overlap, pinning, compression)",
                     E(policy.schedule)));
  {
    Option o = choice("policy.moe_fetch", {"all", "routed"}, "all",
                      "MoE models: experts fetched per pass; all (DeepSpeed-MoE, ZeRO-3 leaf MoE "
                      "block) or routed (only experts with routed tokens, as HF transformers' "
                      "Mixtral block with per-expert offload hooks; expected count under uniform "
                      "top-k routing)",
                      E(policy.moe_fetch));
    // Added later: scenarios that keep the default keep their resolved text and hash.
    o.emit_when = [](const Scenario& s) { return s.policy.moe_fetch != MoeFetch::kAll; };
    t.push_back(std::move(o));
  }
  t.push_back(integer("policy.gpu_batches", 1, "1",
                      "flexgen-block: GPU batches served by each fetched layer",
                      F(policy.gpu_batches)));
  for (auto& w : contributed)
    t.insert(t.end(), std::make_move_iterator(w.policy.begin()),
             std::make_move_iterator(w.policy.end()));

  // Economics.
  t.push_back(number("economics.usd_per_kwh", "USD/kWh", 0, kInf, false, "0.12",
                     "electricity price", F(economics.usd_per_kwh)));
  t.push_back(number("economics.pue", "", 1, kInf, false, "1.3", "data-centre power usage effectiveness",
                     F(economics.pue)));
  t.push_back(number("economics.amortization_years", "years", 0, kInf, true, "3",
                     "hardware amortisation period", F(economics.amortization_years)));
  t.push_back(number("economics.duty_cycle", "", 0, 1, true, "1",
                     "fraction of wall time serving this workload", F(economics.duty_cycle)));
  t.push_back(optional(number("economics.prices.gpu_usd", "USD", 0, kInf, false, "",
                              "price per GPU (default: prices.yaml)",
                              F(economics.prices.gpu.usd))));
  t.push_back(optional(number("economics.prices.platform_usd", "USD", 0, kInf, false, "",
                              "server price without GPUs, DRAM, drives (default: prices.yaml)",
                              F(economics.prices.platform.usd))));
  t.push_back(optional(number("economics.prices.dram_usd_per_gb", "USD/GB", 0, kInf, false, "",
                              "DRAM price per GB (default: prices.yaml)",
                              F(economics.prices.dram_per_gb.usd))));
  t.push_back(optional(number("economics.prices.drive_usd", "USD", 0, kInf, false, "",
                              "price per NVMe drive (default: prices.yaml)",
                              F(economics.prices.drive.usd))));

  // Rent versus buy: the instance must hold the same GPUs, or its price compares unlike things.
  t.push_back(resolving(
      optional(opt("economics.cloud_instance", VT::kText, "", "",
                   "cloud instance to compare renting with (prices.yaml cloud; same GPU model "
                   "and count as hardware.gpu): adds rent_usd_per_hour, "
                   "rent_usd_per_million_tokens and buy_breakeven_duty_cycle",
                   F(economics.cloud.name))),
      [](Scenario& s, const Catalog& c) {
        const std::string asked = s.economics.cloud.name;
        s.economics.cloud = c.cloud_instance(asked);
        const CloudInstance& ci = s.economics.cloud;
        if (to_lower(ci.gpu) != to_lower(s.hardware.gpu.name) || ci.gpus != s.hardware.gpu_count)
          throw CatalogError("cloud instance '" + ci.name + "' has " + std::to_string(ci.gpus) +
                             " x " + ci.gpu + "; the scenario has " +
                             std::to_string(s.hardware.gpu_count) + " x " +
                             s.hardware.gpu.name + " (pick an instance with the same GPUs)");
      }));

  t.push_back(optional(opt("reference", VT::kReferences, "", "",
                           "published measurements: list of {case, source, metric, value, approx, "
                           "role: prediction | calibration, group}",
                           F(references))));
  return t;
}

#undef F
#undef E

std::string lower_choice(const std::string& s) { return to_lower(s); }

int choice_index(const YNode& node, const Option& o) {
  const std::string text = node.scalar("one of " + join(o.choices, ", "));
  for (std::size_t i = 0; i < o.choices.size(); ++i)
    if (lower_choice(o.choices[i]) == lower_choice(text)) return static_cast<int>(i);
  node.fail("expected one of " + join(o.choices, ", ") + ", got " + node.describe() +
            did_you_mean(text, o.choices));
}

Placement read_placement(const YNode& node, const Option& o) {
  Placement p;
  if (node.is_scalar()) {
    const int i = choice_index(node, o);
    return Placement::all_on(static_cast<Tier>(i));
  }
  if (!node.is_map())
    node.fail("expected one of " + join(o.choices, ", ") + " or a map of fractions, got " +
              node.describe());
  node.check_keys(o.choices);
  double sum = 0;
  for (auto& [key, value] : node.entries()) {
    const double v = value.as_double(0, 1);
    sum += v;
    (key == "gpu" ? p.gpu : key == "cpu" ? p.cpu : p.nvme) = v;
  }
  if (std::fabs(sum - 1.0) > 1e-6)
    node.fail("fractions must sum to 1, got " + format_number(sum));
  return p;
}

std::vector<Reference> read_references(const YNode& node) {
  std::vector<Reference> out;
  for (const YNode& item : node.items()) {
    item.check_keys({"case", "source", "metric", "value", "approx", "role", "group", "ratio_to"});
    Reference r;
    r.case_name = item.require("case", "the reference case name").as_string();
    r.source = item.require("source", "the publication").as_string();
    r.metric = item.require("metric", "a result metric name").as_string();
    r.value = item.require("value", "the published value").as_double(-kInf, kInf);
    if (auto a = item.get("approx")) r.approx = a->as_bool();
    if (auto role = item.get("role")) {
      const std::string v = role->as_string();
      if (v != "prediction" && v != "calibration")
        role->fail("expected 'prediction' or 'calibration', got '" + v + "'");
      r.calibration = v == "calibration";
    }
    // The group's name is checked against scenarios/validation/groups.yaml by
    // study/validation.cpp, which reads that file; a scenario alone does not know it.
    if (auto g = item.get("group")) r.group = g->as_string();
    if (auto ratio = item.get("ratio_to")) r.ratio_to = ratio->as_string();
    out.push_back(std::move(r));
  }
  return out;
}

YAML::Node scalar_node(const std::string& text) { return YAML::Node(text); }

}  // namespace

unsigned kind_bit(WorkloadKind k) { return 1u << static_cast<unsigned>(k); }

const std::vector<std::string>& workload_kind_names() {
  // Same order as WorkloadKind: both come from sim/workloads/registry.def.
  static const std::vector<std::string> kNames = {
#define TIERSIM_WORKLOAD(Enumerator, name) #name,
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD
  };
  return kNames;
}

const std::vector<Option>& scenario_options() {
  // Never destroyed: freeing some 300 rows (strings, functions) and the index below was a tenth
  // of a short command's instructions, spent at exit on memory the system reclaims anyway.
  static const std::vector<Option>& kTable = *new std::vector<Option>(build_table());
  return kTable;
}

namespace {

// The table's paths and sections, indexed once (the table itself never changes after it is built).
// Keys view the rows' own path strings, which live as long as the table: no copy of each path.
struct TableIndex {
  std::unordered_map<std::string_view, std::vector<const Option*>> by_path;
  // Section prefix ("" = top level) -> the keys directly below it, in table order.
  std::unordered_map<std::string_view, std::vector<std::string>> below;
};

TableIndex build_index() {
  TableIndex idx;
  const std::vector<Option>& table = scenario_options();
  idx.by_path.reserve(table.size());
  for (const auto& o : table) {
    idx.by_path[std::string_view(o.path)].push_back(&o);
    // Every prefix of the path is a section holding the next segment as a key.
    const std::string_view path(o.path);
    std::vector<std::string>* keys = &idx.below[""];
    std::size_t start = 0;
    while (true) {
      const auto dot = path.find('.', start);
      const std::string_view key =
          path.substr(start, dot == std::string_view::npos ? dot : dot - start);
      if (std::find(keys->begin(), keys->end(), key) == keys->end()) keys->emplace_back(key);
      if (dot == std::string_view::npos) break;
      keys = &idx.below[path.substr(0, dot)];
      start = dot + 1;
    }
  }
  return idx;
}

const TableIndex& table_index() {
  // Never destroyed, as the table.
  static const TableIndex& kIndex = *new TableIndex(build_index());
  return kIndex;
}

}  // namespace

const std::vector<const Option*>& find_options(const std::string& path) {
  static const std::vector<const Option*> kNone;
  const auto& idx = table_index().by_path;
  const auto it = idx.find(std::string_view(path));
  return it == idx.end() ? kNone : it->second;
}

const Option* find_option(const std::string& path, WorkloadKind kind) {
  for (const Option* o : find_options(path))
    if (o->kinds & kind_bit(kind)) return o;
  return nullptr;
}

bool is_section(const std::string& path) {
  return !path.empty() && table_index().below.count(std::string_view(path)) > 0;
}

const std::vector<std::string>& keys_below(const std::string& prefix) {
  static const std::vector<std::string> kNone;
  const auto& idx = table_index().below;
  const auto it = idx.find(std::string_view(prefix));
  return it == idx.end() ? kNone : it->second;
}

std::vector<std::string> keys_below(const std::string& prefix, std::optional<WorkloadKind> kind) {
  if (!kind) return keys_below(prefix);
  const unsigned bit = kind_bit(*kind);
  std::vector<std::string> out;
  for (const std::string& key : keys_below(prefix)) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    bool applies = false;
    for (const Option* o : find_options(path)) applies = applies || (o->kinds & bit);
    if (!applies && is_section(path)) {
      const std::string below = path + ".";
      for (const Option& o : scenario_options())
        applies = applies || ((o.kinds & bit) && o.path.compare(0, below.size(), below) == 0);
    }
    if (applies) out.push_back(key);
  }
  return out;
}

std::optional<WorkloadKind> workload_kind_named(const std::string& name) {
  const auto& names = workload_kind_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<WorkloadKind>(i);
  return std::nullopt;
}

namespace {

// Quantities in a scenario (GB, W, USD, years, bytes) lie many orders of magnitude inside these
// bounds; outside them, products and quotients in the model overflow to inf or lose all precision
// (1e308 GB is inf bytes, 1e-320 years divides capex into inf USD per hour).
constexpr double kMaxMagnitude = 1e30;
constexpr double kMinMagnitude = 1e-30;

double check_magnitude(const YNode& node, double v) {
  const double a = std::fabs(v);
  if (a != 0 && (a > kMaxMagnitude || a < kMinMagnitude))
    node.fail("got " + node.describe() + ": values must be 0 or between " +
              format_number(kMinMagnitude) + " and " + format_number(kMaxMagnitude) +
              " in magnitude (out of range)");
  return v;
}

}  // namespace

OptionValue parse_option_value(const YNode& node, const Option& o) {
  switch (o.type) {
    case ValueType::kInt: {
      long long v = 0;
      if (!o.choices.empty()) {
        const std::string text = node.scalar("one of " + join(o.choices));
        if (std::find(o.choices.begin(), o.choices.end(), text) == o.choices.end())
          node.fail("expected one of " + join(o.choices) + ", got " + node.describe());
        v = std::stoll(text);
      } else {
        v = node.as_int(static_cast<long long>(o.min),
                        o.max >= 2e9 ? 2000000000LL : static_cast<long long>(o.max));
      }
      return static_cast<int>(v);
    }
    case ValueType::kNumber:
      return check_magnitude(node, node.as_double(o.min, o.max, o.min_exclusive));
    case ValueType::kSize:
      if (o.accepts_auto && node.is_scalar() && node.scalar("a size or auto") == "auto")
        return kAutoSize;
      return check_magnitude(node, node.as_size_bytes(!o.min_exclusive));
    case ValueType::kDuration:
      return node.as_duration_s(o.min, o.max, o.min_exclusive);
    case ValueType::kBool:
      return node.as_bool();
    case ValueType::kText:
    case ValueType::kPath:
      return node.as_string();
    case ValueType::kChoice:
      return choice_index(node, o);
    case ValueType::kPlacement:
      return read_placement(node, o);
    case ValueType::kReferences:
      return read_references(node);
  }
  return OptionValue();
}

void set_option(const Option& o, const OptionValue& value, Scenario& s) {
  FieldRef ref = o.field(s);
  switch (o.type) {
    case ValueType::kInt:
      *std::get<int*>(ref) = std::get<int>(value);
      return;
    case ValueType::kNumber:
    case ValueType::kSize:
    case ValueType::kDuration:
      *std::get<double*>(ref) = std::get<double>(value);
      return;
    case ValueType::kBool:
      *std::get<bool*>(ref) = std::get<bool>(value);
      return;
    case ValueType::kText:
    case ValueType::kPath:
      *std::get<std::string*>(ref) = std::get<std::string>(value);
      return;
    case ValueType::kChoice:
      std::get<EnumRef>(ref).set(std::get<int>(value));
      return;
    case ValueType::kPlacement:
      *std::get<Placement*>(ref) = std::get<Placement>(value);
      return;
    case ValueType::kReferences:
      *std::get<std::vector<Reference>*>(ref) = std::get<std::vector<Reference>>(value);
      return;
  }
}

void read_option(const YNode& node, const Option& o, Scenario& s) {
  set_option(o, parse_option_value(node, o), s);
}

bool option_unset(const Option& o, Scenario& s) {
  if (!o.omit_when_unset) return false;
  FieldRef ref = o.field(s);
  if (auto p = std::get_if<std::string*>(&ref)) return (*p)->empty();
  if (auto p = std::get_if<double*>(&ref)) return **p < 0;
  if (auto p = std::get_if<int*>(&ref)) return **p < 0;
  if (auto p = std::get_if<std::vector<Reference>*>(&ref)) return (*p)->empty();
  return false;
}

bool option_scalar(const Option& o, Scenario& s, std::string& text) {
  FieldRef ref = o.field(s);
  switch (o.type) {
    case ValueType::kInt:
      text = std::to_string(*std::get<int*>(ref));
      return true;
    case ValueType::kNumber:
    case ValueType::kSize:
      if (o.accepts_auto && *std::get<double*>(ref) < 0) {
        text = "auto";
        return true;
      }
      text = format_number(*std::get<double*>(ref));
      return true;
    case ValueType::kDuration:
      text = format_number(*std::get<double*>(ref)) + "s";
      return true;
    case ValueType::kBool:
      text = *std::get<bool*>(ref) ? "true" : "false";
      return true;
    case ValueType::kText:
    case ValueType::kPath:
      text = *std::get<std::string*>(ref);
      return true;
    case ValueType::kChoice:
      text = o.choices.at(static_cast<std::size_t>(std::get<EnumRef>(ref).get()));
      return true;
    case ValueType::kPlacement: {
      const Placement& p = *std::get<Placement*>(ref);
      for (std::size_t i = 0; i < o.choices.size(); ++i)
        if (p.on(static_cast<Tier>(i)) == 1.0) {
          text = o.choices[i];
          return true;
        }
      return false;
    }
    case ValueType::kReferences:
      return false;
  }
  return false;
}

YAML::Node option_yaml(const Option& o, Scenario& s) {
  std::string text;
  if (option_scalar(o, s, text)) return scalar_node(text);
  FieldRef ref = o.field(s);
  switch (o.type) {
    case ValueType::kPlacement: {
      const Placement& p = *std::get<Placement*>(ref);
      YAML::Node m(YAML::NodeType::Map);
      m.SetStyle(YAML::EmitterStyle::Flow);
      for (std::size_t i = 0; i < o.choices.size(); ++i)
        m[o.choices[i]] = format_number(p.on(static_cast<Tier>(i)));
      return m;
    }
    case ValueType::kReferences: {
      YAML::Node list(YAML::NodeType::Sequence);
      for (const Reference& r : *std::get<std::vector<Reference>*>(ref)) {
        YAML::Node m(YAML::NodeType::Map);
        m.SetStyle(YAML::EmitterStyle::Flow);
        m["case"] = r.case_name;
        m["source"] = r.source;
        m["metric"] = r.metric;
        m["value"] = format_number(r.value);
        m["approx"] = r.approx ? "true" : "false";
        m["role"] = r.calibration ? "calibration" : "prediction";
        if (!r.group.empty()) m["group"] = r.group;
        list.push_back(m);
      }
      return list;
    }
    default:
      break;
  }
  return YAML::Node();
}

std::string type_text(const Option& o) {
  switch (o.type) {
    case ValueType::kInt: return "integer";
    case ValueType::kNumber: return "number";
    case ValueType::kSize: return "size";
    case ValueType::kDuration:
      return "duration";
    case ValueType::kBool: return "bool";
    case ValueType::kText: return "text";
    case ValueType::kChoice: return "choice";
    case ValueType::kPlacement: return "placement";
    case ValueType::kPath: return "path";
    case ValueType::kReferences: return "list";
  }
  return "";
}

std::string range_text(const Option& o) {
  if (!o.choices.empty()) return join(o.choices, " | ");
  if (o.type != ValueType::kInt && o.type != ValueType::kNumber && o.type != ValueType::kSize &&
      o.type != ValueType::kDuration)
    return "";
  const bool has_min = o.min > -kNoLimit;
  const bool has_max = o.max < kNoLimit;
  if (has_min && has_max) return (o.min_exclusive ? "(" : "[") + format_number(o.min) + ", " +
                                 format_number(o.max) + "]";
  if (has_min)
    return (o.min_exclusive ? "> " : ">= ") + format_number(o.min) + (o.accepts_auto ? " or auto" : "");
  if (has_max) return "<= " + format_number(o.max);
  return "";
}

std::string default_text(const Option& o) {
  if (o.required) return "required";
  if (o.from_catalog) return "catalog";
  if (!o.default_text.empty()) return o.default_text;
  return "-";
}

std::string kinds_text(unsigned kinds) {
  if (kinds == kAllKinds) return "";
  std::vector<std::string> names;
  for (std::size_t i = 0; i < workload_kind_names().size(); ++i)
    if (kinds & (1u << i)) names.push_back(workload_kind_names()[i]);
  return join(names, ", ");
}

namespace {
std::string help_with_kinds(const Option& o) {
  const std::string k = kinds_text(o.kinds);
  return k.empty() ? o.help : o.help + " (kind: " + k + ")";
}
}  // namespace

std::string schema_text() {
  const auto& table = scenario_options();
  std::size_t w_key = 3, w_type = 4, w_unit = 4, w_range = 5, w_def = 7;
  for (const auto& o : table) {
    w_key = std::max(w_key, o.path.size());
    w_type = std::max(w_type, type_text(o).size());
    w_unit = std::max(w_unit, o.unit.size());
    w_range = std::max(w_range, std::min<std::size_t>(range_text(o).size(), 40));
    w_def = std::max(w_def, default_text(o).size());
  }
  auto pad = [](const std::string& s, std::size_t w) {
    return s + std::string(s.size() < w ? w - s.size() : 0, ' ') + "  ";
  };
  std::ostringstream os;
  os << pad("key", w_key) << pad("type", w_type) << pad("unit", w_unit) << pad("range", w_range)
     << pad("default", w_def) << "help\n";
  for (const auto& o : table) {
    os << pad(o.path, w_key) << pad(type_text(o), w_type) << pad(o.unit, w_unit)
       << pad(range_text(o), w_range) << pad(default_text(o), w_def) << help_with_kinds(o)
       << "\n";
  }
  return os.str();
}

std::string schema_markdown() {
  auto cell = [](std::string s) {
    std::string out;
    for (char c : s) out += (c == '|') ? std::string("\\|") : std::string(1, c);
    return out.empty() ? std::string(" ") : out;
  };
  std::ostringstream os;
  os << "| key | type | unit | range | default | help |\n";
  os << "|---|---|---|---|---|---|\n";
  for (const auto& o : scenario_options()) {
    os << "| `" << o.path << "` | " << cell(type_text(o)) << " | " << cell(o.unit) << " | "
       << cell(range_text(o)) << " | " << cell(default_text(o)) << " | "
       << cell(help_with_kinds(o)) << " |\n";
  }
  return os.str();
}

}  // namespace tiersim::config
