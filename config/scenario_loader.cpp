#include "config/scenario_loader.hpp"
#include "config/yaml_writer.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>

#include "config/device_profile.hpp"
#include "config/hf_config.hpp"
#include "config/input_notes.hpp"
#include "config/options.hpp"
#include "config/scenario_check.hpp"
#include "config/yaml_reader.hpp"
#include "model/capacity.hpp"
#include "model/errors.hpp"
#include "model/parallelism.hpp"
#include "model/power.hpp"
#include "model/ssd_model.hpp"
#include "model/files.hpp"
#include "model/stable_hash.hpp"
#include "sim/workloads/inference/flexgen_keys.hpp"
#include "sim/workloads/traits.hpp"

namespace tiersim::config {

// One option's value read from a given node: the value, or the error reading it threw.
struct Decoded {
  const Option* option = nullptr;
  std::optional<OptionValue> value;
  std::exception_ptr error;
};

// One key given by the scenario file, a --set or a study's setting, before it is applied.
struct Given {
  YNode node;  // where it was written: errors about the key name this place
  std::string base_dir;  // relative paths in the value resolve against this
  bool from_set = false;
  // The node read once for each option of its key (a key may name one option per workload
  // kind), so that a base file's values and a study's settings are applied to many scenarios
  // without reading YAML again. Null: read where it is applied.
  std::shared_ptr<const std::vector<Decoded>> decoded;
};

// The keys of a scenario file, flattened to their paths (section maps kept for line numbers).
struct GivenKeys {
  std::map<std::string, Given> given;
  std::map<std::string, YNode> sections;
  // given's entry for each row of the option table (null: not given), so that a load applying
  // every row finds the file's values without a lookup by path; empty until index() fills it.
  std::vector<const Given*> by_option;
  void index() {
    const std::vector<Option>& table = scenario_options();
    by_option.assign(table.size(), nullptr);
    for (const auto& [path, g] : given)
      for (const Option* o : find_options(path))
        by_option[static_cast<std::size_t>(o - table.data())] = &g;
  }
};

// A --set assignment read once: its keys (a section given as a map sets each of its keys) or the
// error the loader throws when it applies it.
struct SettingData {
  std::vector<std::pair<std::string, Given>> keys;
  std::exception_ptr error;
  // The assignment as given: an invalid one is expanded again where a load applies it, with the
  // scenario's workload kind known, so its message is the one --set gives there.
  std::string assignment;
};

namespace {

// The widest attention (heads x head_dim) a model may have: past any published model's (Llama-3.1
// 405B's is 16,384), and well inside an int, whose products the layout takes.
constexpr long long kMaxAttentionWidth = 1000000000LL;

// Reads `g`'s node for every option its key names (see Given::decoded).
void decode(Given& g, const std::string& path) {
  auto out = std::make_shared<std::vector<Decoded>>();
  for (const Option* o : find_options(path)) {
    Decoded d;
    d.option = o;
    try {
      d.value = parse_option_value(g.node, *o);
    } catch (...) {
      d.error = std::current_exception();
    }
    out->push_back(std::move(d));
  }
  g.decoded = std::move(out);
}

// The workload kind `root` names, when it names one: unknown-key messages then list that kind's
// keys only (config/options.hpp keys_below), not every kind's.
std::optional<WorkloadKind> kind_named_in(const YNode& root) {
  if (!root.is_map()) return std::nullopt;
  const auto workload = root.get("workload");
  if (!workload || !workload->is_map()) return std::nullopt;
  const auto kind = workload->get("kind");
  if (!kind || !kind->is_scalar()) return std::nullopt;
  return workload_kind_named(kind->raw().Scalar());
}

// map.check_keys against the keys below `prefix`; an unknown key's message lists only those of
// `kind`, when known. That list is worked out only once a key is found unknown: every load
// flattens its file, and filtering the table for each map was 3% of a whole `tiersim run`.
void check_keys_of_kind(const YNode& map, const std::string& prefix,
                        std::optional<WorkloadKind> kind) {
  try {
    map.check_keys(keys_below(prefix));
  } catch (const ConfigError&) {
    if (!kind) throw;
    const std::vector<std::string> shown = keys_below(prefix, kind);
    map.check_keys(keys_below(prefix), &shown);
    throw;
  }
}

// The keys of the scenario file `root` (paths relative to `base_dir`), checked against the table.
// `kind`: the workload kind the file names, if any, for the messages about unknown keys.
void flatten(const YNode& map, const std::string& prefix, const std::string& base_dir,
             GivenKeys& out, std::optional<WorkloadKind> kind) {
  if (prefix.empty()) {
    // Another of tiersim's files where a scenario was expected: say which, and what runs it.
    if (const auto k = map.get("compare"))
      k->fail(
          "this is a comparison file (it has compare:), not a scenario: run it with tiersim "
          "compare, or name one of the scenario files it compares");
    for (const char* key : {"grid", "zip", "base"})
      if (const auto k = map.get(key))
        k->fail(std::string("this is a sweep or plan file (it has ") + key +
                ":), not a scenario: run it with tiersim sweep or tiersim plan, or name the "
                "scenario it varies (its base:)");
  }
  check_keys_of_kind(map, prefix, kind);
  for (auto& [key, child] : map.entries()) {
    const std::string path = child.path();
    if (!find_options(path).empty()) {
      out.given[path] = Given{child, base_dir, false, nullptr};
    } else if (child.is_null()) {
      out.sections[path] = child;  // "policy:" with nothing below: an empty section
    } else if (child.is_map()) {
      out.sections[path] = child;
      flatten(child, path, base_dir, out, kind);
    } else {
      child.fail("expected a map with keys " + join(keys_below(path, kind)) + ", got " +
                 child.describe());
    }
  }
}

// `value` names where the override was written (--set, or a line of a comparison file) and has
// the key as its path, so every error about it names that place and the key. Appends the keys it
// sets to `out`, in order.
// `kind`: the scenario's workload kind when it is known (an override of a loaded file), so that an
// unknown key's message lists and suggests that kind's keys; nullopt (a study's setting, made once
// for scenarios of any kind) lists every kind's.
void expand_given(const std::string& key, const YNode& value,
                  std::vector<std::pair<std::string, Given>>& out,
                  std::optional<WorkloadKind> kind) {
  if (find_options(key).empty()) {
    if (is_section(key) && value.is_map()) {
      // A section given as a map sets each of its keys (`--set hardware.gpu={model: H200,
      // count: 2}`, or a sweep axis over whole sections: scenarios/sweeps/README.md).
      check_keys_of_kind(value, key, kind);
      for (const auto& [child_key, child] : value.entries())
        expand_given(key + "." + child_key, child, out, kind);
      return;
    }
    if (is_section(key))
      value.fail("is a section; set one of its keys, or give it as a map of them: " +
                 join(keys_below(key, kind)));
    std::vector<std::string> all, of_kind;
    for (const auto& o : scenario_options()) {
      all.push_back(o.path);
      if (kind && (o.kinds & kind_bit(*kind))) of_kind.push_back(o.path);
    }
    std::string hint = kind ? did_you_mean(key, of_kind) : std::string();
    if (hint.empty()) hint = did_you_mean(key, all);
    // Show the valid keys of the deepest section that exists, as for an unknown key in a file.
    std::string prefix = key.substr(0, key.rfind('.') == std::string::npos ? 0 : key.rfind('.'));
    while (!prefix.empty() && !is_section(prefix))
      prefix = prefix.substr(0, prefix.rfind('.') == std::string::npos ? 0 : prefix.rfind('.'));
    value.fail("unknown key" + hint + "; valid keys" +
               (prefix.empty() ? std::string() : " in '" + prefix + "'") +
               (kind ? " for workload kind '" +
                           workload_kind_names()[static_cast<std::size_t>(*kind)] + "'"
                     : std::string()) +
               ": " + join(keys_below(prefix, kind)));
  }
  out.emplace_back(key, Given{value, "", true, nullptr});
}

class Loader {
 public:
  // `base`: the file's keys already flattened (ScenarioSource); null: flatten `root` here.
  Loader(YNode root, std::string display_name, std::string base_dir, const LoadOptions& opts,
         const GivenKeys* base = nullptr)
      : root_(std::move(root)), name_(std::move(display_name)), base_dir_(std::move(base_dir)),
        opts_(opts), base_(base) {}

