// The scenario loader: each kind of bad input gives one clear error; overrides, defaults,
// provenance and the resolved-YAML round trip.
#include <catch2/catch.hpp>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <thread>
#include <fstream>
#include <utility>

#include "config/device_profile.hpp"
#include "config/options.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "sim/economics.hpp"
#include "tests/support.hpp"

namespace config_scenario_loader_test {

using namespace tiersim;
using namespace tiersim::config;
using tiersim::test::config_error;
using tiersim::test::replace;

namespace {

const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";

const char* kBase =
    "name: llama3-70b-h200-4x-gen5-gds\n"            // 1
    "hardware:\n"                                     // 2
    "  gpu: {model: H200, count: 1}\n"                // 3
    "  nvme: {model: generic-gen5, count: 4}\n"       // 4
    "model: {name: llama-3-70b}\n"                    // 5
    "workload:\n"                                     // 6
    "  kind: inference\n"                             // 7
    "  batch: 96\n"                                   // 8
    "  prompt_tokens: 512\n"                          // 9
    "  gen_tokens: 32\n"                              // 10
    "policy:\n"                                       // 11
    "  weights: nvme\n"                               // 12
    "  io_path: gds\n";                               // 13

LoadOptions with_data(std::vector<std::string> overrides = {}) {
  LoadOptions o;
  o.data_dir = kData;
  o.overrides = std::move(overrides);
  return o;
}

Scenario load(const std::string& text, std::vector<std::string> overrides = {}) {
  return load_scenario_text(text, "s.yaml", with_data(std::move(overrides)));
}


}  // namespace

TEST_CASE("a valid scenario resolves catalog entries and defaults", "[config][scenario]") {
  const Scenario s = load(kBase);
  CHECK(s.name == "llama3-70b-h200-4x-gen5-gds");
  CHECK(s.hardware.gpu.name == "H200");
  CHECK(s.hardware.gpu.memory_mib > 100000);
  CHECK(s.hardware.host.name == "generic-2s-ddr5");  // the default host
  CHECK(s.hardware.nvme.count == 4);
  CHECK(s.hardware.nvme.drive.name == "generic-gen5");
  CHECK(s.hardware.nvme.model.read.peak_gbps > 0);  // datasheet-derived model
  CHECK(s.model.name == "llama-3-70b");
  CHECK(s.model.layers == 80);
  CHECK(s.kind == WorkloadKind::kInference);
  CHECK(s.inference.batch == 96);
  CHECK(s.policy.weights.nvme == 1.0);
  CHECK(s.policy.io_path == IoPath::kGds);
  CHECK(s.policy.aio.block_size_bytes == 16.0 * 1024 * 1024);  // default from the table
  CHECK(s.policy.aio.queue_depth == 64);
  CHECK(s.economics.pue == Approx(1.3));
  CHECK(s.economics.prices.gpu.known());
  CHECK(s.economics.prices.drive.known());
  CHECK(s.economics.prices.platform.known());
  CHECK(s.provenance.at("hardware.gpu.memory_mib").rfind("catalog: ", 0) == 0);
  CHECK(s.provenance.at("model.layers").rfind("catalog: ", 0) == 0);
  CHECK(s.hash.size() == 16);
  CHECK_FALSE(s.resolved_yaml.empty());
}

TEST_CASE("syntax error names the file and line", "[config][scenario]") {
  const auto e = config_error([] { load("name: x\nhardware: {gpu: [H200\nmodel: {}\n"); });
  CHECK(e.file() == "s.yaml");
  CHECK(e.line() >= 2);
  CHECK_THAT(e.what(), Catch::Contains("YAML syntax error"));
}

TEST_CASE("unknown key: suggestion, file, line, path, valid keys", "[config][scenario]") {
  const auto e = config_error([] { load(replace(kBase, "  prompt_tokens:", "  promt_tokens:")); });
  CHECK(e.file() == "s.yaml");
  CHECK(e.line() == 9);
  CHECK(e.key_path() == "workload.promt_tokens");
  CHECK_THAT(e.what(), Catch::Contains("did you mean 'prompt_tokens'?"));
  CHECK_THAT(e.what(), Catch::Contains("gen_tokens"));
  CHECK_THAT(e.what(), Catch::StartsWith("s.yaml:9: workload.promt_tokens: unknown key"));

  const auto top = config_error([] { load(std::string(kBase) + "polcy: {}\n"); });
  CHECK_THAT(top.what(), Catch::Contains("did you mean 'policy'?"));
}

TEST_CASE("an unknown key lists and suggests the keys of the scenario's workload kind",
          "[config][scenario]") {
  // kBase is an inference scenario: its workload keys are four, where every kind's are over 70.
  const auto file =
      config_error([] { load(replace(kBase, "  prompt_tokens:", "  promt_tokens:")); });
  CHECK_THAT(file.what(), Catch::EndsWith("valid keys in 'workload': kind, batch, prompt_tokens, "
                                          "gen_tokens"));
  const auto set = config_error([] { load(kBase, {"workload.gen_token=3"}); });
  CHECK_THAT(set.what(),
             Catch::Contains("did you mean 'workload.gen_tokens'?") &&
                 Catch::EndsWith("valid keys in 'workload' for workload kind "
                                 "'inference': kind, batch, prompt_tokens, gen_tokens"));
  // A key of another kind is not unknown: it is refused as not applying, naming its kinds.
  CHECK_THROWS_WITH(load(kBase, {"workload.arrival_rate=1"}),
                    Catch::Contains("does not apply to workload kind 'inference'"));
  // A section given as a map lists its keys of the kind too.
  const auto section = config_error([] { load(kBase, {"workload={kind: inference, bach: 2}"}); });
  CHECK_THAT(section.what(), Catch::Contains("did you mean 'batch'?") &&
                                 Catch::EndsWith("kind, batch, prompt_tokens, gen_tokens"));
}

TEST_CASE("a sweep, plan or comparison file where a scenario belongs is named as such",
          "[config][scenario]") {
  const auto sweep =
      config_error([] { load("name: s\nbase: b.yaml\ngrid:\n  workload.batch: [1]\n"); });
  CHECK(sweep.key_path() == "grid");
  CHECK_THAT(sweep.what(), Catch::Contains("this is a sweep or plan file (it has grid:)") &&
                               Catch::Contains("tiersim sweep"));
  const auto cmp = config_error([] { load("name: c\ncompare:\n  - {name: a, file: a.yaml}\n"); });
  CHECK_THAT(cmp.what(),
             Catch::Contains("this is a comparison file") && Catch::Contains("tiersim compare"));
}

TEST_CASE("wrong type", "[config][scenario]") {
  const auto e = config_error([] { load(replace(kBase, "batch: 96", "batch: abc")); });
  CHECK(e.line() == 8);
  CHECK(e.key_path() == "workload.batch");
  CHECK_THAT(e.what(), Catch::Contains("expected a positive integer, got 'abc'"));
  CHECK_THROWS_WITH(load(replace(kBase, "io_path: gds", "io_path: dgs")),
                    Catch::Contains("did you mean 'gds'?"));
  CHECK_THROWS_WITH(load(kBase, {"policy.weight_bits=5"}), Catch::Contains("one of 16, 8, 4"));
  CHECK_THROWS_WITH(load(kBase, {"economics.duty_cycle=1.5"}), Catch::Contains("out of range"));
}

TEST_CASE("missing required keys", "[config][scenario]") {
  const auto e = config_error([] { load(replace(kBase, "  batch: 96\n", "")); });
  CHECK(e.key_path() == "workload.batch");
  CHECK(e.line() == 7);  // the workload map starts on the line of its first key
  CHECK_THAT(e.what(), Catch::Contains("missing required key"));
  CHECK_THROWS_WITH(load(replace(kBase, "model: {name: llama-3-70b}\n", "")),
                    Catch::Contains("model.name: missing required key"));
  CHECK_THROWS_WITH(load(replace(kBase, "  kind: inference\n", "")),
                    Catch::Contains("workload.kind: missing required key"));
  // One field of the model without a name or a config.json left the rest of its shape at zero,
  // and the run divided by its heads (SIGFPE; found by tests/fuzz/fuzz_python.py).
  CHECK_THROWS_WITH(load(replace(kBase, "model: {name: llama-3-70b}\n", "model: {layers: 2}\n")),
                    Catch::Contains("model.name: missing required key"));
  CHECK_THROWS_WITH(load(replace(kBase, "model: {name: llama-3-70b}\n", "")),
                    Catch::Contains("model.name: missing required key"));
}

TEST_CASE("non-positive sizes and counts", "[config][scenario]") {
  CHECK_THROWS_WITH(load(kBase, {"policy.aio.block_size=0"}),
                    Catch::Contains("expected a positive size"));
  CHECK_THROWS_WITH(load(kBase, {"policy.aio.block_size=-4KiB"}),
                    Catch::Contains("expected a positive size"));
  CHECK_THROWS_WITH(load(kBase, {"hardware.gpu.count=0"}),
                    Catch::Contains("expected an integer > 0"));
  CHECK_THROWS_WITH(load(kBase, {"hardware.gpu.memory_mib=0"}),
                    Catch::Contains("expected a positive number"));
  const std::string io =
      "name: io\nhardware: {gpu: {model: H200}, nvme: {model: generic-gen5, count: 1}}\n"
      "model: {name: llama-3-8b}\nworkload: {kind: io, size: 0}\n";
  CHECK_THROWS_WITH(load(io), Catch::Contains("workload.size: expected a positive size"));
  const Scenario s = load(io, {"workload.size=1.5GB", "workload.direction=write"});
  CHECK(s.io.bytes == 1.5e9);
  CHECK(s.io.write);
}

TEST_CASE("a PSU efficiency level that is not an 80 PLUS level is refused at load",
          "[config][scenario][power]") {
  CHECK_THROWS_WITH(load(kBase, {"hardware.host.psu_efficiency=diamond"}),
                    Catch::Contains("hardware.host.psu_efficiency") &&
                        Catch::Contains("bronze, silver, gold, platinum, titanium"));
  // A catalog host's PSUs, or a level set inline on a host that has none, load.
  CHECK(load(kBase, {"hardware.host.model=dgx-h100"}).hardware.host.psu_count == 6);
  CHECK(load(kBase, {"hardware.host.psu_efficiency=Platinum"}).hardware.host.psu_efficiency ==
        "Platinum");
}

TEST_CASE("unknown catalog names list the valid names", "[config][scenario]") {
  try {
    load(replace(kBase, "model: H200", "model: A100"));
    FAIL("no error");
  } catch (const CatalogError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::StartsWith("s.yaml:3: hardware.gpu.model: unknown GPU 'A100'"));
    CHECK_THAT(msg, Catch::Contains("A100-40GB"));
    CHECK_THAT(msg, Catch::Contains("L40S"));
  }
  CHECK_THROWS_AS(load(kBase, {"model.name=llama-4"}), CatalogError);
}

