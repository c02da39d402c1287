#include "study/accuracy.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "common/format.hpp"
#include "config/catalog.hpp"
#include "config/yaml_reader.hpp"
#include "study/validation.hpp"

namespace tiersim::validation {

const GroupAccuracy* AccuracyRecord::group(const std::string& name) const {
  for (const auto& g : groups)
    if (g.name == name) return &g;
  return nullptr;
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
  return out;
}

AccuracyRecord accuracy_record(const ValidationSummary& v) {
  AccuracyRecord out;
  for (const ValidationGroup& g : v.groups)
    out.groups.push_back({g.name, g.rows, g.mape_pct, g.out_of_sample_rows,
                          g.out_of_sample_mape_pct, g.provisional});
  // A row anchors its GPU and stack when it predicts (not a calibration row) and its scenario
  // fits (a refused row predicted nothing).
  std::set<std::string> gpus, stacks;
  for (const ValidationRow& r : v.rows) {
    if (r.calibration || r.refused) continue;
    if (!r.gpu.empty()) gpus.insert(r.gpu);
    if (!r.stack.empty()) stacks.insert(r.stack);
  }
  out.gpus.assign(gpus.begin(), gpus.end());
  out.stacks.assign(stacks.begin(), stacks.end());
  return out;
}

namespace {

// A name as a YAML scalar: always quoted, so that no name is read back as a number or a null.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string name_list(const std::vector<std::string>& names) {
  std::string out = "[";
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + quoted(names[i]);
  return out + "]";
}

// Percentages with the one decimal validate prints: the file records what validate says.
std::string pct(double v) {
  return format::fixed(v, 1);
}

}  // namespace

std::string accuracy_yaml(const AccuracyRecord& record) {
  std::string out =
      "# What `tiersim validate` found over the reference scenarios (scenarios/reference/), kept\n"
      "# for `tiersim run`, which quotes the error band of a scenario's group and names the GPU "
      "or\n"
      "# execution stack no published row runs on. Written by\n"
      "#   tiersim validate --write-accuracy scenarios/validation/accuracy.yaml --force\n"
      "# after any change that moves a prediction; a test fails while it is out of date.\n"
      "# Per group (prediction rows only): rows and in_sample_pct, every row; out_of_sample_rows "
      "and\n"
      "# out_of_sample_pct, leave-one-source-out (study/validation.hpp); provisional, validate's\n"
      "# verdict. Errors are mean absolute percentage errors.\n"
      "groups:\n";
  for (const GroupAccuracy& g : record.groups)
    out += "  - {name: " + quoted(g.name) + ", rows: " + std::to_string(g.rows) +
           ", in_sample_pct: " + pct(g.in_sample_pct) +
           ", out_of_sample_rows: " + std::to_string(g.out_of_sample_rows) +
           ", out_of_sample_pct: " + pct(g.out_of_sample_pct) +
           ", provisional: " + (g.provisional ? "true" : "false") + "}\n";
  out += "# The GPUs and stacks some prediction row that fits runs on.\n";
  out += "gpus: " + name_list(record.gpus) + "\n";
  out += "stacks: " + name_list(record.stacks) + "\n";
  return out;
}

AccuracyRecord load_accuracy(const std::string& path) {
  const config::YNode root = config::parse_yaml_file(path, "validation accuracy file");
  root.check_keys({"groups", "gpus", "stacks"});
  AccuracyRecord out;
  for (const config::YNode& g : root.require("groups", "a list of groups").items()) {
    g.check_keys({"name", "rows", "in_sample_pct", "out_of_sample_rows", "out_of_sample_pct",
                  "provisional"});
    GroupAccuracy a;
    a.name = g.require("name", "the group's name").as_string();
    a.rows = static_cast<std::size_t>(g.require("rows", "a row count").as_int(0, 1000000));
    a.in_sample_pct = g.require("in_sample_pct", "a percentage").as_double(0, 1e6);
    a.out_of_sample_rows =
        static_cast<std::size_t>(g.require("out_of_sample_rows", "a row count").as_int(0, 1000000));
    a.out_of_sample_pct = g.require("out_of_sample_pct", "a percentage").as_double(0, 1e6);
    a.provisional = g.require("provisional", "true or false").as_bool();
    out.groups.push_back(std::move(a));
  }
  for (const config::YNode& n : root.require("gpus", "a list of GPU names").items())
    out.gpus.push_back(n.as_string());
  for (const config::YNode& n : root.require("stacks", "a list of stack names").items())
    out.stacks.push_back(n.as_string());
  return out;
}

std::string accuracy_path(const std::string& data_dir) {
  return (std::filesystem::path(data_dir.empty() ? config::default_data_dir() : data_dir) /
          "validation" / "accuracy.yaml")
      .string();
}

RunAccuracy run_accuracy(const Scenario& s, const AccuracyRecord& record) {
  RunAccuracy out;
  out.group = reference_group(s, Reference{});
  if (const GroupAccuracy* g = record.group(out.group)) out.errors = *g;
  out.unvalidated = record.unanchored_parts(s);
  return out;
}

}  // namespace tiersim::validation
