// `tiersim schema [--markdown]`: every scenario key from the one option table.
#include <boost/program_options.hpp>
#include <iostream>

#include "app/command.hpp"
#include "config/options.hpp"

namespace tiersim::app {

int cmd_schema(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description desc("tiersim schema [--markdown]: print every scenario key");
  desc.add_options()("help,h", "show this help")(
      "markdown", "print a Markdown table (the one in scenarios/README.md)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return kExitOk;
  }
  std::cout << (vm.count("markdown") ? config::schema_markdown() : config::schema_text());
  return kExitOk;
}

}  // namespace tiersim::app
