#pragma once
// Builds a fully resolved Scenario from a scenario YAML file: strict parsing against the option
// table (config/options.hpp), catalog lookups, inline and --set overrides, defaults, cross-field
// checks, provenance, canonical resolved YAML and its hash. Throws ConfigError / CatalogError.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/catalog.hpp"
#include "config/yaml_reader.hpp"
#include "model/scenario.hpp"

namespace tiersim::config {

// One `set:` entry of a comparison file: errors about it name that file, its line and the key.
struct Override {
  std::string key;  // scenario key path
  YNode value;
};

struct LoadOptions {
  std::vector<Override> file_overrides;  // applied first, in order
  std::vector<std::string> overrides;  // "key.path=value" (value is YAML), applied before checks
  std::string data_dir;                // folder holding catalog/; empty = default_data_dir()
  const Catalog* catalog = nullptr;    // reuse an already loaded catalog (sweeps); overrides data_dir
};

Scenario load_scenario(const std::string& path, const LoadOptions& opts = {});
// `display_name` names the text in error messages; relative profile paths resolve against the
// working directory.
Scenario load_scenario_text(const std::string& yaml, const std::string& display_name,
                            const LoadOptions& opts = {});
// The same from already parsed text. The loader only reads the tree, so one parse can serve
// several loads (the fuzz target parses each input once for every reader).
Scenario load_scenario_tree(const YNode& root, const std::string& display_name,
                            const LoadOptions& opts = {});

// A scenario file read once and then loaded many times with different overrides (sweep and plan
// points): load(opts) gives exactly what load_scenario(path, opts) gives, without reading the
// file again. Loads may run on several threads. Parsed trees are kept for reuse, each used by one
// load at a time (a yaml-cpp tree is not safe to read from two threads: lookups add entries), so
// the text is parsed about once per thread instead of once per point.
class ScenarioSource {
 public:
  explicit ScenarioSource(std::string path);
  ~ScenarioSource();
  ScenarioSource(const ScenarioSource&) = delete;
  ScenarioSource& operator=(const ScenarioSource&) = delete;
  const std::string& path() const { return path_; }
  Scenario load(const LoadOptions& opts = {}) const;

 private:
  struct TreePool;
  std::string path_;
  std::optional<std::string> text_;  // nullopt: unreadable; load() reports it as load_scenario
  std::unique_ptr<TreePool> pool_;
};

// FNV-1a 64 of the text, as 16 lower-case hex digits (stable across runs and platforms).
std::string stable_hash(const std::string& text);

// The resolved YAML of `scenario` for a file written into another folder (`plan --out`): every
// path key (a request trace, a device profile) made absolute. The loader resolves such paths
// against the folder of the file that names them, so a path relative to the base scenario's
// folder would name another file, or none, from the written file's folder.
std::string resolved_yaml_with_absolute_paths(const Scenario& scenario);

}  // namespace tiersim::config
