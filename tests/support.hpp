#pragma once
// Helpers shared by the test files.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/scenario_loader.hpp"
#include "model/errors.hpp"

namespace tiersim::test {

// A Llama-2-7B-shaped model (Hugging Face config.json of meta-llama/Llama-2-7b-hf).
inline LlmSpec llama7b() {
  LlmSpec m;
  m.name = "llama-7b-like";
  m.family = "llama";
  m.layers = 32;
  m.hidden = 4096;
  m.ffn = 11008;
  m.heads = 32;
  m.kv_heads = 32;
  m.vocab = 32000;
  m.ffn_kind = FfnKind::kGated;
  m.max_positions = 4096;
  return m;
}


// Loads a scenario written inline in a test, with optional --set style overrides.
inline Scenario load_yaml(const std::string& yaml, std::vector<std::string> sets = {}) {
  config::LoadOptions o;
  o.overrides = std::move(sets);
  return config::load_scenario_text(yaml, "test.yaml", o);
}

// The tiersim program under test (TIERSIM_BIN, set by tests/CMakeLists.txt); "" when unset.
inline std::string tiersim_bin() {
  const char* bin = std::getenv("TIERSIM_BIN");
  return bin ? bin : "";
}

// The whole file as bytes ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs a command with /bin/sh; returns its exit status (128 + n when signal n ended it).
inline int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  if (status == -1) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// What `tiersim ARGS` prints on stdout, run from the source tree (relative paths in ARGS), with
// `scratch` as the file that catches it; the command must succeed.
inline std::string tiersim_stdout(const std::string& args, const std::string& scratch) {
  const std::string bin = tiersim_bin();
  REQUIRE_FALSE(bin.empty());
  REQUIRE(shell("cd '" + std::string(TIERSIM_SOURCE_DIR) + "' && '" + bin + "' " + args + " > '" +
                scratch + "'") == 0);
  return slurp(scratch);
}

// `s` with the first occurrence of `from` (which must be there) replaced by `to`.
inline std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

// Runs `f`, which must throw ConfigError; returns it for inspection.
template <class F>
ConfigError config_error(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError");
  throw;  // unreachable
}

// Every shipped scenario file: the YAML files under scenarios/ with a top-level `hardware` key
// (not the catalogs, device profiles, comparison, sweep or plan files), sorted.
inline std::vector<std::string> shipped_scenario_files() {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(std::string(TIERSIM_SOURCE_DIR) + "/scenarios")) {
    const std::string folder = e.path().parent_path().filename().string();
    if (e.path().extension() != ".yaml" || folder == "catalog" || folder == "profiles") continue;
    if (YAML::LoadFile(e.path().string())["hardware"]) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace tiersim::test
