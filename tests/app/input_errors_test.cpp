// Bad input through the `tiersim` program: every error names file, line and key, and none is an
// "internal error" (exit code 1 with a library's message).
#include <catch2/catch.hpp>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace app_input_errors_test {

namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `tiersim ARGS` (TIERSIM_BIN: the program, set by tests/CMakeLists.txt).
Outcome run_tiersim(const std::string& args) {
  const char* bin = std::getenv("TIERSIM_BIN");
  REQUIRE(bin);
  const std::string cmd = std::string(bin) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  Outcome o;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) o.output += buf.data();
  const int status = pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

const std::string kScenario =
    std::string(TIERSIM_SOURCE_DIR) + "/scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml";

}  // namespace

TEST_CASE("comparison commands: a baseline that names no variant is reported at its line",
          "[app][errors]") {
  if (!std::getenv("TIERSIM_BIN")) {
    WARN("TIERSIM_BIN not set: skipping");
    return;
  }
  tiersim::test::TempDir dir;
  const std::string cmp = dir.file("cmp.yaml");
  std::ofstream(cmp) << "compare:\n"                      // 1
                        "  baseline: bug\n"               // 2 (used to be reported without a line)
                        "  variants:\n"                   // 3
                        "    - name: a\n"                 // 4
                        "      file: " + kScenario + "\n";  // 5
  for (const char* command : {"compare ", "sensitivity ", "breakeven --vary workload.batch ",
                              "whatif --ratio 2 --vary workload.batch "}) {
    Outcome o = run_tiersim(command + cmp);
    CHECK(o.exit_code == 2);
    CHECK_THAT(o.output, Catch::Contains(cmp + ":2: compare.baseline: 'bug' names no variant"));
  }
}

TEST_CASE("compare: errors point into the comparison file", "[app][errors]") {
  if (!std::getenv("TIERSIM_BIN")) {
    WARN("TIERSIM_BIN not set: skipping");
    return;
  }
  tiersim::test::TempDir dir;
  const std::string cmp = dir.file("cmp.yaml");
  std::ofstream(cmp) << "compare:\n"                      // 1
                        "  name: t\n"                      // 2
                        "  set:\n"                         // 3
                        "    workload.batch: -3\n"         // 4
                        "  variants:\n"                    // 5
                        "    - file: " + kScenario + "\n";  // 6
  Outcome o = run_tiersim("compare " + cmp);
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(cmp + ":4: workload.batch: expected a positive integer"));
  CHECK_THAT(o.output, !Catch::Contains("--set"));

  // A complex key used to escape as "internal error: yaml-cpp: bad conversion".
  std::ofstream(cmp) << "compare:\n  ? [a, b]\n  : 1\n";
  o = run_tiersim("compare " + cmp);
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(cmp + ":2: compare:") && !Catch::Contains("internal error"));

  // A directory used to escape as "internal error: basic_filebuf::underflow".
  o = run_tiersim("compare " + dir.str());
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(dir.str() + ": is a directory"));
  o = run_tiersim("run " + kScenario + " --set hardware.nvme.profile=" + dir.str());
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(dir.str() + ": is a directory"));

  // A second document is not silently dropped.
  const std::string two = dir.file("two.yaml");
  {
    std::ifstream in(kScenario);
    std::ofstream out(two);
    out << in.rdbuf() << "---\nname: other\n";
  }
  o = run_tiersim("run " + two);
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains("second YAML document"));
}

TEST_CASE("run: values that overflow the model are errors naming the key", "[app][errors]") {
  if (!std::getenv("TIERSIM_BIN")) {
    WARN("TIERSIM_BIN not set: skipping");
    return;
  }
  // Each used to print null or inf in the JSON with exit code 0.
  for (const std::string set : {"economics.amortization_years=1e-320", "hardware.gpu.memory_mib=1e308",
                                "policy.aio.block_size=1e300GB"}) {
    const Outcome o = run_tiersim("run " + kScenario + " --json --set " + set);
    INFO(set << ": " << o.output);
    CHECK(o.exit_code == 2);
    CHECK_THAT(o.output, Catch::Contains("--set: " + set.substr(0, set.find('=')) + ":"));
  }
}

