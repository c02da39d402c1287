#include "study/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "config/catalog.hpp"
#include "config/yaml_reader.hpp"
#include "sim/metrics.hpp"
#include "sim/workloads/traits.hpp"
#include "study/validation.hpp"

namespace tiersim::validation {

const GroupAccuracy* AccuracyRecord::group(const std::string& name) const {
  for (const auto& g : groups)
    if (g.name == name) return &g;
  return nullptr;
}

std::vector<std::string> model_features(const Scenario& s) {
  std::vector<std::string> out;
  const LlmSpec& m = s.model;
  // Multi-head latent attention: the cache's form (per head, or the latent whole on every rank)
  // and the absorbed decode are the stack's (model/llm.hpp KvCacheForm).
  if (m.mla()) out.push_back("multi-head latent attention");
  // Sliding-window attention where a workload attends over a cache: past the window the cache
  // the stack keeps and the keys it reads are the window's (ExecutionStack::window_cache).
  if (m.sliding_layers() > 0 && has_capability(s, kCapKvCache))
    out.push_back("sliding-window attention");
  if (m.experts <= 1) return out;
  out.push_back("mixture of experts");
  // Only the routed experts fetched: a mechanism only where weights stream to the GPU.
  if (s.policy.moe_fetch == MoeFetch::kRouted && s.policy.weights.gpu < 1)
    out.push_back("routed expert fetch");
  if (m.mixed_layers()) out.push_back("dense layers between expert layers");
  return out;
}

std::vector<std::string> AccuracyRecord::unanchored_parts(const Scenario& s) const {
  std::vector<std::string> out;
  const std::string gpu = config::to_lower(s.hardware.gpu.name);
  if (std::none_of(gpus.begin(), gpus.end(),
                   [&](const std::string& g) { return config::to_lower(g) == gpu; }))
    out.push_back("GPU " + s.hardware.gpu.name);
  const std::string& stack = s.policy.stack.name;
  if (std::find(stacks.begin(), stacks.end(), stack) == stacks.end())
    out.push_back("stack " + stack);
  for (const std::string& f : model_features(s))
    if (std::find(features.begin(), features.end(), f) == features.end()) out.push_back(f);
  return out;
}

AccuracyRecord accuracy_record(const ValidationSummary& v) {
  AccuracyRecord out;
  for (const ValidationGroup& g : v.groups)
    out.groups.push_back({g.name, g.rows, g.mape_pct, g.out_of_sample_rows,
                          g.out_of_sample_mape_pct, g.provisional});
  // A row anchors its GPU and stack when it predicts (not a calibration row) and its scenario
  // fits (a refused row predicted nothing).
  std::set<std::string> gpus, stacks, features;
  for (const ValidationRow& r : v.rows) {
    if (r.calibration || r.refused) continue;
    if (!r.gpu.empty()) gpus.insert(r.gpu);
    if (!r.stack.empty()) stacks.insert(r.stack);
    features.insert(r.features.begin(), r.features.end());
  }
  out.gpus.assign(gpus.begin(), gpus.end());
  out.stacks.assign(stacks.begin(), stacks.end());
  out.features.assign(features.begin(), features.end());
  return out;
}

namespace {

// The keys of the file, as accuracy_json_text writes them; both readers below check them.
const std::vector<std::string> kTopKeys = {"about", "groups", "gpus", "stacks", "features"};
const std::vector<std::string> kGroupKeys = {
    "name", "rows", "in_sample_pct", "out_of_sample_rows", "out_of_sample_pct", "provisional"};
constexpr double kMaxPct = 1e6;
constexpr long long kMaxRows = 1000000;

// Percentages with the one decimal validate prints: the file records what validate says.
double one_decimal(double pct) {
  return std::round(pct * 10) / 10;
}

// The fast reader: nlohmann::json over the text (yaml-cpp took a fifth of the instructions of a
// whole `tiersim run` for these three kilobytes). nullopt at anything it does not expect: then
// the strict reader below reads the same text and says what is wrong, with its line.
std::optional<AccuracyRecord> read_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  for (const auto& [key, value] : j.items())
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end()) return std::nullopt;
  if (!j.contains("groups") || !j["groups"].is_array() || !j.contains("gpus") ||
      !j["gpus"].is_array() || !j.contains("stacks") || !j["stacks"].is_array() ||
      !j.contains("features") || !j["features"].is_array())
    return std::nullopt;
  if (j.contains("about") && !j["about"].is_string()) return std::nullopt;
  AccuracyRecord out;
  const auto pct = [](const nlohmann::json& v) {
    return v.is_number() && v.get<double>() >= 0 && v.get<double>() <= kMaxPct;
  };
  const auto count = [](const nlohmann::json& v) {
    return v.is_number_integer() && v.get<long long>() >= 0 && v.get<long long>() <= kMaxRows;
  };
  for (const nlohmann::json& g : j["groups"]) {
    if (!g.is_object() || g.size() != kGroupKeys.size()) return std::nullopt;
    for (const std::string& key : kGroupKeys)
      if (!g.contains(key)) return std::nullopt;
    if (!g["name"].is_string() || g["name"].get<std::string>().empty() || !count(g["rows"]) ||
        !pct(g["in_sample_pct"]) || !count(g["out_of_sample_rows"]) ||
        !pct(g["out_of_sample_pct"]) || !g["provisional"].is_boolean())
      return std::nullopt;
    out.groups.push_back({g["name"].get<std::string>(), g["rows"].get<std::size_t>(),
                          g["in_sample_pct"].get<double>(),
                          g["out_of_sample_rows"].get<std::size_t>(),
                          g["out_of_sample_pct"].get<double>(), g["provisional"].get<bool>()});
  }
  for (auto [key, names] : {std::pair{"gpus", &out.gpus}, std::pair{"stacks", &out.stacks},
                            std::pair{"features", &out.features}})
    for (const nlohmann::json& n : j[key]) {
      if (!n.is_string() || n.get<std::string>().empty()) return std::nullopt;
      names->push_back(n.get<std::string>());
    }
  return out;
}

