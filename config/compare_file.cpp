#include "config/compare_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "model/errors.hpp"

namespace tiersim::config {
namespace {

// `set: {key.path: value}`: each entry keeps its node, so errors name this file, its line and key.
std::vector<Override> read_sets(const std::optional<YNode>& n) {
  std::vector<Override> out;
  if (!n || n->is_null()) return out;
  if (!n->is_map()) n->fail("expected a map of scenario key paths to values, got " + n->describe());
  for (auto& [key, value] : n->entries()) out.push_back({key, value});
  return out;
}

std::string relative_to(const std::string& base_file, const std::string& rel) {
  namespace fs = std::filesystem;
  if (fs::path(rel).is_absolute()) return rel;
  return (fs::path(base_file).parent_path() / rel).lexically_normal().string();
}

}  // namespace

Comparison read_comparison(const YNode& root) {
  root.check_keys({"compare"});
  const YNode c = root.require("compare", "a map with variants");
  if (!c.is_map()) c.fail("expected a map with variants, got " + c.describe());
  c.check_keys({"name", "description", "baseline", "set", "variants"});
  Comparison cmp;
  if (auto n = c.get("name")) cmp.name = n->scalar("a text value");
  if (auto n = c.get("description")) cmp.description = n->scalar("a text value");
  if (auto n = c.get("baseline")) cmp.baseline = n->scalar("a text value");
  const auto common = read_sets(c.get("set"));
  const auto vs = c.get("variants");
  if (!vs || !vs->is_sequence() || vs->items().empty())
    (vs ? *vs : c).fail("expected a non-empty list of variants under compare.variants");
  for (const YNode& v : vs->items()) {
    if (!v.is_map())
      v.fail("expected a variant map (name, scenario or file, set), got " + v.describe());
    v.check_keys({"name", "file", "base", "scenario", "set", "note"});
    VariantSpec spec;
    spec.display = v.file() + ": " + v.path();
    if (auto n = v.get("name")) {
      spec.name = n->scalar("a text value");
      // --variant, --variants and baseline: choose by name, and the table's columns show it.
      if (std::any_of(cmp.variants.begin(), cmp.variants.end(),
                      [&](const VariantSpec& o) { return o.name == spec.name; }))
        n->fail("'" + spec.name +
                "' names an earlier variant too; each variant needs its own name");
    }
    if (auto n = v.get("note")) spec.note = n->scalar("a text value");
    const auto file = v.get("file"), base = v.get("base"), inline_map = v.get("scenario");
    if ((file ? 1 : 0) + (base ? 1 : 0) + (inline_map ? 1 : 0) != 1)
      v.fail("give exactly one of file: (alias base:) or scenario: (inline map)");
    if (inline_map) {
      // A path here is a scenario file meant for file:.
      if (!inline_map->is_map())
        inline_map->fail("expected a map (an inline scenario), got " + inline_map->describe() +
                         (inline_map->is_scalar()
                              ? "; to name a scenario file, write file: " + inline_map->as_string()
                              : std::string()));
      spec.inline_tree = inline_map->as_root();  // its keys are scenario keys
    } else {
      spec.file = relative_to(v.file(), (file ? *file : *base).as_string());
    }
    spec.sets = common;
    for (auto& s : read_sets(v.get("set"))) spec.sets.push_back(std::move(s));
    cmp.variants.push_back(std::move(spec));
  }
  if (!cmp.baseline.empty() &&
      std::none_of(cmp.variants.begin(), cmp.variants.end(),
                   [&](const VariantSpec& v) { return v.name == cmp.baseline; }))
    c.require("baseline", "")
        .fail("'" + cmp.baseline +
              "' names no variant (variants need a name: to be chosen as "
              "baseline)");
  return cmp;
}

Comparison read_compare_inputs(const std::vector<std::string>& files) {
  std::vector<CompareInput> inputs;
  for (const auto& f : files) inputs.push_back({f, true});
  return read_compare_inputs(inputs);
}

Comparison read_compare_inputs(const std::vector<CompareInput>& inputs) {
  Comparison cmp;
  for (const auto& in : inputs) {
    const YNode root = in.is_file ? parse_yaml_file(in.path_or_text, "scenario or comparison file")
                                  : parse_yaml_text(in.path_or_text, in.display);
    if (root.is_map() && root.raw()["compare"]) {
      Comparison c = read_comparison(root);
      if (inputs.size() == 1) {
        cmp.name = c.name;
        cmp.description = c.description;
        cmp.baseline = c.baseline;
      }
      for (auto& v : c.variants) cmp.variants.push_back(std::move(v));
    } else {
      VariantSpec v;
      if (in.is_file) {
        v.file = in.path_or_text;
        v.display = in.path_or_text;
      } else {
        v.inline_yaml = in.path_or_text;
        v.display = in.display;
      }
      cmp.variants.push_back(std::move(v));
    }
  }
  // The baseline goes first: ratios are against the first row.
  if (!cmp.baseline.empty()) {
    auto it = std::find_if(cmp.variants.begin(), cmp.variants.end(),
                           [&](const VariantSpec& v) { return v.name == cmp.baseline; });
    std::rotate(cmp.variants.begin(), it, it + 1);
  }
  return cmp;
}

Scenario load_variant(const VariantSpec& spec, const LoadOptions& opts) {
  LoadOptions load = opts;
  load.file_overrides = spec.sets;
  load.file_overrides.insert(load.file_overrides.end(), opts.file_overrides.begin(),
                             opts.file_overrides.end());
  if (!spec.file.empty()) return load_scenario(spec.file, load);
  return spec.inline_tree ? load_scenario_tree(*spec.inline_tree, spec.display, load)
                          : load_scenario_text(spec.inline_yaml, spec.display, load);
}

VariantSource::VariantSource(const VariantSpec& spec, const LoadOptions& opts) : opts_(opts) {
  opts_.file_overrides = spec.sets;
  opts_.file_overrides.insert(opts_.file_overrides.end(), opts.file_overrides.begin(),
                              opts.file_overrides.end());
  if (!spec.file.empty())
    source_ = std::make_unique<const ScenarioSource>(spec.file);
  else if (spec.inline_tree)
    source_ = ScenarioSource::from_tree(*spec.inline_tree, spec.display);
  else
    source_ = ScenarioSource::from_text(spec.inline_yaml, spec.display);
}

Scenario VariantSource::load(const std::vector<std::string>& extra) const {
  if (extra.empty()) return source_->load(opts_);
  LoadOptions o = opts_;
  for (const std::string& e : extra) o.settings.emplace_back(e);
  return source_->load(o);
}

const VariantSpec& find_variant(const Comparison& cmp, const std::string& name,
                                const std::string& what) {
  std::vector<std::string> names;
  for (const auto& v : cmp.variants) {
    if (v.name == name || (v.name.empty() && v.file == name)) return v;
    names.push_back(v.name.empty() ? v.display : v.name);
  }
  throw ConfigError(what, 0, name,
                    "names no variant" + did_you_mean(name, names) + "; variants: " + join(names));
}

}  // namespace tiersim::config
