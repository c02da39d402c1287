#include "config/scenario_loader.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "config/device_profile.hpp"
#include "config/options.hpp"
#include "config/yaml_reader.hpp"
#include "model/errors.hpp"
#include "model/ssd_model.hpp"

namespace tiersim::config {

namespace {

// One key given by the scenario file or a --set, before it is applied.
struct Given {
  YNode node;
  std::string base_dir;  // relative paths in the value resolve against this
  bool from_set = false;
};

class Loader {
 public:
  Loader(YNode root, std::string display_name, std::string base_dir, const LoadOptions& opts)
      : root_(std::move(root)), name_(std::move(display_name)), base_dir_(std::move(base_dir)),
        opts_(opts) {}

  Scenario run();

 private:
  void flatten(const YNode& map, const std::string& prefix);
  void add_override(const std::string& assignment);
  [[noreturn]] void fail_at(const std::string& path, const std::string& message) const;
  [[noreturn]] void fail_missing(const Option& o) const;
  void apply_options(const Catalog& catalog);
  void apply_one(const Option& o, const Given* given, const Catalog& catalog);
  void resolve_nvme();
  void resolve_prices(const Catalog& catalog);
  void check_cross_fields() const;
  void check_serving() const;
  std::string emit_resolved();
  bool given(const std::string& path) const { return given_.count(path) > 0; }

