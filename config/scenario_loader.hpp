#pragma once
// Builds a fully resolved Scenario from a scenario YAML file: strict parsing against the option
// table (config/options.hpp), catalog lookups, inline and --set overrides, defaults, cross-field
// checks, provenance, canonical resolved YAML and its hash. Throws ConfigError / CatalogError.
#include <memory>
#include <mutex>
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

struct SettingData;

// One `key.path=value` assignment, as --set writes it (a section may be given as a map of its
// keys), read and checked once and kept as typed values: studies apply the same setting to many
// points (a sweep axis value, a plan's rate) without reading YAML again. Applied through
// LoadOptions::settings, it gives exactly what the same text in LoadOptions::overrides gives,
// errors included (an invalid assignment throws where the load applies it).
struct Setting {
  explicit Setting(const std::string& assignment);
  std::shared_ptr<const SettingData> data;
};

struct LoadOptions {
  std::vector<Override> file_overrides;  // applied first, in order
  std::vector<std::string> overrides;  // "key.path=value" (value is YAML), applied before checks
  std::vector<Setting> settings;       // applied after `overrides`, in order
  std::string data_dir;                // folder holding catalog/; empty = default_data_dir()
  const Catalog* catalog = nullptr;    // reuse an already loaded catalog (sweeps); overrides data_dir
  const CatalogOnce* catalogs = nullptr;  // else: the catalogs a command loads once for its loads
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

// A scenario file read once and then loaded many times with different overrides and settings
// (sweep and plan points, capacity rates): load(opts) gives exactly what load_scenario(path, opts)
// gives. The file is parsed, checked against the option table and its values read into typed
// values once, at the first load; each load then starts from those values and applies its own
// (the table's setters), so no load reads YAML. Loads may run on several threads: they share the
// prepared values and only read the parsed tree for error positions (a yaml-cpp lookup may add
// entries, so no load looks keys up in it).
class ScenarioSource {
 public:
  explicit ScenarioSource(std::string path);
  // Scenario text that is no file: load(opts) gives what load_scenario_text(yaml, display_name,
  // opts) gives.
  static std::unique_ptr<const ScenarioSource> from_text(std::string yaml,
                                                          std::string display_name);
  // An already parsed scenario map (a comparison file's inline scenario): load(opts) gives what
  // load_scenario_tree(root, display_name, opts) gives.
  static std::unique_ptr<const ScenarioSource> from_tree(YNode root, std::string display_name);
  ~ScenarioSource();
  ScenarioSource(const ScenarioSource&) = delete;
  ScenarioSource& operator=(const ScenarioSource&) = delete;
  const std::string& path() const { return path_; }
  Scenario load(const LoadOptions& opts = {}) const;

 private:
  struct Prepared;
  const Prepared& prepared() const;
  ScenarioSource() = default;
  std::string path_;                 // the file, or the text's display name
  std::optional<std::string> text_;  // nullopt: unreadable (or from_tree); load() reports an
                                     // unreadable file as load_scenario does
  std::optional<YNode> tree_;        // from_tree: parsed already
  bool is_file_ = true;
  mutable std::once_flag once_;
  mutable std::unique_ptr<const Prepared> prepared_;
};

// FNV-1a 64 of the text, as 16 lower-case hex digits (stable across runs and platforms).
std::string stable_hash(const std::string& text);

// The resolved YAML of `scenario` for a file written into another folder (`plan --out`) or kept
// in the results database: every path it names (a config.json, a request trace, a device profile)
// made absolute. The loader resolves such paths against the folder of the file that names them,
// so a path relative to the base scenario's folder would name another file, or none, from the
// written file's folder. The scenario's own resolved_yaml when it names no relative path.
std::string resolved_yaml_with_absolute_paths(const Scenario& scenario);

// The resolved YAML of `scenario` (Scenario::resolved_yaml, as loaded) without the lines of the
// scalar keys in `left_out` (full key paths): equal for two scenarios exactly when they differ in
// those keys alone. The key of a study's memo of workload runs (study/planner.cpp).
std::string resolved_yaml_without(const Scenario& scenario,
                                  const std::vector<std::string>& left_out);

}  // namespace tiersim::config