  Scenario run();

 private:
  void add_override(const std::string& assignment);
  void add_given(const std::string& key, const YNode& value);
  const Given* find_given(const std::string& path) const;
  // Calls f(path, given) for every given key in path order (a key given again replaces the
  // file's).
  template <class F>
  void each_given(F&& f) const;
  void read_given(const Given& g, const Option& o);
  [[noreturn]] void fail_at(const std::string& path, const std::string& message) const;
  [[noreturn]] void fail_missing(const Option& o) const;
  void apply_options(const Catalog& catalog);
  void apply_one(const Option& o, const Given* given, const Catalog& catalog);
  void drive_from_profile(const Catalog& catalog);
  void apply_hf_config(const Given& g);
  void resolve_nvme();
  void resolve_prices(const Catalog& catalog);
  void check_cross_fields();
  void check_latent_attention() const;
  std::string emit_resolved();
  std::string referenced_contents();
  bool given(const std::string& path) const { return find_given(path) != nullptr; }
  friend class LoaderCheck;

  YNode root_;
  std::string name_;
  std::string base_dir_;
  const LoadOptions& opts_;
  const GivenKeys* base_;  // the file's keys (never changed by a load)
  GivenKeys own_;          // the file's keys when there is no base_; then every override
  Scenario s_;
  // The drives' calibrated profile, read once by resolve_nvme, for the scenario's notes.
  std::optional<DeviceProfile> profile_;
  // The warnings of the workload's checks (ScenarioCheck::warn), added to the scenario's notes.
  std::vector<InputNote> check_notes_;
};

const Given* Loader::find_given(const std::string& path) const {
  if (auto it = own_.given.find(path); it != own_.given.end()) return &it->second;
  if (base_)
    if (auto it = base_->given.find(path); it != base_->given.end()) return &it->second;
  return nullptr;
}

template <class F>
void Loader::each_given(F&& f) const {
  static const std::map<std::string, Given> kNone;
  const auto& a = own_.given;
  const auto& b = base_ ? base_->given : kNone;
  auto i = a.begin();
  auto j = b.begin();
  while (i != a.end() || j != b.end()) {
    if (j == b.end() || (i != a.end() && i->first <= j->first)) {
      if (j != b.end() && i->first == j->first) ++j;  // given again: this one counts
      f(i->first, i->second);
      ++i;
    } else {
      f(j->first, j->second);
      ++j;
    }
  }
}

void Loader::read_given(const Given& g, const Option& o) {
  if (g.decoded)
    for (const Decoded& d : *g.decoded)
      if (d.option == &o) {
        if (d.error) std::rethrow_exception(d.error);
        set_option(o, *d.value, s_);
        return;
      }
  read_option(g.node, o, s_);
}

// What a workload's checks (config/scenario_check.hpp) see of the scenario being loaded.
class LoaderCheck final : public ScenarioCheck {
 public:
  LoaderCheck(const Loader& loader, std::vector<InputNote>& warnings)
      : loader_(loader), warnings_(warnings) {}
  const Scenario& scenario() const override { return loader_.s_; }
  bool given(const std::string& path) const override { return loader_.given(path); }
  std::vector<std::string> given_under(const std::string& prefix) const override {
    std::vector<std::string> paths;
    loader_.each_given([&](const std::string& path, const Given&) {
      if (path.rfind(prefix, 0) == 0) paths.push_back(path);
    });
    return paths;
  }
  [[noreturn]] void fail(const std::string& path, const std::string& message) const override {
    loader_.fail_at(path, message);
  }
  void warn(const std::string& path, const std::string& message) const override {
    warnings_.push_back({InputNote::Kind::kWarning, path, message});
  }