  YNode root_;
  std::string name_;
  std::string base_dir_;
  const LoadOptions& opts_;
  std::map<std::string, Given> given_;
  std::map<std::string, YNode> sections_;  // section maps present in the file, for line numbers
  Scenario s_;
};

std::string join_path(const std::string& base, const std::string& rel) {
  namespace fs = std::filesystem;
  if (base.empty() || fs::path(rel).is_absolute()) return rel;
  return (fs::path(base) / rel).lexically_normal().string();
}

void Loader::flatten(const YNode& map, const std::string& prefix) {
  map.check_keys(keys_below(prefix));
  for (auto& [key, child] : map.entries()) {
    const std::string path = child.path();
    if (!find_options(path).empty()) {
      given_[path] = Given{child, base_dir_, false};
    } else if (child.is_null()) {
      sections_[path] = child;  // "policy:" with nothing below: an empty section
    } else if (child.is_map()) {
      sections_[path] = child;
      flatten(child, path);
    } else {
      child.fail("expected a map with keys " + join(keys_below(path)) + ", got " +
                 child.describe());
    }
  }
}

void Loader::add_override(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set", 0, assignment, "expected key.path=value");
  const std::string key = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  if (find_options(key).empty()) {
    if (is_section(key))
      throw ConfigError("--set", 0, key,
                        "is a section; set one of its keys: " + join(keys_below(key)));
    std::vector<std::string> all;
    for (const auto& o : scenario_options()) all.push_back(o.path);
    // Show the valid keys of the deepest section that exists, as for an unknown key in a file.
    std::string prefix = key.substr(0, key.rfind('.') == std::string::npos ? 0 : key.rfind('.'));
    while (!prefix.empty() && !is_section(prefix))
      prefix = prefix.substr(0, prefix.rfind('.') == std::string::npos ? 0 : prefix.rfind('.'));
    throw ConfigError("--set", 0, key,
                      "unknown key" + did_you_mean(key, all) + "; valid keys" +
                          (prefix.empty() ? std::string() : " in '" + prefix + "'") + ": " +
                          join(keys_below(prefix)));
  }
  const YNode parsed = parse_yaml_text(value, "--set", false);
  given_[key] = Given{YNode(parsed.raw(), std::make_shared<const std::string>("--set"), key, false),
                      "", true};
}

void Loader::fail_at(const std::string& path, const std::string& message) const {
  if (auto it = given_.find(path); it != given_.end()) it->second.node.fail(message);
  throw ConfigError(name_, 0, path, message);
}

void Loader::fail_missing(const Option& o) const {
  // Point at the deepest section the file does have, so the line number is useful.
  std::string prefix = o.path;
  while (true) {
    const auto dot = prefix.rfind('.');
    prefix = dot == std::string::npos ? "" : prefix.substr(0, dot);
    if (prefix.empty()) break;
    if (auto it = sections_.find(prefix); it != sections_.end() && !it->second.is_null())
      it->second.fail_missing(o.path.substr(prefix.size() + 1), type_text(o) + ": " + o.help);
  }
  if (root_.is_map()) root_.fail_missing(o.path, type_text(o) + ": " + o.help);
  throw ConfigError(name_, 0, o.path, "missing required key (expected " + o.help + ")");
}

// The spec a catalog field option belongs to, for its catalog sources.
SourceMap* sources_for(Scenario& s, const std::string& path) {
  if (path.rfind("hardware.gpu.", 0) == 0) return &s.hardware.gpu.sources;
  if (path.rfind("hardware.host.", 0) == 0) return &s.hardware.host.sources;
  if (path.rfind("hardware.nvme.", 0) == 0) return &s.hardware.nvme.drive.sources;
  if (path.rfind("model.", 0) == 0) return &s.model.sources;
  return nullptr;
}

std::string field_name(const std::string& path) { return path.substr(path.rfind('.') + 1); }

void Loader::apply_one(const Option& o, const Given* g, const Catalog& catalog) {
  if (o.from_catalog) {
    SourceMap* sources = sources_for(s_, o.path);
    const std::string field = field_name(o.path);
    const auto src = sources->find(field);
    const std::string catalog_prov =
        src != sources->end() ? "catalog: " + src->second : std::string("default");
    if (g) {
      const std::string before = YAML::Dump(option_yaml(o, s_));
      read_option(g->node, o, s_);
      // A value equal to the catalog's keeps the catalog's provenance: that is what makes the
      // resolved YAML (every value inlined) load back into an identical Scenario.
      if (YAML::Dump(option_yaml(o, s_)) != before) {
        s_.provenance[o.path] = "override";
        (*sources)[field] = "override";
        return;
      }
    }
    s_.provenance[o.path] = catalog_prov;
    return;
  }
  if (g) {
    read_option(g->node, o, s_);
    if (o.type == ValueType::kPath) {
      std::string& p = *std::get<std::string*>(o.field(s_));
      p = join_path(g->base_dir, p);
    }
  } else if (o.required) {
    fail_missing(o);
  } else if (!o.default_text.empty()) {
    read_option(parse_yaml_text(o.default_text, "default of " + o.path, false), o, s_);
  } else {
    return;  // optional, unset
  }
  if (o.resolve) {
    try {
      o.resolve(s_, catalog);
    } catch (const CatalogError& e) {
      if (g) throw CatalogError(ConfigError(g->node.file(), g->node.line(), o.path, e.what()).what());
      throw CatalogError(ConfigError(name_, 0, o.path, std::string(e.what()) + " (default)").what());
    }
  }
}

void Loader::apply_options(const Catalog& catalog) {
  for (const Option& o : scenario_options()) {
    if (!(o.kinds & kind_bit(s_.kind)) || o.path == "workload.kind") continue;
    auto it = given_.find(o.path);
    apply_one(o, it == given_.end() ? nullptr : &it->second, catalog);
  }
}

void Loader::resolve_nvme() {
  NvmeArray& nvme = s_.hardware.nvme;
  const bool has_drive = !nvme.drive.name.empty() || !nvme.profile_path.empty();
  if (!has_drive) {
    if (given("hardware.nvme.count") && nvme.count > 0)
      fail_at("hardware.nvme.count", "NVMe drives need hardware.nvme.model or hardware.nvme.profile");
    for (const auto& [path, g] : given_)
      if (path.rfind("hardware.nvme.", 0) == 0 && path != "hardware.nvme.count")
        g.node.fail("overrides a drive field, but no drive is given (set hardware.nvme.model or "
                    "hardware.nvme.profile)");
    nvme = NvmeArray{};
    for (auto it = s_.provenance.begin(); it != s_.provenance.end();)
      it = it->first.rfind("hardware.nvme.", 0) == 0 ? s_.provenance.erase(it) : std::next(it);
    return;
  }
  if (!nvme.profile_path.empty()) {
    nvme.model = load_device_profile(nvme.profile_path);
    nvme.drive.has_profile = true;
    nvme.drive.profile = nvme.model;
    s_.provenance["hardware.nvme.profile"] = "profile: " + nvme.profile_path;
  } else {
    nvme.model = ssd_model_from_datasheet(nvme.drive);
  }
}

void Loader::resolve_prices(const Catalog& catalog) {
  auto resolve = [&](PriceQuote& q, const std::string& key, const PriceQuote& from_catalog) {
    if (!given(key) || q.usd == from_catalog.usd) {
      q = from_catalog;  // same value as prices.yaml: keep its date and source
      return;
    }
    q.date.clear();
    q.source = "override";  // same word wherever it was given, so resolved YAML round-trips
  };
  ComponentPrices& p = s_.economics.prices;
  resolve(p.gpu, "economics.prices.gpu_usd", catalog.gpu_price(s_.hardware.gpu.name));
  resolve(p.platform, "economics.prices.platform_usd",
          catalog.platform_price(s_.hardware.host.name));
  resolve(p.dram_per_gb, "economics.prices.dram_usd_per_gb", catalog.dram_price_per_gb());
  resolve(p.drive, "economics.prices.drive_usd",
          s_.hardware.nvme.drive.name.empty() ? PriceQuote{}
                                              : catalog.drive_price(s_.hardware.nvme.drive.name));
}

void Loader::check_cross_fields() const {
  const Hardware& hw = s_.hardware;
  const Policy& pol = s_.policy;
  const LlmSpec& m = s_.model;
  const bool nvme = hw.nvme.count > 0;

  // The model's shape.
  if (m.heads > 0 && m.hidden % m.heads != 0)
    fail_at("model.heads", "hidden (" + std::to_string(m.hidden) + ") must be divisible by heads (" +
                               std::to_string(m.heads) + ")");
  if (m.kv_heads > m.heads || (m.kv_heads > 0 && m.heads % m.kv_heads != 0))
    fail_at("model.kv_heads", "kv_heads (" + std::to_string(m.kv_heads) +
                                  ") must divide heads (" + std::to_string(m.heads) + ")");
  if (m.experts_per_token > m.experts)
    fail_at("model.experts_per_token", "must not exceed experts (" + std::to_string(m.experts) + ")");

  // Where things live.
  if (pol.weights.nvme > 0 && !nvme)
    fail_at("policy.weights", "weights on nvme need NVMe drives (hardware.nvme.model or profile, "
                              "count > 0)");
  if (pol.weights.nvme > 0 && pol.io_path == IoPath::kGds && !hw.gpu.gds)
    fail_at("policy.io_path", "GPU '" + hw.gpu.name + "' does not support GPUDirect Storage; use aio");
  if (s_.kind == WorkloadKind::kIo) {
    if (!nvme) fail_at("workload.kind", "an io workload needs NVMe drives (hardware.nvme)");
    if (s_.io.buffer == IoWorkload::Buffer::kGpuDirect && !hw.gpu.gds)
      fail_at("workload.buffer", "GPU '" + hw.gpu.name + "' does not support GPUDirect Storage");
  }
  if (s_.kind == WorkloadKind::kTraining) {
    const TrainingWorkload& t = s_.training;
    const std::pair<const char*, Tier> tiers[] = {
        {"workload.params", t.params}, {"workload.gradients", t.gradients},
        {"workload.optimizer", t.optimizer}};
    for (const auto& [key, tier] : tiers)
      if (tier == Tier::kNvme && !nvme) fail_at(key, "nvme needs NVMe drives (hardware.nvme)");
  }
  if (s_.checkpoint.writer == CheckpointWorkload::Writer::kFastPersist) {
    // FastPersist's overlapped storage writes hook into torch's legacy serialiser only.
    if (given("workload.serialization") &&
        s_.checkpoint.serialization != CheckpointWorkload::Serialization::kLegacy)
      fail_at("workload.serialization",
              "fast_persist writes the legacy format only (its storage hook exists in the "
              "legacy serialiser); use legacy or leave the key out");
  }
  if (s_.kind == WorkloadKind::kCheckpoint &&
      s_.checkpoint.target.kind == StorageTarget::Kind::kLocalNvme && !nvme)
    fail_at("workload.target.kind", "local_nvme needs NVMe drives (hardware.nvme)");

  if (s_.kind == WorkloadKind::kServing) check_serving();

  // Parallelism.
  const int tp = pol.parallelism.tensor;
  const int pp = pol.parallelism.pipeline;
  if (s_.kind == WorkloadKind::kInference && hw.gpu_count != tp * pp)
    fail_at("hardware.gpu.count", "must equal tensor * pipeline = " + std::to_string(tp * pp) +
                                      " for inference (data parallelism is simulated for "
                                      "training only)");
  if (s_.kind == WorkloadKind::kTraining && hw.gpu_count % (tp * pp) != 0)
    fail_at("hardware.gpu.count", "must be a multiple of tensor * pipeline = " +
                                      std::to_string(tp * pp));
  if (m.heads % tp != 0)
    fail_at("policy.parallelism.tensor", "tensor degree " + std::to_string(tp) +
                                             " must divide the model's heads (" +
                                             std::to_string(m.heads) + ")");
  if (m.kv_heads > 0 && m.kv_heads % tp != 0 && tp % m.kv_heads != 0)
    fail_at("policy.parallelism.tensor", "tensor degree " + std::to_string(tp) +
                                             " and kv_heads (" + std::to_string(m.kv_heads) +
                                             ") must divide one another");
  if (pp > m.layers)
    fail_at("policy.parallelism.pipeline", "more pipeline stages than layers (" +
                                               std::to_string(m.layers) + ")");
  if (s_.kind == WorkloadKind::kInference) {
    if (pol.schedule == Schedule::kFlexGenBlock && s_.inference.batch % pol.gpu_batches != 0)
      fail_at("policy.gpu_batches", "must divide workload.batch (" +
                                        std::to_string(s_.inference.batch) + ")");
    if (pol.parallelism.micro_batches > s_.inference.batch)
      fail_at("policy.parallelism.micro_batches",
              "more micro-batches than sequences (workload.batch = " +
                  std::to_string(s_.inference.batch) + ")");
  }
}

void Loader::check_serving() const {
  const ServingWorkload& w = s_.serving;
  const bool rate = w.arrival_rate_per_s > 0;
  if (w.trace.empty() && !rate)
    fail_at("workload.arrival_rate",
            "missing: give workload.arrival_rate (requests/s) or a workload.trace");
  if (!w.trace.empty() && rate)
    fail_at("workload.arrival_rate",
            "a trace gives the arrivals; remove workload.arrival_rate "
            "or workload.trace");
  const std::pair<const char*, std::pair<int, int>> bounds[] = {
      {"workload.prompt_tokens", {w.prompt_tokens_min, w.prompt_tokens}},
      {"workload.output_tokens", {w.output_tokens_min, w.output_tokens}}};
  const ServingWorkload::Lengths dists[] = {w.prompt_dist, w.output_dist};
  for (int i = 0; i < 2; ++i)
    if (dists[i] == ServingWorkload::Lengths::kUniform &&
        bounds[i].second.first > bounds[i].second.second)
      fail_at(std::string(bounds[i].first) + "_min", "must not exceed " +
                                                         std::string(bounds[i].first) + " (" +
                                                         std::to_string(bounds[i].second.second) +
                                                         "), the upper bound of the uniform "
                                                         "distribution");
  // The model's context window, where the catalog gives it (HF config max_position_embeddings):
  // fixed and uniform lengths must fit in it; lognormal draws are truncated to it.
  const LlmSpec& m = s_.model;
  if (w.trace.empty() && m.sources.count("max_positions") &&
      w.prompt_dist != ServingWorkload::Lengths::kLognormal &&
      w.output_dist != ServingWorkload::Lengths::kLognormal &&
      w.prompt_tokens + w.output_tokens > m.max_positions)
    fail_at(given("workload.output_tokens") ? "workload.output_tokens" : "workload.prompt_tokens",
            "prompt_tokens + output_tokens = " + std::to_string(w.prompt_tokens + w.output_tokens) +
                " exceeds " + m.name + "'s context of " + std::to_string(m.max_positions) +
                " tokens (model.max_positions)");
  if (s_.policy.parallelism.pipeline != 1)
    fail_at("policy.parallelism.pipeline",
            "pipeline parallelism is not modelled for serving; use tensor parallelism, and more "
            "GPUs than the tensor degree for data-parallel replicas");
  if (s_.hardware.gpu_count % s_.policy.parallelism.tensor != 0)
    fail_at("hardware.gpu.count",
            "must be a multiple of tensor = " + std::to_string(s_.policy.parallelism.tensor) +
                " (each replica of the model uses tensor GPUs)");
  if (s_.policy.kv_cache.gpu < 1.0)
    fail_at("policy.kv_cache",
            "serving keeps the KV cache on the GPU (paged); KV offload to "
            "host memory is modelled for the inference workload only");
  if (s_.policy.weights.nvme > 0 && s_.hardware.gpu_count > s_.policy.parallelism.tensor)
    fail_at("hardware.gpu.count",
            "replicas that share one NVMe array are not modelled; use one "
            "replica (gpu count = tensor) with weights on nvme");
}

// Inserts `value` at a dotted path of `root`, creating the maps on the way.
void put(YAML::Node root, const std::string& path, const YAML::Node& value) {
  YAML::Node cur = root;
  std::size_t start = 0;
  for (auto dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
    const std::string seg = path.substr(start, dot - start);
    if (!cur[seg]) cur[seg] = YAML::Node(YAML::NodeType::Map);
    YAML::Node next = cur[seg];
    cur.reset(next);  // rebind, not assign: operator= would copy the content
    start = dot + 1;
  }
  cur[path.substr(start)] = value;
}

std::string Loader::emit_resolved() {
  YAML::Node root(YAML::NodeType::Map);
  const bool has_nvme = s_.hardware.nvme.count > 0;
  // A profile without a catalog drive has no catalog values: write only the fields set by hand
  // (the struct defaults, e.g. read_gbps 0, would not pass the range checks on reload).
  const bool profile_only = has_nvme && s_.hardware.nvme.drive.name.empty();
  Scenario blank;
  for (const Option& o : scenario_options()) {
    if (!(o.kinds & kind_bit(s_.kind)) || option_unset(o, s_)) continue;
    const bool drive_field = o.path.rfind("hardware.nvme.", 0) == 0 && o.from_catalog;
    if (!has_nvme && o.path.rfind("hardware.nvme.", 0) == 0 && o.path != "hardware.nvme.count")
      continue;
    if (profile_only && drive_field &&
        YAML::Dump(option_yaml(o, s_)) == YAML::Dump(option_yaml(o, blank)))
      continue;
    put(root, o.path, option_yaml(o, s_));
  }
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

Scenario Loader::run() {
  if (root_.is_null())
    root_.fail("empty scenario (expected a map with name, hardware, model, workload)");
  flatten(root_, "");
  for (const auto& a : opts_.overrides) add_override(a);

  // The workload kind decides which keys apply, so it is read first.
  const Option* kind_opt = find_options("workload.kind").front();
  auto kind_it = given_.find("workload.kind");
  if (kind_it == given_.end()) fail_missing(*kind_opt);
  read_option(kind_it->second.node, *kind_opt, s_);
  for (const auto& [path, g] : given_) {
    if (find_option(path, s_.kind)) continue;
    unsigned kinds = 0;
    for (const Option* o : find_options(path)) kinds |= o->kinds;
    g.node.fail("does not apply to workload kind '" + workload_kind_names()[static_cast<std::size_t>(s_.kind)] +
                "' (only to: " + kinds_text(kinds) + ")");
  }

  std::optional<Catalog> owned;
  if (!opts_.catalog) owned = Catalog::load(opts_.data_dir);
  const Catalog& catalog = opts_.catalog ? *opts_.catalog : *owned;

  apply_options(catalog);
  resolve_nvme();
  resolve_prices(catalog);
  check_cross_fields();
  // FastPersist writes the legacy format (checked above); the resolved scenario says so.
  if (s_.checkpoint.writer == CheckpointWorkload::Writer::kFastPersist)
    s_.checkpoint.serialization = CheckpointWorkload::Serialization::kLegacy;
  s_.resolved_yaml = emit_resolved();
  s_.hash = stable_hash(s_.resolved_yaml);
  return std::move(s_);
}

}  // namespace

std::string stable_hash(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;  // FNV prime
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

Scenario load_scenario(const std::string& path, const LoadOptions& opts) {
  const YNode root = parse_yaml_file(path);
  const std::string base = std::filesystem::path(path).parent_path().string();
  Scenario s = Loader(root, path, base, opts).run();
  s.file = path;
  return s;
}

Scenario load_scenario_text(const std::string& yaml, const std::string& display_name,
                            const LoadOptions& opts) {
  const YNode root = parse_yaml_text(yaml, display_name);
  return Loader(root, display_name, "", opts).run();
}

}  // namespace tiersim::config
