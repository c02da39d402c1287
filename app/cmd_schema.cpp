// `tiersim schema [--markdown] [--metrics]`: every scenario key from the one option table, or
// every output metric from the one metric table (sim/metrics.cpp).
#include <boost/program_options.hpp>
#include <iostream>
#include <sstream>

#include "app/command.hpp"
#include "config/options.hpp"
#include "model/files.hpp"
#include "sim/metrics.hpp"
#include "sim/workloads/workload.hpp"
#include "study/sweep.hpp"

namespace tiersim::app {

namespace {

// The stated limits that are not one key's range: each is checked before the work or memory it
// bounds, with an error naming the key or file.
std::string limits_text() {
  std::ostringstream os;
  os << "limits (beyond the ranges above):\n"
     << "  sweep points (the product of the axis sizes)   at most " << sweep::kMaxSweepPoints << "\n"
     << "  plan points (the product of the axis sizes)    at most " << sweep::kMaxPlanPoints << "\n"
     << "  pieces of one simulated transfer (policy.aio.block_size, workload.io_buffer)  at most "
     << static_cast<long long>(sim::kMaxTransferPieces) << "\n"
     << "  input files (scenario, catalog, sweep, plan, device profile)  regular files of at most "
     << (kMaxInputFileBytes >> 20) << " MiB\n"
     << "  request traces (workload.trace)                regular files of at most "
     << (kMaxTraceFileBytes >> 20) << " MiB\n";
  return os.str();
}

}  // namespace

int cmd_schema(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description desc(
      "usage: tiersim schema [--markdown] [--metrics]\n\n"
      "Prints every scenario key (type, unit, range, default, meaning), or with --metrics every\n"
      "output metric (unit, which workloads report it, meaning).\n\noptions");
  desc.add_options()("help,h", "show this help")(
      "markdown", "print a Markdown table (the one in scenarios/README.md)")(
      "metrics", "print the output metrics as a Markdown table (the one in scenarios/README.md)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).run(), vm);
  po::notify(vm);
  if (printed_help(vm, desc, "  tiersim schema | grep policy.\n  tiersim schema --metrics\n"))
    return kExitOk;
  if (vm.count("metrics"))
    std::cout << sim::metrics_markdown();
  else if (vm.count("markdown"))
    std::cout << config::schema_markdown();
  else
    std::cout << config::schema_text() << "\n" << limits_text();
  return kExitOk;
}

}  // namespace tiersim::app
