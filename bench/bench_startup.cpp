// Whole-process start-up: `tiersim run` on the README's scenario against `tiersim --help`, each a
// fresh process as a user starts it (exec, dynamic linking, static initialisers, option table,
// catalogs, scenario, simulation, output). The CPU time (user + system) of each child is read from
// wait4; the loaded and simulated run should cost at most 1.5 times the help (issue 29).
//
//   build/bench/bench_startup --benchmark_counters_tabular=true
//   TIERSIM_BIN=other/tiersim build/bench/bench_startup   (another build, e.g. main's, to compare)
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace {

const std::string kScenario =
    std::string(TIERSIM_SOURCE_DIR) + "/scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml";

// CPU seconds (user + system) of one run of the program with `args`, its output discarded;
// nullopt when it cannot be started or does not exit with 0.
std::optional<double> process_cpu_s(std::vector<std::string> args) {
  const char* other = std::getenv("TIERSIM_BIN");
  std::string program = other && *other ? other : TIERSIM_PROGRAM;
  std::vector<char*> argv{program.data()};
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int started = posix_spawn(&pid, program.c_str(), &files, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  if (started != 0) return std::nullopt;
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return std::nullopt;
  const auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// One process per iteration; counters: its CPU time in ms.
void process_loop(benchmark::State& state, const std::vector<std::string>& args) {
  double cpu_s = 0;
  for (auto _ : state) {
    const auto s = process_cpu_s(args);
    if (!s) {
      state.SkipWithError("tiersim did not start or failed");
      return;
    }
    cpu_s += *s;
  }
  state.counters["cpu_ms"] = cpu_s * 1e3 / double(state.iterations());
}

void BM_ProcessHelp(benchmark::State& state) {
  process_loop(state, {"--help"});
}
BENCHMARK(BM_ProcessHelp)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_ProcessRun(benchmark::State& state) {
  process_loop(state, {"run", kScenario});
}
BENCHMARK(BM_ProcessRun)->UseRealTime()->Unit(benchmark::kMillisecond);

// Both side by side, alternating, so that a busy machine weighs on both alike; ratio: run's CPU
// time over help's (the target is at most 1.5).
void BM_ProcessRunOverHelp(benchmark::State& state) {
  double run_s = 0, help_s = 0;
  for (auto _ : state) {
    const auto run = process_cpu_s({"run", kScenario});
    const auto help = process_cpu_s({"--help"});
    if (!run || !help) {
      state.SkipWithError("tiersim did not start or failed");
      return;
    }
    run_s += *run;
    help_s += *help;
  }
  const double n = double(state.iterations());
  state.counters["run_cpu_ms"] = run_s * 1e3 / n;
  state.counters["help_cpu_ms"] = help_s * 1e3 / n;
  state.counters["ratio"] = help_s > 0 ? run_s / help_s : 0;
}
BENCHMARK(BM_ProcessRunOverHelp)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
