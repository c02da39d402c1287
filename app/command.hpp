#pragma once
// One subcommand of the tiersim program. Each lives in its own app/cmd_<name>.cpp and is listed
// once in the table in app/main.cpp. Subcommands parse their own options with
// Boost.Program_options, throw tiersim::Error on bad input, and return the process exit code.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

namespace tiersim::app {

struct Command {
  const char* name;
  const char* summary;                              // one line for `tiersim --help`
  int (*run)(const std::vector<std::string>& args);  // args exclude the program and command name
};

// The help line of every subcommand's --data-dir (the folder the catalogs are read from).
inline constexpr const char* kDataDirHelp =
    "folder holding catalog/ (default: $TIERSIM_DATA_DIR or the source tree's scenarios/)";
// The help lines of --sense and --set in the studies that compare two configurations (breakeven,
// whatif).
inline constexpr const char* kSenseHelp =
    "minimize or maximize: which direction of the metric is better (known for the common "
    "metrics; needed for others)";
inline constexpr const char* kSetBothHelp =
    "override one scenario key in both configurations first, e.g. --set workload.batch=100";

// Parses a subcommand's arguments: the options of `visible` (what --help shows) and of `hidden`,
// with the bare words going to the option named `positional` (at most `max_count` of them; -1:
// any number). Boost's errors propagate as they are (main.cpp reports them).
inline boost::program_options::variables_map parse_command_line(
    const std::vector<std::string>& args, const boost::program_options::options_description& visible,
    const boost::program_options::options_description& hidden, const char* positional,
    int max_count) {
  namespace po = boost::program_options;
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description pos;
  pos.add(positional, max_count);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  return vm;
}

// The same for the commands that take FILE... (scenarios or comparison files, any number: compare
// and the studies of a comparison), the bare words going into `files`.
inline boost::program_options::variables_map parse_command_line(
    const std::vector<std::string>& args,
    const boost::program_options::options_description& visible, std::vector<std::string>& files) {
  namespace po = boost::program_options;
  po::options_description hidden;
  hidden.add_options()("files", po::value<std::vector<std::string>>(&files));
  return parse_command_line(args, visible, hidden, "files", -1);
}

// --help: when asked for, prints the options `visible` shows and then `examples` under an
// "examples:" heading, the layout every subcommand's help shares, and returns true (the command
// then returns kExitOk).
inline bool printed_help(const boost::program_options::variables_map& vm,
                         const boost::program_options::options_description& visible,
                         const char* examples) {
  if (!vm.count("help")) return false;
  std::cout << visible << "\nexamples:\n" << examples;
  return true;
}

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;     // the command ran and found a problem (e.g. validation)
inline constexpr int kExitUsage = 2;       // bad command line or bad input file
inline constexpr int kExitDoesNotFit = 3;  // `run`: the configuration does not fit its memory

// `s` left-aligned in a text-table column `width` characters wide (followed by one space when it
// is wider), for the commands that print tables.
inline std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

int cmd_run(const std::vector<std::string>& args);
int cmd_catalog(const std::vector<std::string>& args);
int cmd_validate(const std::vector<std::string>& args);
int cmd_schema(const std::vector<std::string>& args);
int cmd_calibrate(const std::vector<std::string>& args);
int cmd_capacity(const std::vector<std::string>& args);
int cmd_compare(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);
int cmd_plan(const std::vector<std::string>& args);
int cmd_replay(const std::vector<std::string>& args);
int cmd_report(const std::vector<std::string>& args);
int cmd_sensitivity(const std::vector<std::string>& args);
int cmd_breakeven(const std::vector<std::string>& args);
int cmd_whatif(const std::vector<std::string>& args);

}  // namespace tiersim::app
