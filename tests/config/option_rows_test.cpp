// The rows each workload contributes to the option table from its own folder
// (sim/workloads/<name>/options.cpp, config/option_rows.hpp).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/option_rows.hpp"
#include "config/options.hpp"

namespace config_option_rows_test {

using namespace tiersim;
using namespace tiersim::config;

namespace {

struct Contribution {
  WorkloadKind kind;
  std::string name;
  WorkloadOptionRows rows;
};

std::vector<Contribution> contributions() {
  std::vector<Contribution> all;
#define TIERSIM_WORKLOAD(Enumerator, name)                         \
  all.push_back(Contribution{WorkloadKind::Enumerator, #name, {}}); \
  name##_option_rows(all.back().rows);
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD
  return all;
}

}  // namespace

TEST_CASE("each workload's rows apply to that workload and are in the table", "[config][options]") {
  for (const auto& c : contributions()) {
    for (const auto* section : {&c.rows.workload, &c.rows.policy}) {
      for (const Option& o : *section) {
        INFO(c.name << ": " << o.path);
        // A row in a workload's folder that did not apply to that workload would be found in
        // the wrong place; rows shared with another kind (the checkpoint writer keys, which
        // training uses too) carry both bits.
        CHECK((o.kinds & kind_bit(c.kind)) != 0);
        CHECK(o.kinds != kAllKinds);
        const Option* in_table = find_option(o.path, c.kind);
        REQUIRE(in_table != nullptr);
        CHECK(in_table->help == o.help);
      }
    }
  }
}

TEST_CASE("workload rows follow workload.kind and policy rows follow the common policy rows",
          "[config][options]") {
  const auto& table = scenario_options();
  std::size_t kind_at = table.size(), first_workload_row = table.size();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i].path == "workload.kind") kind_at = i;
    if (first_workload_row == table.size() && table[i].kinds != kAllKinds &&
        table[i].path.rfind("workload.", 0) == 0)
      first_workload_row = i;
  }
  REQUIRE(kind_at < table.size());
  // workload.kind is read first by the loader and the kind-specific rows come right after it.
  CHECK(first_workload_row == kind_at + 1);
  std::size_t rows = 0;
  for (const auto& c : contributions()) rows += c.rows.workload.size() + c.rows.policy.size();
  std::size_t kind_specific = 0;
  for (const auto& o : table) kind_specific += o.kinds != kAllKinds;
  // Every kind-specific row of the table comes from a workload folder.
  CHECK(rows == kind_specific);
}
}  // namespace config_option_rows_test