TEST_CASE("capacity: bad serving options and inputs are refused with the reason", "[app][errors]") {
  if (!std::getenv("TIERSIM_BIN")) {
    WARN("TIERSIM_BIN not set: skipping");
    return;
  }
  const std::string chatbot =
      std::string(TIERSIM_SOURCE_DIR) + "/scenarios/serving/opt30b-chatbot-6xl40s.yaml";
  // Regression: a negative start rate was silently replaced by the scenario's rate.
  Outcome o = run_tiersim("capacity " + chatbot + " -q --start -1");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains("--start: expected an arrival rate"));
  o = run_tiersim("capacity " + chatbot + " -q --attainment 0");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains("--attainment"));
  o = run_tiersim("capacity " + chatbot + " -q --set workload.arrival_rate=-2");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains("workload.arrival_rate"));
  // A trace fixes the arrivals, so there is no rate to search.
  tiersim::test::TempDir dir;
  std::ofstream(dir.file("t.csv")) << "arrival_s,prompt_tokens,output_tokens\n0,10,2\n";
  std::ofstream(dir.file("s.yaml")) << "name: s\nhardware: {gpu: {model: H100-SXM}}\n"
                                       "model: {name: llama-3-8b}\n"
                                       "workload: {kind: serving, trace: "
                                    << dir.file("t.csv") << "}\n";
  o = run_tiersim("capacity " + dir.file("s.yaml") + " -q");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains("s.yaml: workload.trace: the capacity search varies"));
}

TEST_CASE("plan: an output folder that cannot be created is an error naming it", "[app][errors]") {
  tiersim::test::TempDir dir;
  const std::string plan = dir.file("tiny.yaml");
  std::ofstream(plan) << "name: tiny\nbase: " << TIERSIM_SOURCE_DIR
                      << "/scenarios/plans/opt66b-base.yaml\ngrid:\n  workload.batch: [8]\n"
                         "constraints: {fits: true}\nobjective: {minimize: usd_per_million_tokens}\n";
  std::ofstream(dir.file("a-file")) << "x";
  // Before: std::filesystem::create_directories threw, and tiersim printed an internal error.
  const Outcome o = run_tiersim("plan " + plan + " -j 1 --out " + dir.file("a-file") + "/out");
  CHECK(o.exit_code != 0);
  CHECK_THAT(o.output, Catch::Contains("cannot create the output folder") &&
                           Catch::Contains("a-file/out") && !Catch::Contains("internal error"));
}

TEST_CASE("run: a trace with NaN seconds is an error, not a hang", "[app][errors]") {
  if (!std::getenv("TIERSIM_BIN")) {
    WARN("TIERSIM_BIN not set: skipping");
    return;
  }
  tiersim::test::TempDir dir;
  std::ofstream(dir.file("t.csv")) << "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                      "2023-11-16 18:15:46.68,374,44\n"
                                      "2023-11-16 18:15:nan,396,109\n";
  std::ofstream(dir.file("s.yaml")) << "name: s\nhardware: {gpu: {model: H100-SXM}}\n"
                                       "model: {name: llama-3-8b}\n"
                                       "workload: {kind: serving, trace: t.csv}\n";
  // Under `timeout`: before the fix this run spun forever.
  const std::string out = dir.file("out.txt");
  const int rc = tiersim::test::shell("timeout 60 " + std::string(std::getenv("TIERSIM_BIN")) +
                                      " run " + dir.file("s.yaml") + " >" + out + " 2>&1");
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO(text);
  CHECK(rc == 2);
  CHECK_THAT(text, Catch::Contains("t.csv:3: workload.trace: expected a timestamp"));
}

TEST_CASE("run: counts that would exhaust memory are errors naming the key", "[app][errors]") {
  if (!std::getenv("TIERSIM_BIN")) {
    WARN("TIERSIM_BIN not set: skipping");
    return;
  }
  // Each ended in `internal error: std::bad_alloc` or took gigabytes first.
  for (const std::string set : {"hardware.gpu.count=1e9", "model.experts=1000000",
                                "policy.aio.swap_buffers=1e9"}) {
    const Outcome o = run_tiersim("run " + kScenario + " --set " + set);
    INFO(set << ": " << o.output);
    CHECK(o.exit_code == 2);
    CHECK_THAT(o.output, Catch::Contains(set.substr(0, set.find('='))) &&
                             !Catch::Contains("internal error"));
  }
}

TEST_CASE("replay: --passes and --scale out of range are refused before any I/O",
          "[app][errors]") {
  if (!std::getenv("TIERSIM_BIN")) {
    WARN("TIERSIM_BIN not set: skipping");
    return;
  }
  tiersim::test::TempDir dir;
  // --passes 1 printed a decode error of -100 %; -5 and --scale -1 silently became defaults.
  for (const std::string bad : {"--passes 1", "--passes -5", "--scale -1"}) {
    const Outcome o = run_tiersim("replay " + kScenario + " --target " + dir.str() + " " + bad);
    INFO(bad << ": " << o.output);
    CHECK(o.exit_code != 0);
    CHECK_THAT(o.output, Catch::Contains(bad.substr(0, bad.find(' '))) &&
                             Catch::Contains("expected"));
  }
  CHECK(dir.regular_files() == 0);
}

