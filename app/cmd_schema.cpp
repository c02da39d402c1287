// `tiersim schema [--markdown] [--metrics]`: every scenario key from the one option table, or
// every output metric from the one metric table (sim/metrics.cpp).
#include <boost/program_options.hpp>
#include <iostream>

#include "app/command.hpp"
#include "config/options.hpp"
#include "sim/metrics.hpp"

namespace tiersim::app {

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
  if (vm.count("help")) {
    std::cout << desc << "\nexamples:\n  tiersim schema | grep policy.\n  tiersim schema --metrics\n";
    return kExitOk;
  }
  if (vm.count("metrics"))
    std::cout << sim::metrics_markdown();
  else
    std::cout << (vm.count("markdown") ? config::schema_markdown() : config::schema_text());
  return kExitOk;
}

}  // namespace tiersim::app