TEST_CASE("fractions must sum to 1", "[config][scenario]") {
  const auto e = config_error(
      [] { load(replace(kBase, "weights: nvme", "weights: {gpu: 0.5, cpu: 0.3}")); });
  CHECK(e.line() == 12);
  CHECK_THAT(e.what(), Catch::Contains("fractions must sum to 1, got 0.8"));
  const Scenario s = load(replace(kBase, "weights: nvme", "weights: {gpu: 0.2, cpu: 0.3, nvme: 0.5}"));
  CHECK(s.policy.weights.gpu == Approx(0.2));
  CHECK(s.policy.weights.nvme == Approx(0.5));
  CHECK_THROWS_WITH(load(kBase, {"policy.kv_cache={gpu: 0.5, nvme: 0.5}"}),
                    Catch::Contains("policy.kv_cache.nvme: unknown key"));
}

TEST_CASE("bad --set keys get the same suggestions, naming --set", "[config][scenario]") {
  const auto e = config_error([] { load(kBase, {"workload.promt_tokens=5"}); });
  CHECK(e.file() == "--set");
  CHECK(e.line() == 0);
  CHECK_THAT(e.what(), Catch::StartsWith("--set: workload.promt_tokens: unknown key"));
  CHECK_THAT(e.what(), Catch::Contains("did you mean 'workload.prompt_tokens'?"));
  CHECK_THROWS_WITH(load(kBase, {"workload.batch"}), Catch::Contains("expected key.path=value"));
  CHECK_THROWS_WITH(load(kBase, {"policy.aio=3"}), Catch::Contains("is a section"));
  const auto t = config_error([] { load(kBase, {"workload.batch=abc"}); });
  CHECK(t.file() == "--set");
  CHECK_THAT(t.what(), Catch::Contains("expected a positive integer, got 'abc'"));
}

TEST_CASE("keys of another workload kind are rejected", "[config][scenario]") {
  CHECK_THROWS_WITH(load(kBase, {"workload.direction=read"}),
                    Catch::Contains("does not apply to workload kind 'inference'"));
  // The same quantity under the other kind's name is pointed to its key here, both ways.
  CHECK_THROWS_WITH(load(kBase, {"workload.output_tokens=8"}),
                    Catch::EndsWith("for kind 'inference' the key is workload.gen_tokens"));
  const std::string serving =
      replace(replace(replace(kBase, "kind: inference", "kind: serving\n  arrival_rate: 1"),
                      "  batch:", "  max_batch:"),
              "  gen_tokens:", "  output_tokens:");
  CHECK_NOTHROW(load(serving));
  const auto e = config_error([&] { load(serving, {"workload.gen_tokens=8"}); });
  CHECK(e.key_path() == "workload.gen_tokens");
  CHECK_THAT(e.what(), Catch::EndsWith("for kind 'serving' the key is workload.output_tokens"));
  CHECK_THROWS_WITH(load(serving, {"workload.batch=8"}),
                    Catch::EndsWith("for kind 'serving' the key is workload.max_batch"));
  // No counterpart: the message stays as it was.
  CHECK_THROWS_WITH(load(serving, {"workload.direction=read"}), !Catch::Contains("the key is"));
}

TEST_CASE("inline and --set overrides, with provenance", "[config][scenario]") {
  std::string text = replace(kBase, "gpu: {model: H200, count: 1}",
                             "gpu: {model: H200, count: 1, memory_mib: 40960}");
  text = replace(text, "model: {name: llama-3-70b}", "model: {name: llama-3-70b, layers: 2}");
  const Scenario s = load(text, {"workload.batch=8", "hardware.nvme.read_gbps=3.5",
                                 "policy.aio.block_size=4MiB", "economics.prices.gpu_usd=1000"});
  CHECK(s.hardware.gpu.memory_mib == 40960);
  CHECK(s.model.layers == 2);
  CHECK(s.inference.batch == 8);
  CHECK(s.hardware.nvme.drive.read_gbps == 3.5);
  CHECK(s.policy.aio.block_size_bytes == 4.0 * 1024 * 1024);
  CHECK(s.economics.prices.gpu.usd == 1000);
  CHECK_THAT(s.economics.prices.gpu.source, Catch::Contains("override"));
  CHECK(s.provenance.at("hardware.gpu.memory_mib") == "override");
  CHECK(s.provenance.at("model.layers") == "override");
  CHECK(s.provenance.at("hardware.nvme.read_gbps") == "override");
  CHECK(s.hardware.gpu.sources.at("memory_mib") == "override");
  // --set wins over the file.
  CHECK(load(text, {"hardware.gpu.memory_mib=20480"}).hardware.gpu.memory_mib == 20480);
}

TEST_CASE("catalog names are case-insensitive", "[config][scenario]") {
  std::string text = replace(kBase, "model: H200", "model: h200");
  text = replace(text, "name: llama-3-70b", "name: LLAMA-3-70B");
  text = replace(text, "model: generic-gen5", "model: Generic-Gen5");
  const Scenario s = load(text);
  CHECK(s.hardware.gpu.name == "H200");
  CHECK(s.model.name == "llama-3-70b");
  CHECK(s.hardware.nvme.drive.name == "generic-gen5");
  CHECK(s.hash == load(kBase).hash);
}