TEST_CASE("run --trace: a file tiersim did not write is not replaced without --force",
          "[app][errors]") {
  if (!std::getenv("TIERSIM_BIN")) {
    WARN("TIERSIM_BIN not set: skipping");
    return;
  }
  tiersim::test::TempDir dir;
  std::ofstream(dir.file("notes.json")) << "my notes";
  Outcome o = run_tiersim("run " + kScenario + " --trace " + dir.file("notes.json"));
  CHECK(o.exit_code != 0);
  CHECK_THAT(o.output, Catch::Contains("not written by tiersim") && Catch::Contains("--force"));
  std::ifstream in(dir.file("notes.json"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "my notes");
  o = run_tiersim("run " + kScenario + " --force --trace " + dir.file("notes.json"));
  CHECK(o.exit_code == 0);
  o = run_tiersim("run " + kScenario + " --trace " + dir.file("notes.json"));  // now tiersim's
  CHECK(o.exit_code == 0);
}

TEST_CASE("a mistyped command is answered with the nearest command, and the help lines up",
          "[app][errors]") {
  if (!std::getenv("TIERSIM_BIN")) {
    WARN("TIERSIM_BIN not set: skipping");
    return;
  }
  Outcome o = run_tiersim("sweeep");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains("unknown command 'sweeep' (did you mean 'sweep'?)"));
  // No suggestion for a word that is near nothing, but the valid commands are still listed.
  o = run_tiersim("frobnicate");
  CHECK_THAT(o.output, !Catch::Contains("did you mean"));
  CHECK_THAT(o.output, Catch::Contains("Valid commands: run validate"));
  // Every summary starts in the same column, the longest name ("sensitivity") included.
  o = run_tiersim("--help");
  REQUIRE(o.exit_code == 0);
  std::size_t column = 0;
  int lines = 0;
  std::size_t pos = o.output.find("commands:\n");
  REQUIRE(pos != std::string::npos);
  std::istringstream in(o.output.substr(pos + 10));
  for (std::string line; std::getline(in, line) && !line.empty();) {
    const std::size_t name_end = line.find(' ', 2);
    const std::size_t summary = line.find_first_not_of(' ', name_end);
    if (column == 0) column = summary;
    CHECK(summary == column);
    ++lines;
  }
  CHECK(lines >= 13);
}

TEST_CASE("every command's --help prose fits a 100-column terminal", "[app][help]") {
  // The commands, as the top-level help lists them.
  const Outcome top = run_tiersim("--help");
  REQUIRE(top.exit_code == 0);
  std::vector<std::string> commands;
  std::istringstream list(top.output.substr(top.output.find("commands:\n") + 10));
  for (std::string line; std::getline(list, line) && !line.empty();) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    commands.push_back(name);
  }
  REQUIRE(commands.size() >= 13);
  for (const std::string& command : commands) {
    const Outcome o = run_tiersim(command + " --help");
    INFO(command << " --help");
    REQUIRE(o.exit_code == 0);
    std::istringstream in(o.output);
    for (std::string line; std::getline(in, line);) {
      // Example command lines are copied whole; a wrapped one would not paste.
      const std::size_t text = line.find_first_not_of(' ');
      if (text != std::string::npos && line.compare(text, 8, "tiersim ") == 0) continue;
      INFO(line);
      CHECK(line.size() <= 100);
    }
  }
}
TEST_CASE("replay: --scale outside (0, 1] and --passes past what fits say which option",
          "[app][errors][replay]") {
  if (!std::getenv("TIERSIM_BIN")) return;
  const std::string scenario =
      std::string(TIERSIM_SOURCE_DIR) + "/scenarios/inference/opt30b-l40s-gen5.yaml";
  for (const char* bad : {"-1", "2", "nan", "inf"}) {
    INFO(bad);
    const Outcome o = run_tiersim("replay " + scenario + " --target . --scale " + bad);
    CHECK(o.exit_code == 2);
    // The value as given (not std::to_string's "-1.000000"), before any warning about the drive.
    CHECK_THAT(o.output, Catch::StartsWith("tiersim replay: error: --scale " + std::string(bad) +
                                           ": expected a factor in (0, 1]"));
  }
}

}  // namespace app_input_errors_test
