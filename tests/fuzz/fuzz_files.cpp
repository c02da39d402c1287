// Fuzz target for the files a scenario references, read from disk as tiersim reads them: request
// traces (Azure's TIMESTAMP,ContextTokens,GeneratedTokens and the plain arrival_s,prompt_tokens,
// output_tokens CSV) and device profiles. Each input is written to a scratch file, then
//  - read as a trace (sim::read_trace); an accepted trace must hold only requests the simulator
//    can run (finite arrivals from 0 within the trace span, prompts >= 1, outputs >= 1), and a
//    short serving run on it must end;
//  - read as a device profile (read_device_profile from the file), and loaded by a scenario that
//    names it (hardware.nvme.profile), whose resolved YAML must load back to the same hash.
//  - read as a Mooncake JSONL trace and as a conversation CSV (the prefix-caching formats), whose
//    accepted requests must be runnable;
//  - read as a Hugging Face config.json (parse_hf_config), and loaded by a scenario that names it
//    (model.hf_config), whose resolved YAML must load back to the same hash.
// As in fuzz_config.cpp, a reader may reject an input only with a typed tiersim::Error; another
// exception, a crash or a sanitizer report is a finding. Builds with libFuzzer or with
// standalone_driver.cpp (tests/fuzz/README.md).
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/catalog.hpp"
#include "config/device_profile.hpp"
#include "config/hf_config.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/serving/prefix_stream.hpp"
#include "sim/workloads/serving/request_stream.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

using tiersim::config::Catalog;

const Catalog& catalog() {
  static const Catalog c = Catalog::load();
  return c;
}

// One scratch folder per process (removed at exit), holding the input as a trace and a profile.
struct Scratch {
  Scratch() {
    dir = std::filesystem::temp_directory_path() /
          ("tiersim-fuzz-files-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::filesystem::path dir;
};
const Scratch& scratch() {
  static const Scratch s;
  return s;
}

// Llama-3-8B on one H100 (context 8192): a serving run of a few requests takes milliseconds.
std::string serving_scenario(const std::string& trace) {
  return "name: fuzz\nhardware: {gpu: {model: H100-SXM}}\nmodel: {name: llama-3-8b}\n"
         "workload: {kind: serving, trace: \"" + trace + "\", requests: 16}\n";
}

std::string profile_scenario(const std::string& profile) {
  return "name: fuzz\nhardware: {gpu: {model: H100-SXM}, nvme: {profile: \"" + profile +
         "\", count: 2}}\nmodel: {name: llama-3-8b}\n"
         "workload: {kind: inference, batch: 1, prompt_tokens: 16, gen_tokens: 2}\n"
         "policy: {weights: nvme}\n";
}

// One small inference pass on one H200 of a model given by its config.json: loading it runs the
// capacity check on whatever sizes the file holds.
std::string hf_scenario(const std::string& config_json) {
  return "name: fuzz\nhardware: {gpu: {model: H200}}\nmodel: {hf_config: \"" + config_json +
         "\"}\nworkload: {kind: inference, batch: 1, prompt_tokens: 16, gen_tokens: 2}\n";
}

}  // namespace

namespace tiersim::fuzz {

int run_input(const std::uint8_t* data, std::size_t size) {
  const std::string trace = (scratch().dir / "input.csv").string();
  const std::string profile = (scratch().dir / "input.yaml").string();
  const std::string config_json = (scratch().dir / "input.json").string();
  for (const std::string* path : {&trace, &profile, &config_json})
    std::ofstream(*path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  config::LoadOptions opts;
  opts.catalog = &catalog();
  int accepted = 0;

  // What a trace reader accepts must be runnable: finite arrivals from 0 within the trace span
  // (the NaN seconds of issue 28 passed the reader and made the simulation spin forever), requests
  // the context holds, and (prefix traces) no more block ids than the request's tokens span.
  auto check_runnable = [&](const char* reader, const std::vector<sim::Request>& requests,
                            int block_tokens) {
    for (const auto& r : requests) {
      if (!std::isfinite(r.arrival_s) || r.arrival_s < 0 || r.arrival_s > 2e8)
        finding(reader, "accepted an arrival of " + std::to_string(r.arrival_s) + " s");
      if (r.prompt_tokens < 1 || r.output_tokens < 1 || r.prompt_tokens + r.output_tokens > 8192)
        finding(reader, "accepted a request the context cannot hold");
      const auto tokens = static_cast<std::size_t>(r.prompt_tokens) + r.output_tokens;
      if (r.block_hashes.size() * static_cast<std::size_t>(block_tokens) > tokens + block_tokens)
        finding(reader, "accepted more block ids than the request's tokens span");
    }
  };

  accepted += accepts("request trace", [&] {
    check_runnable("request trace", sim::read_trace(trace, 64, 8192), 1);
    const Scenario s = config::load_scenario_text(serving_scenario(trace), "fuzz.yaml", opts);
    sim::simulate(s);
  });

  // The prefix-caching traces (issue 32): Mooncake's JSONL with hash ids per 512-token block and
  // the conversation CSV.
  accepted += accepts("Mooncake trace", [&] {
    check_runnable("Mooncake trace", sim::read_mooncake_trace(trace, 64, 8192, 512), 512);
  });
  accepted += accepts("conversation trace", [&] {
    check_runnable("conversation trace", sim::read_conversation_trace(trace, 64, 8192, 16), 16);
  });

  accepted += accepts("device profile file", [&] {
    read_device_profile(profile);
    const Scenario s = config::load_scenario_text(profile_scenario(profile), "fuzz.yaml", opts);
    const Scenario again = config::load_scenario_text(s.resolved_yaml, "resolved.yaml", opts);
    if (again.hash != s.hash)
      finding("device profile file", "the resolved YAML loads back into a different scenario");
  });
  // The model's config.json (issue 30): a number beyond a double's range once came out of the
  // JSON parser as an untyped exception ("internal error").
  accepted += accepts("config.json", [&] {
    config::read_hf_config(config_json);
    const Scenario s = config::load_scenario_text(hf_scenario(config_json), "fuzz.yaml", opts);
    const Scenario again = config::load_scenario_text(s.resolved_yaml, "resolved.yaml", opts);
    if (again.hash != s.hash)
      finding("config.json", "the resolved YAML loads back into a different scenario");
  });
  return accepted;
}

}  // namespace tiersim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tiersim::fuzz::run_input(data, size);
  return 0;
}