TEST_CASE("resolved YAML loads back into the same scenario and hash", "[config][scenario]") {
  std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {kBase, {}},
      {kBase,
       {"hardware.gpu.memory_mib=40960", "model.layers=2", "policy.weights={gpu: 0.2, cpu: 0.3, nvme: 0.5}",
        "economics.prices.gpu_usd=1234.5", "policy.aio.block_size=1.5MiB", "description=a test"}},
      {"name: io\nhardware: {gpu: {model: A100-40GB}, nvme: {model: micron-9400, count: 2}}\n"
       "model: {name: llama-3-8b}\nworkload: {kind: io, direction: write, size: 1GiB, buffer: "
       "gpu_direct}\n",
       {}},
      {"name: train\nhardware: {gpu: {model: H100-SXM, count: 8}, host: {model: dgx-2}}\n"
       "model: {name: llama-3-8b}\nworkload: {kind: training, global_batch: 64, sequence_tokens: 2048,"
       " optimizer: cpu}\npolicy: {parallelism: {tensor: 2}}\n"
       "reference:\n  - {case: c1, source: paper, metric: throughput_tokens_per_s, value: 1.9, "
       "approx: true}\n",
       {}},
      {"name: ckpt\nhardware: {gpu: {model: H200}, nvme: {model: kioxia-cm7}}\nmodel: {name: opt-13b}\n"
       "workload: {kind: checkpoint, writer: fast_persist, target: {kind: network, per_node_gbps: 5, "
       "aggregate_gbps: 50, name: lustre}}\n",
       {}},
  };
  for (const auto& [text, overrides] : cases) {
    const Scenario a = load(text, overrides);
    INFO(a.resolved_yaml);
    const Scenario b = load_scenario_text(a.resolved_yaml, "resolved", with_data());
    CHECK(b.resolved_yaml == a.resolved_yaml);
    CHECK(b.hash == a.hash);
    CHECK(b.provenance == a.provenance);
    CHECK(b.hardware.gpu.sources == a.hardware.gpu.sources);
    CHECK(b.economics.prices.gpu.source == a.economics.prices.gpu.source);
    CHECK(b.references.size() == a.references.size());
    CHECK(b.description == a.description);
  }
  // Deterministic: the same input gives the same hash; a different input another one.
  CHECK(load(kBase).hash == load(kBase).hash);
  CHECK(load(kBase).hash != load(kBase, {"workload.batch=95"}).hash);
}

TEST_CASE("cross-field checks", "[config][scenario]") {
  const std::string no_nvme = replace(kBase, "  nvme: {model: generic-gen5, count: 4}\n", "");
  CHECK_THROWS_WITH(load(no_nvme), Catch::Contains("policy.weights: weights on nvme need NVMe"));
  CHECK(load(no_nvme, {"policy.weights=cpu"}).hardware.nvme.count == 0);
  CHECK_THROWS_WITH(load(no_nvme, {"policy.weights=cpu", "hardware.nvme.count=2"}),
                    Catch::Contains("need hardware.nvme.model or hardware.nvme.profile"));
  CHECK_THROWS_WITH(load(kBase, {"hardware.nvme.count=0"}),
                    Catch::Contains("weights on nvme need NVMe"));
  CHECK_THROWS_WITH(load(kBase, {"hardware.gpu.count=2"}),
                    Catch::Contains("must equal tensor * pipeline * data = 1"));
  CHECK_NOTHROW(load(kBase, {"hardware.gpu.count=2", "policy.parallelism.tensor=2"}));
  CHECK_THROWS_WITH(load(kBase, {"hardware.gpu.count=3", "policy.parallelism.tensor=3"}),
                    Catch::Contains("must divide the model's heads"));
  CHECK_THROWS_WITH(load(kBase, {"hardware.gpu.gds=false"}),
                    Catch::Contains("does not support GPUDirect Storage"));
  CHECK_THROWS_WITH(load(kBase, {"policy.schedule=flexgen-block", "policy.gpu_batches=5"}),
                    Catch::Contains("must divide workload.batch"));
}

TEST_CASE("a section given to --set as a map sets each of its keys", "[config][scenario]") {
  const Scenario s = load(kBase, {"hardware.gpu={model: H100-SXM, count: 1}"});
  CHECK(s.hardware.gpu.name == "H100-SXM");
  CHECK(s.hardware.gpu_count == 1);
  CHECK_THROWS_WITH(load(kBase, {"hardware.gpu={model: H100-SXM, cnt: 2}"}),
                    Catch::Contains("hardware.gpu.cnt") && Catch::Contains("did you mean 'count'"));
  CHECK_THROWS_WITH(load(kBase, {"hardware.gpu=H100"}), Catch::Contains("is a section"));
}

TEST_CASE("what scales simulation memory or time is limited, naming file, line and key",
          "[config][scenario]") {
  // Past the trained context: OPT-66B's learned position table has 2,048 rows (config.json
  // max_position_embeddings), so 512 + 1,537 is refused on every stack.
  const std::string opt = replace(kBase, "llama-3-70b", "opt-66b");
  CHECK_NOTHROW(load(opt, {"workload.gen_tokens=1536", "workload.batch=1"}));
  ConfigError e = config_error([&] { load(replace(opt, "gen_tokens: 32", "gen_tokens: 1537")); });
  CHECK(e.file() == "s.yaml");
  CHECK(e.line() == 10);
  CHECK(e.key_path() == "workload.gen_tokens");
  CHECK_THAT(e.what(), Catch::Contains("2048") && Catch::Contains("model.max_positions") &&
                           Catch::Contains("learned position table"));
  // Llama-3-70B's rotary positions (max_position_embeddings 8192) run past it, as TensorRT-LLM
  // ran GPT-J 6B and Falcon-180B past theirs; a stack that refuses it (vLLM) says so.
  CHECK_NOTHROW(load(kBase, {"workload.gen_tokens=7681", "workload.batch=1"}));
  e = config_error([] {
    load(replace(replace(kBase, "gen_tokens: 32", "gen_tokens: 7681"), "  io_path: gds\n",
                 "  io_path: gds\n  stack: vllm-v0\n"),
         {"workload.batch=1"});
  });
  CHECK(e.line() == 10);
  CHECK_THAT(e.what(), Catch::Contains("8192") && Catch::Contains("policy.stack vllm-v0"));

  // Layers x generated tokens: a million layers for a thousand tokens was a billion steps.
  e = config_error([] {
    load(kBase, {"model.max_positions=100000", "model.layers=100000", "workload.gen_tokens=1000"});
  });
  CHECK(e.key_path() == "workload.gen_tokens");
  CHECK_THAT(e.what(), Catch::Contains("limit of 33554432") && Catch::Contains("model.layers"));
  e = config_error([] { load(kBase, {"model.layers=1000000"}); });
  CHECK(e.key_path() == "model.layers");
  CHECK_THAT(e.what(), Catch::Contains("100000"));

  // Checkpoint writers: each is a simulated process with its own resources.
  const std::string ckpt =
      "name: c\nhardware: {gpu: {model: A100-80GB}, nvme: {model: generic-gen4, count: 8}}\n"
      "model: {name: phi-3-mini}\n"
      "workload: {kind: checkpoint, writer: fast_persist, writers_per_node: 10000000}\n";
  e = config_error([&] { load(ckpt); });
  CHECK(e.line() == 4);
  CHECK(e.key_path() == "workload.writers_per_node");
  CHECK_THAT(e.what(), Catch::Contains("4096"));
  CHECK(load(ckpt, {"workload.writers_per_node=4096"}).checkpoint.writers_per_node == 4096);
}

