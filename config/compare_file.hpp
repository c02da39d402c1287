#pragma once
// Comparison files (top-level key `compare:`; format in scenarios/README.md, "Comparison files"):
// several configurations, each a scenario file or an inline scenario plus `set:` overrides. Read
// here once for every command that takes them (compare, sensitivity, breakeven). Strict: every
// error names the file, the line and the key.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/scenario_loader.hpp"
#include "config/yaml_reader.hpp"
#include "model/scenario.hpp"

namespace tiersim::config {

// One configuration to run, before loading.
struct VariantSpec {
  std::string name;            // column title; empty = the scenario's name
  std::string file;            // scenario file, or empty for an inline scenario
  // An inline scenario: the map as parsed from the comparison file, so that an error in it names
  // the file's own line; or, for a scenario given as text (the Python module's dicts, a stored
  // run's resolved YAML), that text. Loads read the tree where there is one.
  std::optional<YNode> inline_tree;
  std::string inline_yaml;
  std::string display;         // where it came from, for error messages
  std::string note;            // free text shown under the table
  std::vector<Override> sets;  // the comparison file's `set:` entries (common ones first)
};

struct Comparison {
  std::string name;
  std::string description;
  std::string baseline;  // variant name; empty = first
  std::vector<VariantSpec> variants;
};

// Reads a parsed comparison file (the root map with its one key `compare`).
Comparison read_comparison(const YNode& root);

// Each of `files` is a scenario or a comparison file; the variants of all of them, in order, with
// the baseline (when a single comparison file names one) moved to the front. The name,
// description and baseline are those of the comparison file when it is the only file.
Comparison read_compare_inputs(const std::vector<std::string>& files);

// One input of a comparison: a file, or YAML/JSON text (the Python module's dicts) shown as
// `display` in messages, whose relative `file:` entries are relative to the working directory.
struct CompareInput {
  std::string path_or_text;
  bool is_file = true;
  std::string display = "<dict>";
};
// read_compare_inputs for files and texts mixed, by the same rules.
Comparison read_compare_inputs(const std::vector<CompareInput>& inputs);

// The variant's scenario: `opts` (command-line --set, data folder, catalog) with the variant's
// `set:` entries applied before `opts.overrides`.
Scenario load_variant(const VariantSpec& spec, const LoadOptions& opts);

// A variant read once and loaded many times, each with a few more overrides (the sensitivity and
// break-even studies): load(extra) gives what load_variant(spec, opts) gives with `extra` appended
// to opts.overrides, the scenario read and checked once and `extra` applied as typed settings.
class VariantSource {
 public:
  VariantSource(const VariantSpec& spec, const LoadOptions& opts);
  Scenario load(const std::vector<std::string>& extra = {}) const;

 private:
  LoadOptions opts_;  // with the variant's `set:` entries
  std::unique_ptr<const ScenarioSource> source_;
};

// The variant called `name`; ConfigError naming the variants there are when none is.
const VariantSpec& find_variant(const Comparison& cmp, const std::string& name,
                                const std::string& what);

}  // namespace tiersim::config