 private:
  const Loader& loader_;
  std::vector<InputNote>& warnings_;
};

std::string join_path(const std::string& base, const std::string& rel) {
  namespace fs = std::filesystem;
  if (base.empty() || fs::path(rel).is_absolute()) return rel;
  return (fs::path(base) / rel).lexically_normal().string();
}

// The option's value in `s` as text that is equal exactly when the values are: the scalar itself,
// or the emitted YAML for maps and lists. Scalars skip the YAML emitter, which is slow.
std::string value_text(const Option& o, Scenario& s) {
  std::string text;
  if (option_scalar(o, s, text)) return text;
  return YAML::Dump(option_yaml(o, s));
}

// The option's row in the table (scenario_options()).
std::size_t row_of(const Option& o) {
  return static_cast<std::size_t>(&o - scenario_options().data());
}

// The option table's paths as a YamlShape, worked out once (never destroyed, as field_name_of's).
const YamlShape& option_shape() {
  static const YamlShape& kShape = *new YamlShape([] {
    std::vector<std::string> paths;
    for (const Option& opt : scenario_options()) paths.push_back(opt.path);
    return paths;
  }());
  return kShape;
}

// How many rows of the option table that apply to `kind` a catalog entry fills, worked out once.
std::size_t catalog_rows(WorkloadKind kind) {
  static const std::array<std::size_t, kWorkloadKindCount> kRows = [] {
    std::array<std::size_t, kWorkloadKindCount> rows{};
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (const Option& opt : scenario_options())
        if ((opt.kinds & kind_bit(static_cast<WorkloadKind>(i))) && opt.from_catalog) ++rows[i];
    return rows;
  }();
  return kRows[static_cast<std::size_t>(kind)];
}

// The resolved YAML of `s`: every key that applies, as the loader resolved it.
std::string emit_resolved_yaml(Scenario& s) {
  YamlDocument doc(option_shape());
  std::string text;
  const bool has_nvme = s.hardware.nvme.count > 0;
  // A profile without a catalog drive has no catalog values: write only the fields set by hand
  // (the struct defaults, e.g. read_gbps 0, would not pass the range checks on reload).
  const bool profile_only = has_nvme && s.hardware.nvme.drive.name.empty();
  // The struct defaults to compare with, made only for such a profile: every sweep point's load
  // emits its YAML, and building (and freeing) a whole Scenario it never reads was a cost of each.
  std::optional<Scenario> blank;
  if (profile_only) blank.emplace();
  for (const Option& o : scenario_options()) {
    if (!(o.kinds & kind_bit(s.kind)) || option_unset(o, s)) continue;
    if (o.emit_when && !o.emit_when(s)) continue;
    const bool drive_field = o.path.rfind("hardware.nvme.", 0) == 0 && o.from_catalog;
    if (!has_nvme && o.path.rfind("hardware.nvme.", 0) == 0 && o.path != "hardware.nvme.count")
      continue;
    if (profile_only && drive_field && value_text(o, s) == value_text(o, *blank)) continue;
    // FlexGen's keys belong to its schedule only; other scenarios' resolved YAML (and hash) stay
    // as they were before the keys existed.
    if (o.path.rfind("policy.flexgen.", 0) == 0 && s.policy.schedule != Schedule::kFlexGen)
      continue;
    if (s.policy.schedule == Schedule::kFlexGen &&
        std::find(std::begin(kFlexGenReplacedKeys), std::end(kFlexGenReplacedKeys), o.path) !=
            std::end(kFlexGenReplacedKeys))
      continue;
    if (option_scalar(o, s, text))
      doc.put_scalar(row_of(o), text);
    else
      doc.put_node(row_of(o), option_yaml(o, s));
  }
  return doc.text() + "\n";
}

// True when `text`, read as YAML, is exactly one plain scalar with this same text: then it needs
// no YAML parser. Every default in the option table and most --set and sweep-axis values ("16",
// "generic-gen5", "16MiB") are; one YAML::Load for each used to be a large share of a scenario
// load. Anything else (quotes, flow collections, comments, null words, several lines) is parsed.
bool plain_scalar(const std::string& text) {
  if (text.empty() || text.find_first_of(":{}[],#&*!|>'\"%@`~\n\r\t") != std::string::npos)
    return false;
  if (text.front() == ' ' || text.back() == ' ' || text.front() == '-' || text.front() == '?' ||
      text.rfind("...", 0) == 0)
    return false;
  return to_lower(text) != "null";
}

// `text` as a node, parsed only when it is not a plain scalar.
YNode value_node(const std::string& text, const std::string& display_name) {
  if (plain_scalar(text))
    return YNode(YAML::Node(text), std::make_shared<const std::string>(display_name), "", false);
  return parse_yaml_text(text, display_name, false);
}

using DefaultValues = std::vector<std::optional<OptionValue>>;  // by table row

// The plain-scalar defaults of the rows that apply to `kind`, read (none for the others).
DefaultValues read_defaults(WorkloadKind kind) {
  DefaultValues values;
  for (const Option& opt : scenario_options()) {
    std::optional<OptionValue> v;
    if ((opt.kinds & kind_bit(kind)) && plain_scalar(opt.default_text)) {
      try {
        v = parse_option_value(value_node(opt.default_text, "default of " + opt.path), opt);
      } catch (const ConfigError&) {
        // Left to each load, which reports it as it always did.
      }
    }
    values.push_back(std::move(v));
  }
  return values;
}

// Read once per process and workload kind: a process loads scenarios of one kind or a few, and
// the other kinds' rows (over a third of the table) are never applied. Never destroyed, as the
// table (config/options.cpp scenario_options).
template <int K>
const DefaultValues& kind_defaults() {
  static const DefaultValues& kValues =
      *new DefaultValues(read_defaults(static_cast<WorkloadKind>(K)));
  return kValues;
}
template <int... K>
const DefaultValues& defaults_of(WorkloadKind kind, std::integer_sequence<int, K...>) {
  static constexpr const DefaultValues& (*kByKind[])() = {&kind_defaults<K>...};
  return kByKind[static_cast<std::size_t>(kind)]();
}

// The table's plain-scalar defaults read once per process (none for the others): every load
// applies most defaults, and reading each default's text again at every load was a large share of
// a sweep point's cost.
const OptionValue* shared_default(const Option& o, WorkloadKind kind) {
  const std::vector<Option>& table = scenario_options();
  const std::less<const Option*> before;
  if (before(&o, table.data()) || !before(&o, table.data() + table.size())) return nullptr;
  const DefaultValues& defaults =
      defaults_of(kind, std::make_integer_sequence<int, kWorkloadKindCount>{});
  const auto& v = defaults[static_cast<std::size_t>(&o - table.data())];
  return v ? &*v : nullptr;
}

void Loader::add_override(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set", 0, assignment, "expected key.path=value");
  const std::string key = assignment.substr(0, eq);
  const YNode parsed = value_node(assignment.substr(eq + 1), "--set");
  add_given(key, YNode(parsed.raw(), std::make_shared<const std::string>("--set"), key, false));
}

void Loader::add_given(const std::string& key, const YNode& value) {
  std::vector<std::pair<std::string, Given>> keys;
  std::optional<WorkloadKind> kind;
  if (const Given* k = find_given("workload.kind"); k && k->node.is_scalar())
    kind = workload_kind_named(k->node.raw().Scalar());
  expand_given(key, value, keys, kind);
  for (auto& [k, g] : keys) own_.given[k] = std::move(g);
}

void Loader::fail_at(const std::string& path, const std::string& message) const {
  if (const Given* g = find_given(path)) g->node.fail(message);
  throw ConfigError(name_, 0, path, message);
}

void Loader::fail_missing(const Option& o) const {
  // Point at the deepest section the file does have, so the line number is useful.
  std::string prefix = o.path;
  while (true) {
    const auto dot = prefix.rfind('.');
    prefix = dot == std::string::npos ? "" : prefix.substr(0, dot);
    if (prefix.empty()) break;
    const auto& sections = base_ ? base_->sections : own_.sections;
    if (auto it = sections.find(prefix); it != sections.end() && !it->second.is_null())
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

// field_name of every row of the table, worked out once: every load asks for each catalog field's.
const std::string& field_name_of(const Option& o) {
  static const std::vector<std::string>& kFields = *new auto([] {  // never destroyed, as above
    std::vector<std::string> fields;
    for (const Option& opt : scenario_options()) fields.push_back(field_name(opt.path));
    return fields;
  }());
  return kFields[row_of(o)];
}

void Loader::apply_one(const Option& o, const Given* g, const Catalog& catalog) {
  // (g first: most rows are not given, and the path compares ran for every row of every load.)
  if (g && o.path == "model.hf_config") {
    apply_hf_config(*g);
    return;
  }
  // With a config.json, model.name only names the model: it need not be a catalog entry.
  if (g && o.path == "model.name" && given("model.hf_config")) {
    read_given(*g, o);
    return;
  }
  if (o.from_catalog) {
    SourceMap* sources = sources_for(s_, o.path);
    const std::string& field = field_name_of(o);
    if (g) {
      const std::string before = value_text(o, s_);
      read_given(*g, o);
      // A value equal to the catalog's keeps the catalog's provenance: that is what makes the
      // resolved YAML (every value inlined) load back into an identical Scenario.
      if (value_text(o, s_) != before) {
        s_.provenance.set(o.path, "override");
        (*sources)[field] = "override";
        return;
      }
    }
    // The catalog's source for the field, read when the entry is (model/provenance.hpp).
    s_.provenance.set_catalog(o.path, *sources, field);
    return;
  }
  if (g) {
    read_given(*g, o);
    if (o.type == ValueType::kPath) {
      std::string& p = *std::get<std::string*>(o.field(s_));
      p = join_path(g->base_dir, p);
    }
  } else if (o.required) {
    fail_missing(o);
  } else if (!o.default_text.empty()) {
    if (const OptionValue* shared = shared_default(o, s_.kind))
      set_option(o, *shared, s_);
    else
      read_option(value_node(o.default_text, "default of " + o.path), o, s_);
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
  const std::vector<Option>& table = scenario_options();
  // The keys this load gives (every key without a base file; else its overrides and settings),
  // by table row; the base's are indexed once, when it was prepared.
  own_.index();
  // A provenance entry per catalog row that applies, and a few set by the loader: room for them
  // all, so none is moved as it grows (room for every row was twice that, kept by every scenario
  // a study holds).
  constexpr std::size_t kLoaderEntries = 8;
  s_.provenance.reserve(catalog_rows(s_.kind) + kLoaderEntries);
  // The rows read apart from the others, looked up in the table's path index once rather than
  // compared by path in every load.
  static const std::vector<const Option*>&kKindRows = find_options("workload.kind"),
                                 &kDriveRows = find_options("hardware.nvme.model");
  const auto among = [](const std::vector<const Option*>& rows, const Option& o) {
    return std::find(rows.begin(), rows.end(), &o) != rows.end();
  };
  for (std::size_t i = 0; i < table.size(); ++i) {
    const Option& o = table[i];
    if (!(o.kinds & kind_bit(s_.kind)) || among(kKindRows, o)) continue;
    if (among(kDriveRows, o)) {
      drive_from_profile(catalog);  // may give hardware.nvme.model
      apply_one(o, find_given(o.path), catalog);
      continue;
    }
    const Given* g = own_.by_option[i];
    if (!g && base_) g = base_->by_option[i];
    apply_one(o, g, catalog);
  }
}

// `model: {hf_config: path}`: the architecture comes from a Hugging Face config.json, read
// relative to the file that names it. It replaces the catalog model's fields, if model.name named
// one (the name stays); the model's other keys, applied after this one, still override single
// fields. Every field the file gave is inlined in the resolved scenario, so the file's content is
// part of the scenario's hash.
void Loader::apply_hf_config(const Given& g) {
  const std::string path = join_path(g.base_dir, g.node.as_string());
  LlmSpec spec;
  try {
    spec = read_hf_config(path);
  } catch (const ConfigError& e) {
    // Where the file was named, then what is wrong in it.
    g.node.fail(e.what());
  }
  if (given("model.name")) {
    spec.name = s_.model.name;
  } else {
    // "<dir>/config.json" is named by its folder (the Hub's layout), "<name>.json" by its stem.
    namespace fs = std::filesystem;
    const fs::path p(path);
    spec.name = p.filename() == "config.json" && p.has_parent_path()
                    ? p.parent_path().filename().string()
                    : p.stem().string();
    s_.provenance.set("model.name", "hf_config: " + path);
  }
  s_.model = std::move(spec);
  s_.provenance.set("model.hf_config", "override");
}

// A profile used without hardware.nvme.model may name the catalog drive it measured
// (`catalog_drive:`, config/device_profile.hpp): that drive then stands as hardware.nvme.model, so
// its capacity, power and price come from the catalog and the profile replaces only its
// performance model. The scenario's own hardware.nvme.model wins when both are given.
void Loader::drive_from_profile(const Catalog& catalog) {
  if (given("hardware.nvme.model") || !given("hardware.nvme.profile")) return;
  const Option* profile_opt = find_option("hardware.nvme.profile", s_.kind);
  apply_one(*profile_opt, find_given("hardware.nvme.profile"), catalog);
  const std::string& path = s_.hardware.nvme.profile_path;
  const DeviceProfile profile = read_device_profile(path);
  if (profile.catalog_drive.empty()) return;
  try {
    catalog.drive(profile.catalog_drive);
  } catch (const CatalogError& e) {
    throw CatalogError(
        ConfigError(path, profile.catalog_drive_line, "catalog_drive", e.what()).what());
  }
  own_.given["hardware.nvme.model"] =
      Given{value_node(profile.catalog_drive, path), "", false, nullptr};
  s_.provenance.set("hardware.nvme.model", "profile: " + path + " (catalog_drive)");
}

void Loader::resolve_nvme() {
  NvmeArray& nvme = s_.hardware.nvme;
  const bool has_drive = !nvme.drive.name.empty() || !nvme.profile_path.empty();
  if (!has_drive) {
    if (given("hardware.nvme.count") && nvme.count > 0)
      fail_at("hardware.nvme.count", "NVMe drives need hardware.nvme.model or hardware.nvme.profile");
    each_given([](const std::string& path, const Given& g) {
      if (path.rfind("hardware.nvme.", 0) == 0 && path != "hardware.nvme.count")
        g.node.fail("overrides a drive field, but no drive is given (set hardware.nvme.model or "
                    "hardware.nvme.profile)");
    });
    nvme = NvmeArray{};
    s_.provenance.erase_prefix("hardware.nvme.");
    return;
  }
  if (!nvme.profile_path.empty()) {
    profile_ = read_device_profile(nvme.profile_path);
    nvme.model = profile_->model;
    nvme.drive.has_profile = true;
    nvme.drive.profile = nvme.model;
    s_.provenance.set("hardware.nvme.profile", "profile: " + nvme.profile_path);
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

// Multi-head latent attention (model/llm.hpp LlmSpec::kv_lora_rank): its fields fit together, and
// the stack and the KV cache's place are ones the simulator models it on.
void Loader::check_latent_attention() const {
  const LlmSpec& m = s_.model;
  const Policy& pol = s_.policy;
  if (!m.mla()) {
    for (const auto& [key, set] :
         {std::pair<const char*, bool>{"model.qk_rope_dim", m.qk_rope_dim > 0},
          {"model.q_lora_rank", m.q_lora_rank > 0}})
      if (set)
        fail_at(key,
                "belongs to multi-head latent attention: set model.kv_lora_rank (the "
                "latent's width) too, or leave it out");
  }
  if (m.v_head_size > 0 && 1LL * m.heads * m.v_head_size > kMaxAttentionWidth)
    fail_at("model.v_head_dim",
            "heads x v_head_dim = " + std::to_string(1LL * m.heads * m.v_head_size) +
                " is beyond any model's attention width (at most " +
                std::to_string(kMaxAttentionWidth) + ")");
  if (!m.mla()) return;
  if (1LL * m.kv_lora_rank + m.qk_rope_dim > kMaxAttentionWidth ||
      1LL * m.q_lora_rank > kMaxAttentionWidth)
    fail_at(m.q_lora_rank > kMaxAttentionWidth ? "model.q_lora_rank" : "model.kv_lora_rank",
            "is beyond any model's attention width (at most " + std::to_string(kMaxAttentionWidth) +
                ")");
  if (m.qk_rope_dim >= m.head_dim())
    fail_at("model.qk_rope_dim",
            "the rotary part (" + std::to_string(m.qk_rope_dim) +
                ") must be narrower than the key head it is part of (head_dim " +
                std::to_string(m.head_dim()) + ": qk_nope_head_dim + qk_rope_head_dim)");
  if (!pol.stack.mla_cache) {
    std::vector<std::string> able;
    for (const std::string& name : stack_names())
      if (execution_stack(name).mla_cache) able.push_back(name);
    fail_at("policy.stack", "the " + pol.stack.name +
                                " stack has no multi-head latent attention, " + m.name +
                                "'s (it predates DeepSeek-V2); stacks that run it: " + join(able));
  }
  // ZeRO-Inference's KV offload is a transformers fork's OPT, BLOOM and Llama attention
  // (model/llm.hpp HostKvCache); none has MLA's keys and values of different widths.
  if (pol.kv_cache.cpu > 0 && has_capability(s_, kCapKvCache))
    fail_at("policy.kv_cache",
            "a KV cache in host memory is not modelled for multi-head latent attention (" + m.name +
                "): keep it on gpu");
}

void Loader::check_cross_fields() {
  const Hardware& hw = s_.hardware;
  const Policy& pol = s_.policy;
  const LlmSpec& m = s_.model;
  const bool nvme = hw.nvme.count > 0;

  // The GPU's generation sizes its CUDA context (model/capacity.hpp gpu_tier).
  try {
    gpu_arch_info(hw.gpu.arch);
  } catch (const ModelError& e) {
    fail_at("hardware.gpu.arch", e.what());
  }
  // The PSUs' 80 PLUS level picks their efficiency curve (model/power.hpp psu_efficiency).
  if (hw.host.psu_count > 0 || !hw.host.psu_efficiency.empty()) {
    try {
      psu_efficiency(hw.host.psu_efficiency, 0.5);
    } catch (const ModelError& e) {
      fail_at("hardware.host.psu_efficiency", e.what());
    }
  }
  // The model: a catalog name or a config.json must have given it. Single fields (--set
  // model.layers=2) only override one of those; alone they leave the rest of the shape at zero,
  // which the arithmetic divides by.
  if (m.layers <= 0 || (!given("model.name") && !given("model.hf_config")))
    fail_at("model.name", "missing required key (expected a catalog model, tiersim catalog "
                          "models, or model.hf_config: a Hugging Face config.json)");
  const std::pair<const char*, int> shape[] = {
      {"model.layers", m.layers}, {"model.hidden", m.hidden}, {"model.heads", m.heads},
      {"model.ffn", m.ffn},       {"model.vocab", m.vocab}};
  for (const auto& [key, v] : shape)
    if (v <= 0) fail_at(key, "must be at least 1 (got " + std::to_string(v) + ")");
  // The model's shape; a model with its own head width (head_dim) need not divide hidden.
  if (m.heads > 0 && m.head_size <= 0 && m.hidden % m.heads != 0)
    fail_at("model.heads", "hidden (" + std::to_string(m.hidden) + ") must be divisible by heads (" +
                               std::to_string(m.heads) + ")");
  if (m.kv_heads > m.heads || (m.kv_heads > 0 && m.heads % m.kv_heads != 0))
    fail_at("model.kv_heads", "kv_heads (" + std::to_string(m.kv_heads) +
                                  ") must divide heads (" + std::to_string(m.heads) + ")");
  // The attention's width (heads x head_dim) is an int in the layout's arithmetic; a product past
  // any model's (the widest published are tens of thousands) would wrap around.
  if (m.head_size > 0 && 1LL * m.heads * m.head_size > kMaxAttentionWidth)
    fail_at("model.head_dim", "heads x head_dim = " + std::to_string(1LL * m.heads * m.head_size) +
                                  " is beyond any model's attention width (at most " +
                                  std::to_string(kMaxAttentionWidth) + ")");
  check_latent_attention();
  if (m.experts_per_token > m.experts)
    fail_at("model.experts_per_token", "must not exceed experts (" + std::to_string(m.experts) + ")");
  if (m.shared_ffn > 0 && m.experts <= 1)
    fail_at("model.shared_ffn",
            "shared experts run beside routed ones: set model.experts above 1, "
            "or widen model.ffn for a dense model");
  // Which layers have the experts: only an MoE has any, and at least one layer must.
  for (const auto& [key, set] :
       {std::pair<const char*, bool>{"model.dense_first_layers", m.dense_first_layers > 0},
        {"model.moe_layer_step", m.moe_layer_step != 1},
        {"model.dense_ffn", m.dense_ffn > 0}})
    if (set && m.experts <= 1)
      fail_at(key,
              "places the dense layers of an MoE; a dense model (model.experts 1) has no "
              "expert layers: leave it out, or set model.experts above 1");
  if (m.experts > 1 && m.dense_ffn > 0 && !m.mixed_layers())
    fail_at("model.dense_ffn",
            "no layer runs the dense MLP (every layer has the experts): set "
            "model.dense_first_layers or model.moe_layer_step, or leave it out");
  if (m.experts > 1 && m.expert_layers() == 0)
    fail_at(m.dense_first_layers >= m.layers ? "model.dense_first_layers" : "model.moe_layer_step",
            "leaves no layer with the experts (dense_first_layers " +
                std::to_string(m.dense_first_layers) + ", moe_layer_step " +
                std::to_string(m.moe_layer_step) + ", layers " + std::to_string(m.layers) +
                "): an MoE needs at least one");
  // A key of sliding-window attention given in the scenario (or with --set) without a window: a
  // mistake. From the catalog, with the window set to 0 to see the model without it: nothing to
  // use.
  const auto needs_window = [&](bool set, const char* key, const std::string& what) {
    if (set && m.sliding_window == 0 && s_.provenance.source(key) == "override")
      fail_at(key, what + ": set model.sliding_window, or leave it out");
  };
  needs_window(m.full_attention_layers > 0, "model.full_attention_layers",
               "belongs to sliding-window attention (the layers that attend fully although the "
               "others slide)");
  needs_window(m.chunked_attention, "model.chunked_attention",
               "chunks the sliding layers' attention by the window's width");
  if (m.full_attention_layers > m.layers)
    fail_at("model.full_attention_layers", std::to_string(m.full_attention_layers) +
                                               " exceeds the model's " + std::to_string(m.layers) +
                                               " layers");

  // Where things live.
  if (pol.weights.nvme > 0 && !nvme)
    fail_at("policy.weights", "weights on nvme need NVMe drives (hardware.nvme.model or profile, "
                              "count > 0)");
  if (pol.kv_cache.cpu > 0 && !pol.stack.host_kv_attention && has_capability(s_, kCapKvCache))
    fail_at("policy.kv_cache", "the " + pol.stack.name +
                                   " stack runs attention on the GPU only; keep the KV cache on "
                                   "gpu or use policy.stack: " +
                                   kDefaultStackName);
  if (pol.kv_cache.cpu > 0 && pol.stack.host_kv_attention && has_capability(s_, kCapKvCache) &&
      pol.schedule != Schedule::kFlexGen && !zero_inference_host_kv_supported(m))
    fail_at("policy.kv_cache",
            "ZeRO-Inference keeps a KV cache in host memory for OPT, BLOOM and Llama models only "
            "(its transformers fork changes those three; DeepSpeedExamples' run_model.py loads no "
            "other), not for model family '" +
                m.family + "': keep the KV cache on gpu");
  if (pol.weights.nvme > 0 && pol.io_path == IoPath::kGds && !hw.gpu.gds)
    fail_at("policy.io_path", "GPU '" + hw.gpu.name + "' does not support GPUDirect Storage; use aio");
  // The workload's own rules (sim/workloads/<name>/checks.cpp), around the parallel layout's.
  const WorkloadChecks& checks = workload_checks(s_.kind);
  const LoaderCheck check(*this, check_notes_);
  if (checks.keys) checks.keys(check);

  // Parallelism: the simulator's own rules (model/parallelism.hpp), reported here with the key.
  if (const auto issue = parallelism_issue(s_)) fail_at(issue->key, issue->message);
  if (pol.schedule == Schedule::kFlexGen && !has_capability(s_, kCapFlexGen))
    fail_at("policy.schedule", "flexgen is modelled for the inference workload only");
  if (checks.layout) checks.layout(check);
}

// The options whose values name files: the path keys (a request trace, a device profile) and
// model.hf_config. Every scenario load asks which of them it uses, so the table is searched once.
const std::vector<const Option*>& file_options() {
  static const std::vector<const Option*> kFiles = [] {
    std::vector<const Option*> out;
    for (const Option& o : scenario_options())
      if (o.type == ValueType::kPath || o.path == "model.hf_config") out.push_back(&o);
    return out;
  }();
  return kFiles;
}

// Calls `f(option, path)` with each file path the scenario's resolved YAML names: the path keys
// of its workload kind, and with `with_config` the config.json the scenario named
// (model.hf_config, written out only then; its content is inlined in the YAML, so the hash does
// not read it).
template <typename S, typename F>
void each_named_path(S& s, bool with_config, F&& f) {
  for (const Option* o : file_options()) {
    const bool named = o->type == ValueType::kPath
                           ? (o->kinds & kind_bit(s.kind)) != 0
                           : with_config && o->emit_when && o->emit_when(s);
    if (!named) continue;
    // field() only locates the member; a const scenario's is only read.
    auto& path = *std::get<std::string*>(o->field(const_cast<Scenario&>(s)));
    if (!path.empty()) f(*o, path);
  }
}

bool names_relative_path(const Scenario& s) {
  bool relative = false;
  each_named_path(s, true, [&](const Option&, const std::string& path) {
    relative = relative || std::filesystem::path(path).is_relative();
  });
  return relative;
}

// The resolved YAML of `s` with every file path it names made absolute.
std::string absolute_paths_yaml(Scenario s) {
  each_named_path(s, true, [](const Option&, std::string& path) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(path, ec);
    if (!ec) path = absolute.lexically_normal().string();
  });
  return emit_resolved_yaml(s);
}

std::string Loader::emit_resolved() { return emit_resolved_yaml(s_); }

// The contents of the files the scenario references (every path key: a request trace, a device
// profile) as lines "# <key> contents: <hash>", hashed with the resolved YAML. The YAML names
// only the paths, so without these an edited trace or a re-calibrated profile kept the old hash
// and a resumed sweep kept the old results.
std::string Loader::referenced_contents() {
  std::string out;
  each_named_path(s_, false, [&](const Option& o, const std::string& path) {
    // The largest input-file limit: a trace may be that large (model/files.hpp). A file that
    // cannot be read is reported where it is used (the trace reader, with its line numbers);
    // until then the hash says that it could not be read.
    std::string contents;
    try {
      contents = file_content_hash(path, o.path + " file", kMaxTraceFileBytes, o.path);
    } catch (const ConfigError&) {
      contents = "unreadable";
    }
    out += "# " + o.path + " contents: " + contents + "\n";
  });
  return out;
}

Scenario Loader::run() {
  if (!base_) {
    if (root_.is_null())
      root_.fail("empty scenario (expected a map with name, hardware, model, workload)");
    flatten(root_, "", base_dir_, own_, kind_named_in(root_));
  }
  for (const auto& o : opts_.file_overrides)
    add_given(o.key, YNode(o.value.raw(), std::make_shared<const std::string>(o.value.file()),
                           o.key, o.value.line() > 0));
  for (const auto& a : opts_.overrides) add_override(a);
  for (const Setting& setting : opts_.settings) {
    if (!setting.data) continue;
    if (setting.data->error) {
      // Made once for scenarios of any kind, its unknown-key message listed every kind's keys:
      // expanded again here, it throws what --set throws for this scenario.
      add_override(setting.data->assignment);
      std::rethrow_exception(setting.data->error);
    }
    for (const auto& [key, g] : setting.data->keys) own_.given[key] = g;
  }

  // The workload kind decides which keys apply, so it is read first.
  const Option* kind_opt = find_options("workload.kind").front();
  const Given* kind_given = find_given("workload.kind");
  if (!kind_given) fail_missing(*kind_opt);
  read_given(*kind_given, *kind_opt);
  each_given([this](const std::string& path, const Given& g) {
    if (find_option(path, s_.kind)) return;
    unsigned kinds = 0;
    for (const Option* o : find_options(path)) kinds |= o->kinds;
    const std::string kind = workload_kind_names()[static_cast<std::size_t>(s_.kind)];
    std::string hint;
    for (const Option& o : scenario_options())
      if ((o.kinds & kind_bit(s_.kind)) &&
          std::find(o.counterpart_of.begin(), o.counterpart_of.end(), path) !=
              o.counterpart_of.end())
        hint = "; for kind '" + kind + "' the key is " + o.path;
    g.node.fail("does not apply to workload kind '" + kind + "' (only to: " + kinds_text(kinds) +
                ")" + hint);
  });

  std::optional<Catalog> owned;
  if (!opts_.catalog && !opts_.catalogs) owned = Catalog::load(opts_.data_dir);
  const Catalog& catalog = opts_.catalog    ? *opts_.catalog
                           : opts_.catalogs ? opts_.catalogs->get()
                                            : *owned;

  apply_options(catalog);
  resolve_nvme();
  resolve_prices(catalog);
  check_cross_fields();
  // What the profile's calibration warned about and where the drives' price and power came from
  // (config/input_notes.hpp); nothing to say when the scenario has no drives.
  if (profile_ && s_.hardware.nvme.count > 0) s_.notes = profile_notes(s_, *profile_);
  // Then what the workload's checks warned about (ScenarioCheck::warn).
  s_.notes.insert(s_.notes.end(), check_notes_.begin(), check_notes_.end());
  // GPUDirect Storage only changes how weights on NVMe reach the GPU (model/capacity.cpp,
  // sim/workloads/inference/inference.cpp, sim/workloads/serving/iteration_cost.cpp): without
  // NVMe weights both I/O paths are one configuration, and the resolved scenario (so its hash,
  // by which plan collapses equivalent points) says so.
  if (has_capability(s_, kCapWeightStream) && s_.policy.weights.nvme <= 0 &&
      s_.policy.io_path != IoPath::kAio) {
    s_.policy.io_path = IoPath::kAio;
    s_.provenance.set("policy.io_path", "aio: gds has no effect without weights on NVMe");
  }
  // FastPersist writes the legacy format (checked above); the resolved scenario says so.
  if (s_.checkpoint.writer == CheckpointWorkload::Writer::kFastPersist)
    s_.checkpoint.serialization = CheckpointWorkload::Serialization::kLegacy;
  s_.resolved_yaml = emit_resolved();
  // The hash of the resolved YAML followed by the referenced files' lines, hashed piece after
  // piece rather than over a copy of both (FNV-1a runs on from where a piece leaves it).
  s_.hash = hex_hash(fnv1a64(referenced_contents(), fnv1a64(s_.resolved_yaml)));
  if (names_relative_path(s_)) s_.portable_yaml = absolute_paths_yaml(s_);
  return std::move(s_);
}

}  // namespace

std::string stable_hash(const std::string& text) {
  return hex_hash(fnv1a64(text));
}

namespace {
// `base`: the file's keys, flattened once (ScenarioSource); null: flattened from `root`.
Scenario load_file_root(const YNode& root, const std::string& path, const LoadOptions& opts,
                        const GivenKeys* base = nullptr) {
  const std::string base_dir = std::filesystem::path(path).parent_path().string();
  Scenario s = Loader(root, path, base_dir, opts, base).run();
  s.file = path;
  return s;
}
}  // namespace

Scenario load_scenario(const std::string& path, const LoadOptions& opts) {
  return load_file_root(parse_yaml_file(path, "scenario file"), path, opts);
}

Setting::Setting(const std::string& assignment) {
  auto d = std::make_shared<SettingData>();
  d->assignment = assignment;
  try {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("--set", 0, assignment, "expected key.path=value");
    const std::string key = assignment.substr(0, eq);
    const YNode parsed = value_node(assignment.substr(eq + 1), "--set");
    expand_given(key, YNode(parsed.raw(), std::make_shared<const std::string>("--set"), key, false),
                 d->keys, std::nullopt);
    for (auto& [k, g] : d->keys) decode(g, k);
  } catch (...) {
    d->keys.clear();
    d->error = std::current_exception();
  }
  data = std::move(d);
}

// The file parsed, flattened and its values read once, for every load.
struct ScenarioSource::Prepared {
  YNode root;
  GivenKeys keys;
  std::exception_ptr error;  // parsing or flattening failed: every load throws this
};

ScenarioSource::ScenarioSource(std::string path)
    : path_(std::move(path)), text_(read_text_file(path_)) {}

std::unique_ptr<const ScenarioSource> ScenarioSource::from_text(std::string yaml,
                                                                std::string display_name) {
  std::unique_ptr<ScenarioSource> s(new ScenarioSource());
  s->path_ = std::move(display_name);
  s->text_ = std::move(yaml);
  s->is_file_ = false;
  return s;
}

std::unique_ptr<const ScenarioSource> ScenarioSource::from_tree(YNode root,
                                                                std::string display_name) {
  std::unique_ptr<ScenarioSource> s(new ScenarioSource());
  s->path_ = std::move(display_name);
  s->tree_ = std::move(root);
  s->is_file_ = false;
  return s;
}

ScenarioSource::~ScenarioSource() = default;

const ScenarioSource::Prepared& ScenarioSource::prepared() const {
  std::call_once(once_, [this] {
    auto p = std::make_unique<Prepared>();
    try {
      p->root = tree_ ? *tree_ : parse_yaml_text(*text_, path_);
      if (p->root.is_null())
        p->root.fail("empty scenario (expected a map with name, hardware, model, workload)");
      flatten(p->root, "", is_file_ ? std::filesystem::path(path_).parent_path().string() : "",
              p->keys, kind_named_in(p->root));
      for (auto& [key, g] : p->keys.given) decode(g, key);
      p->keys.index();
    } catch (...) {
      p->keys = GivenKeys{};
      p->error = std::current_exception();
    }
    prepared_ = std::move(p);
  });
  return *prepared_;
}

Scenario ScenarioSource::load(const LoadOptions& opts) const {
  if (!text_ && !tree_) return load_scenario(path_, opts);  // throws the same error it always did
  // Loads only read the prepared tree and keys, so every thread shares them; what a load adds
  // (overrides, settings) is its own.
  const Prepared& p = prepared();
  if (p.error) std::rethrow_exception(p.error);
  if (!is_file_) return Loader(p.root, path_, "", opts, &p.keys).run();
  return load_file_root(p.root, path_, opts, &p.keys);
}

Scenario load_scenario_text(const std::string& yaml, const std::string& display_name,
                            const LoadOptions& opts) {
  return load_scenario_tree(parse_yaml_text(yaml, display_name), display_name, opts);
}

Scenario load_scenario_tree(const YNode& root, const std::string& display_name,
                            const LoadOptions& opts) {
  return Loader(root, display_name, "", opts).run();
}

std::string resolved_yaml_with_absolute_paths(const Scenario& scenario) {
  if (!scenario.resolved_yaml.empty() && !names_relative_path(scenario))
    return scenario.resolved_yaml;
  return absolute_paths_yaml(scenario);
}

std::string resolved_yaml_without(const Scenario& scenario,
                                  const std::vector<std::string>& left_out) {
  // The resolved YAML is a block map written two spaces a level (config/yaml_writer.hpp), each
  // scalar key on its own line: a line whose key path is left out is dropped, every other line
  // kept as it is. Lines of a sequence ("- ...") name no key. Working on the text the load
  // already wrote costs a scan of it, where writing it again without the keys cost as much as
  // the load's own writing (a plan keys every point it simulates).
  const std::string& text = scenario.resolved_yaml;
  std::string out;
  out.reserve(text.size());
  std::vector<std::string_view> path;
  std::string joined;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string_view line(text.data() + pos, end - pos);
    bool drop = false;
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent != std::string_view::npos && indent % 2 == 0 && line[indent] != '-' &&
        line[indent] != '\n') {
      const std::size_t colon = line.find(':', indent);
      if (colon != std::string_view::npos) {
        path.resize(std::min(path.size(), indent / 2));
        path.push_back(line.substr(indent, colon - indent));
        joined.clear();
        for (const std::string_view& k : path) {
          if (!joined.empty()) joined += '.';
          joined += k;
        }
        drop = std::find(left_out.begin(), left_out.end(), joined) != left_out.end();
      }
    }
    if (!drop) out.append(line);
    pos = end;
  }
  return out;
}

}  // namespace tiersim::config