TEST_CASE("input errors name file, line and key", "[config][scenario]") {
  // Magnitudes that overflow the model's products (1e308 GB is inf bytes).
  ConfigError e = config_error([] { load(kBase, {"hardware.gpu.memory_mib=1e308"}); });
  CHECK(e.file() == "--set");
  CHECK(e.key_path() == "hardware.gpu.memory_mib");
  CHECK_THAT(e.what(), Catch::Contains("1e+30"));
  e = config_error([] { load(kBase, {"policy.aio.block_size=1e300GB"}); });
  CHECK(e.key_path() == "policy.aio.block_size");

  // The data-parallel split, checked where the file and line are known (it used to be a
  // ModelError from the simulator naming neither).
  const std::string training =
      "name: t\nhardware: {gpu: {model: A100-80GB, count: 8}}\nmodel: {name: phi-3-mini}\n"
      "workload:\n  kind: training\n  global_batch: 12\n  sequence_tokens: 1024\n";
  e = config_error([&] { load(training); });
  CHECK(e.file() == "s.yaml");
  CHECK(e.line() == 6);
  CHECK(e.key_path() == "workload.global_batch");
  CHECK_THAT(e.what(), Catch::Contains("multiple of the data-parallel degree 8"));
  CHECK_NOTHROW(load(training, {"workload.global_batch=16"}));

  // Overrides written in another file (a comparison's `set:`) are blamed on that file and line,
  // not on --set.
  const YNode sets = parse_yaml_text("set:\n  workload.batch: -3\n  workload.bogus: 1\n", "c.yaml");
  LoadOptions opts = with_data();
  opts.file_overrides.push_back(
      {"workload.batch", sets.require("set", "").require("workload.batch", "")});
  e = config_error([&] { load_scenario_text(kBase, "s.yaml", opts); });
  CHECK(e.file() == "c.yaml");
  CHECK(e.line() == 2);
  CHECK(e.key_path() == "workload.batch");
  opts.file_overrides = {{"workload.bogus", sets.require("set", "").require("workload.bogus", "")}};
  e = config_error([&] { load_scenario_text(kBase, "s.yaml", opts); });
  CHECK(e.file() == "c.yaml");
  CHECK(e.line() == 3);
  CHECK_THAT(e.what(), Catch::Contains("unknown key"));
}

TEST_CASE("a training run's DeepSpeed buffer settings load, round-trip and are range-checked",
          "[config][scenario][training]") {
  const std::string training =
      "name: t\nhardware: {gpu: {model: V100-32GB}}\nmodel: {name: phi-3-mini}\n"
      "workload:\n  kind: training\n  global_batch: 4\n  sequence_tokens: 1024\n"
      "  zero_stage: 2\n  gradients: cpu\n  optimizer: cpu\n";
  // DeepSpeed's defaults leave the resolved scenario (and its hash) as before the keys existed.
  const Scenario plain = load(training);
  CHECK(plain.training.reduce_bucket_elems == 5e8);
  CHECK_FALSE(plain.training.overlap_comm);
  CHECK(plain.resolved_yaml.find("zero:") == std::string::npos);
  const Scenario set = load(training + "  zero: {reduce_bucket_size: 5e7, overlap_comm: true}\n");
  CHECK(set.training.reduce_bucket_elems == 5e7);
  CHECK(set.training.overlap_comm);
  CHECK(set.hash != plain.hash);
  const Scenario again = load_scenario_text(set.resolved_yaml, "resolved", with_data());
  CHECK(again.hash == set.hash);
  const auto e = config_error([&] { load(training, {"workload.zero.reduce_bucket_size=0"}); });
  CHECK(e.key_path() == "workload.zero.reduce_bucket_size");
  const auto typo = config_error([&] { load(training + "  zero: {overlap_com: true}\n"); });
  CHECK(typo.line() == 11);
  CHECK_THAT(typo.what(), Catch::Contains("overlap_comm"));
}

TEST_CASE("the loader rejects at load time the parallelism the simulator cannot run",
          "[config][scenario]") {
  // Regression: the loader accepted a tensor degree that the KV heads divide (16 over Llama-3-70B's
  // 8 KV heads) and micro-batches with streamed weights; the simulator then failed at run time.
  CHECK_THROWS_WITH(load(kBase, {"hardware.gpu.count=16", "policy.parallelism.tensor=16"}),
                    Catch::Contains("policy.parallelism.tensor: tensor-parallel degree 16 must "
                                    "divide the model's heads (64) and KV heads (8)"));
  CHECK_THROWS_WITH(load(kBase, {"hardware.gpu.count=2", "policy.parallelism.pipeline=2",
                                 "policy.parallelism.micro_batches=2"}),
                    Catch::Contains("policy.parallelism.micro_batches: pipeline micro-batches "
                                    "with streamed weights are not modelled"));
  CHECK_NOTHROW(load(kBase, {"hardware.gpu.count=8", "policy.parallelism.tensor=8"}));
}

