#pragma once
// Helpers shared by the test files.
#include <string>
#include <vector>

#include "config/scenario_loader.hpp"

namespace tiersim::test {

// Loads a scenario written inline in a test, with optional --set style overrides.
inline Scenario load_yaml(const std::string& yaml, std::vector<std::string> sets = {}) {
  config::LoadOptions o;
  o.overrides = std::move(sets);
  return config::load_scenario_text(yaml, "test.yaml", o);
}

}  // namespace tiersim::test