// The strict reader: the same checks through the YAML reader (JSON is YAML), whose errors name
// file, line and key.
AccuracyRecord read_strict(const config::YNode& root) {
  root.check_keys(kTopKeys);
  if (const auto about = root.get("about")) about->as_string();
  AccuracyRecord out;
  for (const config::YNode& g : root.require("groups", "a list of groups").items()) {
    g.check_keys(kGroupKeys);
    GroupAccuracy a;
    a.name = g.require("name", "the group's name").as_string();
    a.rows = static_cast<std::size_t>(g.require("rows", "a row count").as_int(0, kMaxRows));
    a.in_sample_pct = g.require("in_sample_pct", "a percentage").as_double(0, kMaxPct);
    a.out_of_sample_rows = static_cast<std::size_t>(
        g.require("out_of_sample_rows", "a row count").as_int(0, kMaxRows));
    a.out_of_sample_pct = g.require("out_of_sample_pct", "a percentage").as_double(0, kMaxPct);
    a.provisional = g.require("provisional", "true or false").as_bool();
    out.groups.push_back(std::move(a));
  }
  for (const config::YNode& n : root.require("gpus", "a list of GPU names").items())
    out.gpus.push_back(n.as_string());
  for (const config::YNode& n : root.require("stacks", "a list of stack names").items())
    out.stacks.push_back(n.as_string());
  for (const config::YNode& n : root.require("features", "a list of model features").items())
    out.features.push_back(n.as_string());
  return out;
}

}  // namespace

std::string accuracy_json_text(const AccuracyRecord& record) {
  nlohmann::ordered_json j;
  j["about"] =
      "What `tiersim validate` found over the reference scenarios (scenarios/reference/), kept for "
      "`tiersim run`, which quotes the error band of a scenario's group and names the GPU, "
      "execution stack or model mechanism no published row runs on. Written by `tiersim validate "
      "--write-accuracy "
      "scenarios/validation/accuracy.json --force` after any change that moves a prediction; a "
      "test fails while it is out of date. Per group (prediction rows only): rows and "
      "in_sample_pct, every row; out_of_sample_rows and out_of_sample_pct, leave-one-source-out "
      "(study/validation.hpp); provisional, validate's verdict. Errors are mean absolute "
      "percentage errors, in percent. gpus and stacks: those some prediction row that fits runs "
      "on; features: the model mechanisms (study/accuracy.hpp model_features) some such row "
      "has.";
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const GroupAccuracy& g : record.groups)
    groups.push_back({{"name", g.name},
                      {"rows", g.rows},
                      {"in_sample_pct", one_decimal(g.in_sample_pct)},
                      {"out_of_sample_rows", g.out_of_sample_rows},
                      {"out_of_sample_pct", one_decimal(g.out_of_sample_pct)},
                      {"provisional", g.provisional}});
  j["groups"] = std::move(groups);
  j["gpus"] = record.gpus;
  j["stacks"] = record.stacks;
  j["features"] = record.features;
  return j.dump(2) + "\n";
}

AccuracyRecord load_accuracy(const std::string& path) {
  const std::string text = config::read_input_file(path, "validation accuracy file");
  if (auto record = read_json(text)) return std::move(*record);
  return read_strict(config::parse_yaml_text(text, path));
}

std::string accuracy_path(const std::string& data_dir) {
  return (std::filesystem::path(data_dir.empty() ? config::default_data_dir() : data_dir) /
          "validation" / "accuracy.json")
      .string();
}

std::optional<AccuracyRecord> shipped_accuracy(const std::string& data_dir) {
  const std::string path = accuracy_path(data_dir);
  if (!std::filesystem::exists(path)) return std::nullopt;
  return load_accuracy(path);
}

RunAccuracy run_accuracy(const Scenario& s, const AccuracyRecord& record) {
  RunAccuracy out;
  out.group = reference_group(s, Reference{});
  if (const GroupAccuracy* g = record.group(out.group)) out.errors = *g;
  out.unvalidated = record.unanchored_parts(s);
  out.node_energy_group = std::string(sim::metric::kEnergyJ.validation_group);
  out.gpu_energy_group = std::string(sim::metric::kEnergyJGpu.validation_group);
  if (const GroupAccuracy* g = record.group(out.node_energy_group)) out.node_energy = *g;
  if (const GroupAccuracy* g = record.group(out.gpu_energy_group)) out.gpu_energy = *g;
  return out;
}

}  // namespace tiersim::validation