TEST_CASE("a calibrated profile replaces the datasheet model", "[config][scenario]") {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("tiersim-profile-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  DeviceProfile p;
  p.model.name = "my-drive";
  p.model.read = {6.5, 1, 80, 0};
  p.model.write = {3.0, 2, 20, 0};
  write_device_profile((dir / "sub" / "device.yaml").string(), p);
  std::ofstream((dir / "scenario.yaml").string())
      << replace(kBase, "nvme: {model: generic-gen5, count: 4}",
                 "nvme: {profile: sub/device.yaml, count: 4}");
  const Scenario s = load_scenario((dir / "scenario.yaml").string(), with_data());
  CHECK(s.hardware.nvme.model.read.peak_gbps == 6.5);
  CHECK(s.hardware.nvme.drive.has_profile);
  CHECK(s.hardware.nvme.count == 4);
  CHECK(s.provenance.at("hardware.nvme.profile").rfind("profile: ", 0) == 0);
  const Scenario b = load_scenario_text(s.resolved_yaml, "resolved", with_data());
  CHECK(b.hash == s.hash);
  CHECK(b.hardware.nvme.model.read.peak_gbps == 6.5);
  fs::remove_all(dir);
}

TEST_CASE("the scenario hash covers the contents of the files it references",
          "[config][scenario]") {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("tiersim-hash-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  DeviceProfile p;
  p.model.name = "my-drive";
  p.model.read = {6.5, 1, 80, 0};
  p.model.write = {3.0, 2, 20, 0};
  write_device_profile((dir / "device.yaml").string(), p);
  const std::string with_profile = replace(kBase, "nvme: {model: generic-gen5, count: 4}",
                                           "nvme: {profile: device.yaml, count: 4}");
  std::ofstream((dir / "s.yaml").string()) << with_profile;
  const Scenario before = load_scenario((dir / "s.yaml").string(), with_data());
  // Re-calibrated: another write rate only (the read path, all this scenario uses, is the same).
  p.model.write = {3.5, 2, 20, 0};
  write_device_profile((dir / "device.yaml").string(), p);
  const Scenario after = load_scenario((dir / "s.yaml").string(), with_data());
  CHECK(after.resolved_yaml == before.resolved_yaml);  // the YAML names only the path
  CHECK(after.hash != before.hash);

  // A request trace: one row edited.
  const std::string serving =
      "name: t\nhardware: {gpu: {model: H100-SXM}}\nmodel: {name: llama-3-8b}\n"
      "workload: {kind: serving, trace: t.csv, requests: 10}\n";
  std::ofstream((dir / "t.yaml").string()) << serving;
  std::ofstream((dir / "t.csv").string()) << "arrival_s,prompt_tokens,output_tokens\n0,10,2\n";
  const std::string h1 = load_scenario((dir / "t.yaml").string(), with_data()).hash;
  std::ofstream((dir / "t.csv").string()) << "arrival_s,prompt_tokens,output_tokens\n0,10,3\n";
  CHECK(load_scenario((dir / "t.yaml").string(), with_data()).hash != h1);

  // The prefix traces (sim/workloads/serving/prefix_stream.hpp) are workload.trace files too: a
  // Mooncake JSONL and a conversation CSV, each with one value edited.
  const std::pair<const char*, std::pair<const char*, const char*>> prefix_traces[] = {
      {"m.jsonl",
       {"{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1]}\n",
        "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 2]}\n"}},
      {"c.csv",
       {"conversation_id,turn,arrival_s,prompt_tokens,output_tokens\na,1,0,100,10\n",
        "conversation_id,turn,arrival_s,prompt_tokens,output_tokens\na,1,0,100,11\n"}}};
  for (const auto& [name, texts] : prefix_traces) {
    std::ofstream((dir / "p.yaml").string())
        << "name: p\nhardware: {gpu: {model: H100-SXM}}\nmodel: {name: llama-3-8b}\n"
           "workload: {kind: serving, trace: "
        << name << ", requests: 10}\n";
    std::ofstream((dir / name).string()) << texts.first;
    const Scenario a = load_scenario((dir / "p.yaml").string(), with_data());
    std::ofstream((dir / name).string()) << texts.second;
    const Scenario b = load_scenario((dir / "p.yaml").string(), with_data());
    CHECK(b.resolved_yaml == a.resolved_yaml);
    CHECK(b.hash != a.hash);
  }

  // A resolved scenario written elsewhere (plan --out) reads the same files from there.
  fs::create_directories(dir / "out");
  const Scenario s = load_scenario((dir / "t.yaml").string(), with_data());
  {
    // Relative to the working folder, as a user's `tiersim plan plans/p.yaml` resolves them.
    const fs::path cwd = fs::current_path();
    fs::current_path(dir.parent_path());
    const Scenario rel = load_scenario(dir.filename().string() + "/t.yaml", with_data());
    std::ofstream((dir / "out" / "plain.yaml").string()) << rel.resolved_yaml;
    std::ofstream((dir / "out" / "fixed.yaml").string())
        << resolved_yaml_with_absolute_paths(rel);
    fs::current_path(cwd);
  }
  // The YAML as resolved names the trace relative to the base's folder: from out/ it names no
  // file (or another one).
  CHECK(load_scenario((dir / "out" / "plain.yaml").string(), with_data()).hash != s.hash);
  CHECK(load_scenario((dir / "out" / "fixed.yaml").string(), with_data()).hash == s.hash);
  fs::remove_all(dir);
}

TEST_CASE("an error quotes at most an excerpt of a huge value", "[config][scenario]") {
  const std::string huge(5u << 20, '7');
  const ConfigError e = config_error([&] { load(kBase, {"workload.batch=x" + huge}); });
  CHECK(e.key_path() == "workload.batch");
  CHECK(std::string(e.what()).size() < 1000);
  CHECK_THAT(e.what(), Catch::Contains("bytes in all"));
}

TEST_CASE("counts that size memory are limited in the option table, naming the key",
          "[config][scenario]") {
  // Each used to end in `internal error: std::bad_alloc` (or take gigabytes to say "no fit").
  for (const char* set : {"hardware.gpu.count=1000000000", "model.experts=1000000",
                          "policy.aio.swap_buffers=1000000000"}) {
    INFO(set);
    const ConfigError e = config_error([&] { load(kBase, {set}); });
    CHECK(e.key_path() == std::string(set).substr(0, std::string(set).find('=')));
  }
  const std::string serving =
      "name: t\nhardware: {gpu: {model: H100-SXM}}\nmodel: {name: llama-3-8b}\n"
      "workload: {kind: serving, arrival_rate: 1}\n";
  const ConfigError e = config_error([&] { load(serving, {"workload.requests=1e9"}); });
  CHECK(e.key_path() == "workload.requests");
  CHECK_THAT(e.what(), Catch::Contains("<= 1e+07"));
}

TEST_CASE("a profile naming its catalog drive inherits that drive's capacity, power and price",
          "[config][scenario]") {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("tiersim-profile-drive-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  DeviceProfile p;
  p.model.name = "my-drive";
  p.model.read = {6.5, 1, 80, 0};
  p.model.write = {3.0, 2, 20, 0};
  const std::string profile = (dir / "device.yaml").string();
  const std::string scenario = (dir / "scenario.yaml").string();
  std::ofstream(scenario) << replace(kBase, "nvme: {model: generic-gen5, count: 4}",
                                     "nvme: {profile: device.yaml, count: 4}");
  const Catalog catalog = Catalog::load(kData);
  const NvmeSpec& gen5 = catalog.drive("generic-gen5");

  SECTION("without catalog_drive the drive has no product, so no price") {
    write_device_profile(profile, p);
    const Scenario s = load_scenario(scenario, with_data());
    CHECK(s.hardware.nvme.drive.name.empty());
    CHECK_FALSE(s.economics.prices.drive.known());
    CHECK_THAT(sim::cost_note(s), Catch::Contains("profile my-drive, no catalog drive"));
  }
  SECTION("catalog_drive gives the catalog drive; the profile keeps the performance model") {
    p.catalog_drive = "generic-gen5";
    write_device_profile(profile, p);
    CHECK(read_device_profile(profile).catalog_drive == "generic-gen5");
    const Scenario s = load_scenario(scenario, with_data());
    CHECK(s.hardware.nvme.drive.name == "generic-gen5");
    CHECK(s.hardware.nvme.drive.capacity_tb == gen5.capacity_tb);
    CHECK(s.hardware.nvme.drive.active_w == gen5.active_w);
    CHECK(s.economics.prices.drive.known());
    CHECK(s.economics.prices.drive.usd == catalog.drive_price("generic-gen5").usd);
    CHECK(s.hardware.nvme.model.read.peak_gbps == 6.5);  // measured, not the datasheet's
    CHECK(s.provenance.at("hardware.nvme.model").find("catalog_drive") != std::string::npos);
    const Scenario b = load_scenario_text(s.resolved_yaml, "resolved", with_data());
    CHECK(b.hash == s.hash);
    CHECK(b.hardware.nvme.model.read.peak_gbps == 6.5);
    // The scenario's own hardware.nvme.model wins over the profile's.
    std::ofstream(scenario) << replace(
        kBase, "nvme: {model: generic-gen5, count: 4}",
        "nvme: {model: generic-gen4, profile: device.yaml, count: 4}");
    CHECK(load_scenario(scenario, with_data()).hardware.nvme.drive.name == "generic-gen4");
  }
  SECTION("an unknown catalog_drive names the profile, its line and the key") {
    p.catalog_drive = "no-such-drive";
    write_device_profile(profile, p);
    CHECK_THROWS_WITH(load_scenario(scenario, with_data()), Catch::Contains("device.yaml:") &&
                                                                Catch::Contains("catalog_drive") &&
                                                                Catch::Contains("no-such-drive"));
  }
  fs::remove_all(dir);
}

TEST_CASE("the option table is complete and documented", "[config][schema]") {
  for (const auto& o : scenario_options()) {
    INFO(o.path);
    CHECK_FALSE(o.help.empty());
    CHECK(o.field);
    CHECK_FALSE((o.required && !o.default_text.empty()));
  }
  const std::string md = schema_markdown();
  CHECK_THAT(md, Catch::Contains("| `workload.prompt_tokens` |"));
  CHECK_THAT(schema_text(), Catch::Contains("policy.aio.block_size"));
}

TEST_CASE("scenarios/README.md holds the current schema table", "[config][schema]") {
  std::ifstream in(kData + "/README.md");
  REQUIRE(in);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Regenerate with: tiersim schema --markdown (and paste below the marker).
  const std::string marker = "<!-- generated: tiersim schema --markdown -->\n";
  const auto pos = text.find(marker);
  REQUIRE(pos != std::string::npos);
  CHECK(text.substr(pos + marker.size()) == schema_markdown());
}

TEST_CASE("every shipped scenario loads and round-trips", "[config][scenario]") {
  const Catalog catalog = Catalog::load(kData);
  LoadOptions opts;
  opts.catalog = &catalog;
  int loaded = 0;
  for (const std::string& file : test::shipped_scenario_files()) {
    INFO(file);
    Scenario a;
    REQUIRE_NOTHROW(a = load_scenario(file, opts));
    const Scenario b = load_scenario_text(a.resolved_yaml, "resolved", opts);
    CHECK(b.hash == a.hash);
    ++loaded;
  }
  CHECK(loaded > 0);
}

TEST_CASE("plain --set values load as the same values written as YAML", "[config][scenario]") {
  const std::string file = kData + "/inference/llama3-70b-h200-4x-gen5-gds.yaml";
  // Each value once as written and once in a YAML form the loader must parse; both must load to
  // the same scenario (the plain form skips the YAML parser).
  const std::vector<std::pair<std::string, std::string>> same = {
      {"workload.batch=16", "workload.batch='16'"},
      {"hardware.nvme.model=generic-gen4", "hardware.nvme.model=\"generic-gen4\""},
      {"policy.aio.block_size=4MiB", "policy.aio.block_size=[4MiB]"},
      {"policy.weights=cpu", "policy.weights={cpu: 1}"},
      {"description=two words", "description: two words"},
  };
  for (const auto& [plain, yaml] : same) {
    INFO(plain << " vs " << yaml);
    const Scenario a = load_scenario(file, with_data({plain}));
    if (yaml.find('[') != std::string::npos || yaml.find('=') == std::string::npos) {
      // Not the same value at all: a list is an error, a missing '=' is not an assignment.
      CHECK_THROWS_AS(load_scenario(file, with_data({yaml})), ConfigError);
      continue;
    }
    const Scenario b = load_scenario(file, with_data({yaml}));
    CHECK(a.hash == b.hash);
    CHECK(a.resolved_yaml == b.resolved_yaml);
  }
  // Words YAML reads as null or as a comment are not plain values.
  CHECK_THROWS_AS(load_scenario(file, with_data({"description=~"})), ConfigError);
  CHECK_THROWS_AS(load_scenario(file, with_data({"description=null"})), ConfigError);
  CHECK_THROWS_AS(load_scenario(file, with_data({"description=# note"})), ConfigError);
  CHECK(load_scenario(file, with_data({"description=a # note"})).description == "a");
}

TEST_CASE("a scenario source loads as load_scenario does", "[config][scenario]") {
  const std::string file = kData + "/inference/llama3-70b-h200-4x-gen5-gds.yaml";
  const ScenarioSource source(file);
  for (const auto& sets :
       std::vector<std::vector<std::string>>{{},
                                             {"workload.batch=8", "hardware.nvme.count=2"},
                                             {"policy.weights={gpu: 0.5, cpu: 0.5}"}}) {
    const Scenario a = load_scenario(file, with_data(sets));
    const Scenario b = source.load(with_data(sets));
    CHECK(a.file == b.file);
    CHECK(a.hash == b.hash);
    CHECK(a.resolved_yaml == b.resolved_yaml);
    CHECK(a.provenance == b.provenance);
  }
  const ScenarioSource missing(kData + "/no-such-scenario.yaml");
  CHECK_THROWS_WITH(missing.load(with_data()), Catch::Contains("cannot open scenario file"));
}

TEST_CASE("a bad execution stack names file, line and key, with a near match", "[config][stack]") {
  const std::string text = std::string(kBase) + "  stack: optimised\n";  // line 14
  const auto e = config_error([&] { load(text); });
  CHECK(e.file() == "s.yaml");
  CHECK(e.line() == 14);
  CHECK(e.key_path() == "policy.stack");
  CHECK_THAT(e.what(), Catch::Contains("did you mean 'optimized'?") &&
                           Catch::Contains("hf-deepspeed") && Catch::Contains("optimized"));
  const auto set = config_error([] { load(kBase, {"policy.stack=eager"}); });
  CHECK(set.file() == "--set");
  CHECK(set.key_path() == "policy.stack");
  CHECK_THAT(set.what(), Catch::Contains("one of hf-deepspeed, optimized"));
  CHECK(load(std::string(kBase) + "  stack: optimized\n").policy.stack.name == "optimized");
}

TEST_CASE("a stack without CPU attention keeps the KV cache on the GPU", "[config][stack]") {
  const std::string text =
      replace(kBase, "  weights: nvme\n", "  weights: nvme\n  kv_cache: cpu\n  stack: optimized\n");
  const auto e = config_error([&] { load(text); });
  CHECK(e.line() == 13);
  CHECK(e.key_path() == "policy.kv_cache");
  CHECK_THAT(e.what(), Catch::Contains("attention on the GPU only"));
  CHECK_NOTHROW(load(replace(text, "  stack: optimized\n", "")));
}

TEST_CASE("ZeRO-Inference keeps a host KV cache for OPT, BLOOM and Llama models only",
          "[config][stack]") {
  // Its transformers fork changes those three classes; Mixtral, Mistral and Qwen have no host
  // KV cache there. The Llama base loads; a Mixtral is refused at the key, with what to do.
  const std::string text =
      replace(kBase, "  weights: nvme\n", "  weights: nvme\n  kv_cache: cpu\n");
  CHECK_NOTHROW(load(text));
  for (const std::string model : {"mixtral-8x7b", "mistral-7b-v0.3", "qwen2.5-7b"}) {
    const auto e =
        config_error([&] { load(replace(text, "{name: llama-3-70b}", "{name: " + model + "}")); });
    CHECK(e.key_path() == "policy.kv_cache");
    CHECK_THAT(e.what(), Catch::Contains("OPT, BLOOM and Llama") &&
                             Catch::Contains("keep the KV cache on gpu"));
  }
  for (const std::string model : {"opt-30b", "bloom-176b", "llama-2-70b"})
    CHECK_NOTHROW(load(replace(text, "{name: llama-3-70b}", "{name: " + model + "}")));
}

TEST_CASE("the stack and the FP8 rate enter the resolved scenario only when they matter",
          "[config][stack]") {
  // Scenarios that name no stack keep the resolved text, and so the hash, they had before the
  // key existed: neither key appears.
  const Scenario plain = load(kBase);
  CHECK(plain.resolved_yaml.find("stack") == std::string::npos);
  CHECK(plain.resolved_yaml.find("fp8_tflops") == std::string::npos);
  CHECK(plain.hardware.gpu.fp8_tflops > 0);  // loaded from the catalog all the same
  const Scenario opt = load(kBase, {"policy.stack=optimized"});
  CHECK_THAT(opt.resolved_yaml, Catch::Contains("stack: optimized"));
  CHECK_THAT(opt.resolved_yaml, Catch::Contains("fp8_tflops"));
  CHECK(opt.hash != plain.hash);
  // Both round-trip, and so does an override of the FP8 rate under the default stack.
  for (const Scenario& a : {opt, load(kBase, {"hardware.gpu.fp8_tflops=1000"})}) {
    INFO(a.resolved_yaml);
    const Scenario b = load_scenario_text(a.resolved_yaml, "resolved", with_data());
    CHECK(b.resolved_yaml == a.resolved_yaml);
    CHECK(b.hash == a.hash);
    CHECK(b.provenance == a.provenance);
    CHECK(b.policy.stack.name == a.policy.stack.name);
    CHECK(b.hardware.gpu.fp8_tflops == a.hardware.gpu.fp8_tflops);
  }
}

namespace {
const char* kFlexGen =
    "name: flexgen-30b\n"                                                            // 1
    "hardware:\n"                                                                    // 2
    "  gpu: {model: T4, count: 1}\n"                                                 // 3
    "  host: {model: gcp-n1-highmem-32}\n"                                           // 4
    "  nvme: {model: gcp-local-ssd-nvme, count: 4}\n"                                // 5
    "model: {name: opt-30b}\n"                                                       // 6
    "workload: {kind: inference, batch: 144, prompt_tokens: 512, gen_tokens: 32}\n"  // 7
    "policy:\n"                                                                      // 8
    "  schedule: flexgen\n"                                                          // 9
    "  flexgen:\n"                                                                   // 10
    "    w_gpu_percent: 20\n"                                                        // 11
    "    w_cpu_percent: 80\n"                                                        // 12
    "    cache_gpu_percent: 0\n"                                                     // 13
    "    cache_cpu_percent: 100\n"                                                   // 14
    "    act_gpu_percent: 0\n"                                                       // 15
    "    act_cpu_percent: 100\n"                                                     // 16
    "    gpu_batch_size: 48\n"                                                       // 17
    "    num_gpu_batches: 3\n"                                                       // 18
    "    cpu_cache_compute: true\n";                                                 // 19
}  // namespace

TEST_CASE("FlexGen's policy loads and its bad values name file, line and key",
          "[config][scenario][flexgen]") {
  const Scenario s = load(kFlexGen);
  CHECK(s.policy.schedule == Schedule::kFlexGen);
  CHECK(s.policy.flexgen.w_gpu_percent == 20);
  CHECK(s.policy.flexgen.gpu_batch_size == 48);
  CHECK(s.policy.flexgen.cpu_cache_compute);
  CHECK(s.policy.flexgen.overlap);  // FlexGen's default
  CHECK_THAT(s.resolved_yaml, Catch::Contains("cache_cpu_percent: 100"));
  // The resolved YAML loads again to the same scenario.
  CHECK(load(s.resolved_yaml).hash == s.hash);

  auto e = config_error([] { load(replace(kFlexGen, "w_cpu_percent: 80", "w_cpu_percent: 90")); });
  CHECK(e.line() == 12);
  CHECK(e.key_path() == "policy.flexgen.w_cpu_percent");
  CHECK_THAT(e.what(), Catch::Contains("sum to 110"));

  e = config_error([] { load(replace(kFlexGen, "w_gpu_percent: 20", "w_gpu_percent: 120")); });
  CHECK(e.line() == 11);
  CHECK_THAT(e.what(), Catch::Contains("out of range"));

  e = config_error([] { load(replace(kFlexGen, "act_cpu_percent: 100", "act_cpu_percent: 60")); });
  CHECK(e.line() == 16);
  CHECK(e.key_path() == "policy.flexgen.act_cpu_percent");
  CHECK_THAT(e.what(), Catch::Contains("one device"));

  e = config_error([] { load(replace(kFlexGen, "batch: 144", "batch: 96")); });
  CHECK(e.line() == 7);
  CHECK(e.key_path() == "workload.batch");

  e = config_error([] { load(std::string(kFlexGen) + "  weights: cpu\n"); });
  CHECK(e.key_path() == "policy.weights");

  e = config_error([] { load(replace(kFlexGen, "schedule: flexgen", "schedule: flexgen-block")); });
  CHECK_THAT(e.key_path(), Catch::StartsWith("policy.flexgen."));
  CHECK_THAT(e.what(), Catch::Contains("flexgen only"));

  e = config_error([] {
    load(replace(kFlexGen, "cache_cpu_percent: 100",
                 "cache_cpu_percent: 50\n    compress_cache: true"));
  });
  CHECK(e.key_path() == "policy.flexgen.compress_cache");

  e = config_error([] { load(replace(kFlexGen, "opt-30b", "llama-3-70b")); });
  CHECK(e.key_path() == "model.name");
  // Another family is the error even where the batch does not match either: it was the batch's
  // that a GLM-4.5-Air scenario got first, whose fix then led to this one.
  e = config_error([] {
    load(replace(replace(kFlexGen, "opt-30b", "glm-4.5-air"), "batch: 144", "batch: 32"));
  });
  CHECK(e.key_path() == "model.name");
  CHECK_THAT(e.what(), Catch::Contains("runs OPT models only, not glm4_moe"));
}

TEST_CASE("an optional catalog number stays out of resolved scenarios that do not set it",
          "[config][scenario]") {
  // The L40S entry gives neither achieved rate, the T4 entry gives both.
  const std::string l40s = load(replace(kBase, "model: H200", "model: L40S")).resolved_yaml;
  CHECK_THAT(l40s, !Catch::Contains("fp16_achieved_tflops"));
  const Scenario t4 = load(kFlexGen);
  CHECK_THAT(t4.resolved_yaml, Catch::Contains("fp16_achieved_tflops: 21.24"));
  CHECK_THAT(l40s, !Catch::Contains("fp16_decode_achieved_tflops"));
  CHECK_THAT(t4.resolved_yaml, Catch::Contains("fp16_decode_achieved_tflops"));
  CHECK(load(t4.resolved_yaml).hash == t4.hash);
}

TEST_CASE("the I/O path without weights on NVMe is one configuration: same resolved scenario",
          "[config][scenario]") {
  // Regression: gds and aio with no NVMe weights gave two hashes for one configuration, so a plan
  // listed the same best configuration twice.
  for (const char* w : {"policy.weights=cpu", "policy.weights=gpu"}) {
    const Scenario gds = load(kBase, {w});
    const Scenario aio = load(kBase, {w, "policy.io_path=aio"});
    CHECK(gds.policy.io_path == IoPath::kAio);
    CHECK(gds.hash == aio.hash);
    CHECK_THAT(gds.provenance.at("policy.io_path"), Catch::Contains("no effect"));
  }
  // With weights on NVMe the path matters and stays.
  const Scenario nvme = load(kBase);
  CHECK(nvme.policy.io_path == IoPath::kGds);
  CHECK(nvme.hash != load(kBase, {"policy.io_path=aio"}).hash);
}

TEST_CASE("a name ending in a carriage return survives the resolved YAML", "[config][loader]") {
  // The fuzz target's finding (tests/fuzz/seeds/regression-cr-name.yaml): yaml-cpp reads this
  // name as "\r", and the resolved YAML used to write it plain, which reads back as no name.
  const std::string text =
      "name: \r #\nhardware:\n gpu: {model: RTX-4090,count: 3}\n"
      "model: {name: llama-3.1-8b,max_positions: 8}\nworkload:\n  kind: serving\n  trace: u";
  const Scenario s = load_scenario_text(text, "cr.yaml");
  const Scenario again = load_scenario_text(s.resolved_yaml, "resolved.yaml");
  CHECK(again.name == s.name);
  CHECK(again.hash == s.hash);
}

TEST_CASE("ZeRO-Inference's data-parallel ranks: GPU count, batch and one source per setting",
          "[config][scenario][zero3]") {
  // Six GPUs with data: 6 load; the ranks' ZeRO-3 settings are read.
  const Scenario s = load(kBase, {"hardware.gpu.count=6", "policy.parallelism.data=6",
                                  "workload.batch=96", "policy.zero3.prefetch_bucket_size=2e8"});
  CHECK(s.policy.parallelism.data == 6);
  CHECK(s.policy.zero3.prefetch_bucket_size == 2e8);
  CHECK(s.policy.zero3.param_persistence_threshold == 1e5);  // DeepSpeed's default
  // Its resolved scenario loads again (the report and the store re-run stored scenarios) and
  // leaves out policy.prefetch_layers, which data-parallel ranks refuse.
  CHECK(s.resolved_yaml.find("prefetch_layers") == std::string::npos);
  const Scenario again = load_scenario_text(s.resolved_yaml, "resolved", with_data({}));
  CHECK(again.hash == s.hash);
  CHECK(again.policy.zero3.prefetch_bucket_size == 2e8);
  // Six GPUs without it are still refused, and the message names the new degree.
  const auto count = config_error([] { load(kBase, {"hardware.gpu.count=6"}); });
  CHECK(count.key_path() == "hardware.gpu.count");
  CHECK_THAT(count.what(), Catch::Contains("tensor * pipeline * data"));
  // Every rank runs the same share of the batch.
  const auto batch = config_error(
      [] { load(kBase, {"hardware.gpu.count=5", "policy.parallelism.data=5"}); });
  CHECK(batch.key_path() == "policy.parallelism.data");
  CHECK_THAT(batch.what(), Catch::Contains("must divide workload.batch (96)"));
  // Tensor parallelism inside the ranks is not modelled.
  const auto tp = config_error([] {
    load(kBase,
         {"hardware.gpu.count=4", "policy.parallelism.data=2", "policy.parallelism.tensor=2"});
  });
  CHECK(tp.key_path() == "policy.parallelism.data");
  // The prefetch depth has one source: the ZeRO-3 bucket, not prefetch_layers.
  const auto prefetch = config_error([] {
    load(kBase, {"hardware.gpu.count=2", "policy.parallelism.data=2", "policy.prefetch_layers=3"});
  });
  CHECK(prefetch.key_path() == "policy.prefetch_layers");
  // Accelerate's hooks keep a whole model per process: no partitioned ranks to gather from
  // (model/stack.hpp zero3_partitioning); the error names the stacks that have them.
  const auto accelerate = config_error([] {
    load(kBase,
         {"hardware.gpu.count=2", "policy.parallelism.data=2", "policy.stack=hf-accelerate"});
  });
  CHECK(accelerate.key_path() == "policy.parallelism.data");
  CHECK_THAT(accelerate.what(),
             Catch::Contains("hf-accelerate has no partitioned data parallelism") &&
                 Catch::Contains("hf-deepspeed"));
  // ZeRO-3 settings without ranks to partition over.
  const auto alone = config_error([] { load(kBase, {"policy.zero3.prefetch_bucket_size=2e8"}); });
  CHECK(alone.key_path() == "policy.zero3.prefetch_bucket_size");
  CHECK_THAT(alone.what(), Catch::Contains("policy.parallelism.data > 1 only"));
  // The persistence threshold also decides what one GPU fetches on a stack with ZeRO-3's
  // persistence (model/stack.hpp zero3_persistence), and is refused on one without.
  CHECK(load(kBase, {"policy.zero3.param_persistence_threshold=7168"})
            .policy.zero3.param_persistence_threshold == 7168);
  const auto no_zero3 = config_error([] {
    load(kBase, {"policy.stack=hf-accelerate", "policy.zero3.param_persistence_threshold=7168"});
  });
  CHECK(no_zero3.key_path() == "policy.zero3.param_persistence_threshold");
  CHECK_THAT(no_zero3.what(), Catch::Contains("no ZeRO-3 persistence"));
  // ... unless the stack's one-GPU gather follows DeepSpeed v0.7's coordinator, whose calls they
  // set (model/stack.hpp zero3_gather_copies_v07).
  CHECK_NOTHROW(
      load(kBase, {"policy.stack=hf-deepspeed-0.7", "policy.zero3.param_persistence_threshold=0"}));
  // Given in the file, they stay in its resolved scenario, which loads to the same.
  const std::string v07 = std::string(kBase) +
                          "  stack: hf-deepspeed-0.7\n"
                          "  zero3: {param_persistence_threshold: 0}\n";
  const Scenario one = load_scenario_text(v07, "v07", with_data({}));
  CHECK(one.policy.zero3.param_persistence_threshold == 0);
  const Scenario reloaded = load_scenario_text(one.resolved_yaml, "resolved", with_data({}));
  CHECK(reloaded.policy.zero3.param_persistence_threshold == 0);
  CHECK(reloaded.hash == one.hash);
}

TEST_CASE("a setting gives what the same --set gives, errors included", "[config][scenario][setting]") {
  const std::string file = kData + "/inference/llama3-70b-h200-4x-gen5-gds.yaml";
  const ScenarioSource source(file);
  // Scalars, a placement map, a section given as a map, a catalog name and a catalog field, in
  // every order a study applies them.
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"workload.batch=8", "hardware.nvme.count=2"},
      {"policy.weights={gpu: 0.5, cpu: 0.5}"},
      {"hardware.gpu={model: H100-SXM, count: 2}", "policy.parallelism.tensor=2"},
      {"hardware.nvme.model=micron-9400", "hardware.nvme.read_gbps=5"},
      {"policy.io_path=aio", "policy.aio.block_size=4MiB"},
      {"workload.batch=8", "workload.batch=16"}};
  for (const auto& sets : cases) {
    const Scenario a = load_scenario(file, with_data(sets));
    LoadOptions typed = with_data();
    for (const auto& s : sets) typed.settings.emplace_back(s);
    const Scenario b = source.load(typed);
    CHECK(a.hash == b.hash);
    CHECK(a.resolved_yaml == b.resolved_yaml);
    CHECK(a.provenance == b.provenance);
    CHECK(a.file == b.file);
  }
  // Invalid values and keys: the same error (file, line, key, text) from either.
  for (const auto& bad :
       {"workload.batch=0", "workload.batch=eight", "hardware.nvme.model=gen9",
        "policy.weights={gpu: 0.5}", "policy.wieghts=gpu", "hardware=1", "workload.batch",
        "workload.gen_tokens=1000000", "workload.batch=[1, 2"}) {
    std::string a_what, b_what;
    try {
      load_scenario(file, with_data({"hardware.nvme.count=0", "policy.weights=gpu", bad}));
    } catch (const Error& e) {
      a_what = e.what();
    }
    LoadOptions typed = with_data({"hardware.nvme.count=0"});
    typed.settings.emplace_back("policy.weights=gpu");
    typed.settings.emplace_back(bad);
    try {
      source.load(typed);
    } catch (const Error& e) {
      b_what = e.what();
    }
    INFO(bad);
    CHECK(!a_what.empty());
    CHECK(a_what == b_what);
  }
}

TEST_CASE("a scenario source shares its prepared keys between threads", "[config][scenario][setting]") {
  const std::string file = kData + "/inference/llama3-70b-h200-4x-gen5-gds.yaml";
  const ScenarioSource source(file);
  std::vector<std::string> expected, got(64);
  for (int i = 0; i < 64; ++i)
    expected.push_back(load_scenario(file, with_data({"workload.batch=" + std::to_string(i + 1)})).hash);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = t; i < 64; i += 4) {
        LoadOptions o = with_data();
        o.settings.emplace_back("workload.batch=" + std::to_string(i + 1));
        got[static_cast<std::size_t>(i)] = source.load(o).hash;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(got == expected);
}

TEST_CASE("a scenario source of text loads as load_scenario_text does", "[config][scenario][setting]") {
  const auto source = ScenarioSource::from_text(kBase, "s.yaml");
  const Scenario a = load(kBase, {"workload.batch=3"});
  LoadOptions o = with_data();
  o.settings.emplace_back("workload.batch=3");
  const Scenario b = source->load(o);
  CHECK(a.resolved_yaml == b.resolved_yaml);
  CHECK(a.hash == b.hash);
  CHECK(b.file.empty());
  const auto broken = ScenarioSource::from_text("name: [", "s.yaml");
  std::string a_what, b_what;
  try {
    load("name: [");
  } catch (const ConfigError& e) {
    a_what = e.what();
  }
  try {
    broken->load(with_data());
  } catch (const ConfigError& e) {
    b_what = e.what();
  }
  CHECK(!a_what.empty());
  CHECK(a_what == b_what);
}

namespace {
// `node` without the entry at `path` (dotted), where it has one.
YAML::Node without(YAML::Node node, const std::string& path) {
  const auto dot = path.find('.');
  if (!node.IsMap()) return node;
  if (dot == std::string::npos) {
    node.remove(path);
    return node;
  }
  const std::string head = path.substr(0, dot);
  if (node[head]) node[head] = without(node[head], path.substr(dot + 1));
  return node;
}

// The same tree: entries in the same order with the same keys and values.
bool same_tree(const YAML::Node& a, const YAML::Node& b) {
  if (a.Type() != b.Type()) return false;
  if (a.IsScalar()) return a.Scalar() == b.Scalar();
  if (!a.IsMap() && !a.IsSequence()) return true;
  if (a.size() != b.size()) return false;
  if (a.IsSequence()) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same_tree(a[i], b[i])) return false;
    return true;
  }
  auto i = a.begin(), j = b.begin();
  for (; i != a.end(); ++i, ++j)
    if (!same_tree(i->first, j->first) || !same_tree(i->second, j->second)) return false;
  return true;
}

