// tiersim: predicts what happens when an LLM's weights, KV cache or optimizer states live in
// cheaper memory (host DRAM, NVMe). Library code throws typed errors; only this file exits.
#include <algorithm>
#include <boost/program_options/errors.hpp>
#include <iostream>
#include <string>
#include <vector>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "app/command.hpp"
#include "config/yaml_reader.hpp"
#include "model/errors.hpp"

namespace {

using tiersim::app::Command;

constexpr Command kCommands[] = {
    {"run", "simulate one scenario file and print its predictions", tiersim::app::cmd_run},
    {"validate", "compare predictions with the published reference measurements",
     tiersim::app::cmd_validate},
    {"catalog", "list the GPUs, drives, hosts and models the catalogs define",
     tiersim::app::cmd_catalog},
    {"schema", "print every scenario key with its type, unit, range, default and help",
     tiersim::app::cmd_schema},
    {"calibrate", "measure drives with io_uring, fit the device model, write a device profile",
     tiersim::app::cmd_calibrate},
    {"capacity",
     "largest trainable model per ZeRO strategy; highest arrival rate a serving scenario sustains "
     "within its SLO",
     tiersim::app::cmd_capacity},
    {"compare", "run several configurations; speed, energy per token and cost side by side",
     tiersim::app::cmd_compare},
    {"sweep", "simulate every point of a sweep file in parallel (or under mpirun) into the results "
              "database, resuming where it stopped",
     tiersim::app::cmd_sweep},
    {"plan", "find the cheapest configuration meeting constraints, and the Pareto front",
     tiersim::app::cmd_plan},
    {"replay", "run a scenario's offload schedule on a real drive; measured vs predicted (--suite)",
     tiersim::app::cmd_replay},
    {"report", "write an HTML/Markdown/CSV cost report from a results database",
     tiersim::app::cmd_report},
    {"sensitivity", "tornado table: how much each price, rate and bandwidth moves a metric",
     tiersim::app::cmd_sensitivity},
    {"breakeven", "the value of one input at which two configurations tie on a metric",
     tiersim::app::cmd_breakeven},
    {"whatif",
     "what would it take: the nearest assumptions under which one configuration beats another "
     "by a ratio",
     tiersim::app::cmd_whatif},
};

void print_usage(std::ostream& os) {
  os << "tiersim " << TIERSIM_VERSION
     << ": simulate LLM inference and training with weights offloaded to host DRAM or NVMe.\n\n"
        "usage: tiersim <command> [options]     (tiersim <command> --help for its options)\n\n"
        "commands:\n";
  // The summaries line up two spaces after the longest command name.
  std::size_t width = 0;
  for (const auto& c : kCommands) width = std::max(width, std::string(c.name).size());
  for (const auto& c : kCommands) {
    const std::string name = c.name;
    os << "  " << name << std::string(width + 2 - name.size(), ' ') << c.summary << "\n";
  }
  os << "\nexample:\n  tiersim run scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(std::cerr);
    return tiersim::app::kExitUsage;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(std::cout);
    return tiersim::app::kExitOk;
  }
  if (name == "--version") {
    std::cout << "tiersim " << TIERSIM_VERSION << "\n";
    return tiersim::app::kExitOk;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
#if defined(__GLIBC__)
  // A study builds and frees thousands of resolved scenarios, each a few hundred small blocks
  // (provenance, catalog sources, the resolved YAML). glibc keeps freed small blocks in its
  // fastbins and coalesces them all in one pass the next time a larger block is asked for; over a
  // plan those passes were about 12% of its cycles (perf: malloc_consolidate, unlink_chunk).
  // Without fastbins a freed block is coalesced as it is freed (the per-thread cache still
  // serves small blocks): `plan --no-prune` on scenarios/plans/opt66b-10tps.yaml took 10-13%
  // less CPU, outputs unchanged. Process set-up, so here in main; other platforms' allocators
  // have no such knob.
  mallopt(M_MXFAST, 0);
#endif
  for (const auto& c : kCommands) {
    if (name != c.name) continue;
    try {
      return c.run(args);
    } catch (const tiersim::Error& e) {
      std::cerr << "tiersim " << name << ": error: " << e.what() << "\n";
      return tiersim::app::kExitUsage;
    } catch (const boost::program_options::error& e) {
      std::cerr << "tiersim " << name << ": " << e.what() << " (see tiersim " << name
                << " --help)\n";
      return tiersim::app::kExitUsage;
    } catch (const std::exception& e) {
      std::cerr << "tiersim " << name << ": internal error: " << e.what() << "\n";
      return tiersim::app::kExitFailure;
    }
  }
  std::vector<std::string> names;
  for (const auto& c : kCommands) names.emplace_back(c.name);
  std::cerr << "tiersim: unknown command '" << name << "'"
            << tiersim::config::did_you_mean(name, names)
            << ". Valid commands: " << tiersim::config::join(names, " ") << "\n";
  return tiersim::app::kExitUsage;
}
