// tiersim capacity: the largest model of a training scenario's shape family that fits, per ZeRO
// strategy (plain data parallel, ZeRO-3, ZeRO-Offload to host DRAM, ZeRO-Infinity to NVMe).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "app/command.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "model/training_memory.hpp"

namespace po = boost::program_options;

namespace tiersim::app {

namespace {

struct Strategy {
  const char* name;
  int stage;
  Tier params, gradients, optimizer;
};

// The strategies of the ZeRO-Infinity paper's model-scale comparison.
constexpr Strategy kStrategies[] = {
    {"data_parallel", 0, Tier::kGpu, Tier::kGpu, Tier::kGpu},
    {"zero3", 3, Tier::kGpu, Tier::kGpu, Tier::kGpu},
    {"zero_offload_cpu", 3, Tier::kCpu, Tier::kCpu, Tier::kCpu},
    {"zero_infinity_nvme", 3, Tier::kNvme, Tier::kCpu, Tier::kNvme},
};

}  // namespace

int cmd_capacity(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim capacity FILE [options]\n\n"
      "For a training scenario, finds the largest model of its shape family (workload.capacity_shape)\n"
      "that fits GPU memory, host DRAM and NVMe, for each ZeRO strategy: plain data parallel,\n"
      "ZeRO-3, ZeRO-Offload (states in host DRAM) and ZeRO-Infinity (states on NVMe).\n\n"
      "options");
  std::string file, data_dir;
  std::vector<std::string> sets;
  opts.add_options()("help,h", "show this help")("file", po::value<std::string>(&file),
                                                  "training scenario file")(
      "data-dir", po::value<std::string>(&data_dir), "folder holding catalog/")(
      "set", po::value<std::vector<std::string>>(&sets), "override one scenario key, key=value");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help") || file.empty()) {
    std::cout << opts << "\nexample:\n  tiersim capacity scenarios/training/dgx2-zero3.yaml\n";
    return vm.count("help") ? kExitOk : kExitUsage;
  }
  config::LoadOptions load;
  load.overrides = sets;
  load.data_dir = data_dir;
  const Scenario base = config::load_scenario(file, load);
  if (base.kind != WorkloadKind::kTraining)
    throw Error(file + ": capacity needs a training workload (workload.kind: training)");
  const ExecutionModel em;
  std::printf("%-20s %12s %8s %8s  %s\n", "strategy", "max_params_b", "layers", "hidden",
              "next step is limited by");
  for (const auto& st : kStrategies) {
    Scenario s = base;
    s.training.zero_stage = st.stage;
    s.training.params = st.params;
    s.training.gradients = st.gradients;
    s.training.optimizer = st.optimizer;
    s.training.optimizer_on_cpu = st.optimizer != Tier::kGpu;
    const bool needs_nvme = st.params == Tier::kNvme || st.optimizer == Tier::kNvme;
    if (needs_nvme && s.hardware.nvme.count <= 0) {
      std::printf("%-20s %12s %8s %8s  %s\n", st.name, "-", "-", "-", "no NVMe drives");
      continue;
    }
    const CapacitySearch r = largest_trainable(s, em);
    if (!r.found) {
      std::printf("%-20s %12s %8s %8s  %s\n", st.name, "none", "-", "-", r.limit.c_str());
      continue;
    }
    std::printf("%-20s %12.2f %8d %8d  %s\n", st.name, r.params / 1e9, r.model.layers,
                r.model.hidden, r.limit.c_str());
  }
  return kExitOk;
}

}  // namespace tiersim::app