// `node` with the sections left with no entry taken out: a section whose keys were all dropped
// reads back as null from the text, as an empty map from the tree.
YAML::Node pruned(const YAML::Node& node) {
  if (!node.IsMap()) return node;
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& kv : node) {
    const YAML::Node v = pruned(kv.second);
    if (v.IsNull() || (v.IsMap() && v.size() == 0)) continue;
    out[kv.first] = v;
  }
  return out;
}
}  // namespace

// The memo key of a study's shared runs: the resolved YAML without some keys' lines. Read back,
// it is the resolved scenario without those entries, for every shipped scenario and for keys of
// every section, nested ones and the last of a section included.
TEST_CASE("resolved_yaml_without drops exactly the keys it is given", "[config][every-scenario]") {
  const std::vector<std::vector<std::string>> key_sets = {
      {"hardware.host.dram_gb", "hardware.nvme.count"},
      {"name", "workload.batch", "policy.weights", "economics.duty_cycle", "policy.aio.block_size"},
  };
  int checked = 0;
  const Catalog catalog = Catalog::load(kData);
  LoadOptions opts;
  opts.catalog = &catalog;
  for (const std::string& file : test::shipped_scenario_files()) {
    Scenario s;
    try {
      s = load_scenario(file, opts);
    } catch (const Error&) {
      continue;  // a scenario shipped to show an error (tested elsewhere)
    }
    const YAML::Node full = YAML::Load(s.resolved_yaml);
    for (const auto& keys : key_sets) {
      INFO(file);
      YAML::Node expected = YAML::Clone(full);
      for (const std::string& k : keys) expected = without(expected, k);
      const std::string key = resolved_yaml_without(s, keys);
      const YAML::Node got = pruned(YAML::Load(key));
      CHECK(same_tree(got, pruned(expected)));
      ++checked;
    }
  }
  CHECK(checked > 200);
  // Equal when scenarios differ in those keys alone, and only then.
  const auto load_with = [](const std::vector<std::string>& sets) {
    return test::load_yaml(kBase, sets);
  };
  const std::vector<std::string> keys = {"hardware.host.dram_gb", "hardware.nvme.count"};
  const std::string a = resolved_yaml_without(load_with({"hardware.nvme.count=2"}), keys);
  CHECK(a == resolved_yaml_without(load_with({"hardware.nvme.count=8"}), keys));
  CHECK(a == resolved_yaml_without(
                 load_with({"hardware.nvme.count=8", "hardware.host.dram_gb=1024"}), keys));
  CHECK(a != resolved_yaml_without(load_with({"hardware.nvme.count=2", "workload.batch=8"}), keys));
}
}  // namespace config_scenario_loader_test
