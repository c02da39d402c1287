#pragma once
// One subcommand of the tiersim program. Each lives in its own app/cmd_<name>.cpp and is listed
// once in the table in app/main.cpp. Subcommands parse their own options with
// Boost.Program_options, throw tiersim::Error on bad input, and return the process exit code.
#include <string>
#include <vector>

namespace tiersim::app {

struct Command {
  const char* name;
  const char* summary;                              // one line for `tiersim --help`
  int (*run)(const std::vector<std::string>& args);  // args exclude the program and command name
};

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

}  // namespace tiersim::app
