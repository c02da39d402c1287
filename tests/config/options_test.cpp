// The option table's typed values and setters (config/options.hpp): a value read once and set
// through the option's setter writes what reading it into the scenario writes, with the same
// checks and error text.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "config/options.hpp"
#include "model/errors.hpp"

namespace config_options_test {

using namespace tiersim;
using namespace tiersim::config;

namespace {

YNode value(const std::string& text, const std::string& key) {
  return YNode(YAML::Load(text), std::make_shared<const std::string>("--set"), key, false);
}

// The option's value in `s` as YAML text (canonical for every type).
std::string text_of(const Option& o, Scenario& s) { return YAML::Dump(option_yaml(o, s)); }

}  // namespace

TEST_CASE("a typed value set through the setter is what reading it writes", "[config][options]") {
  const std::pair<const char*, const char*> cases[] = {
      {"workload.batch", "48"},
      {"policy.weight_bits", "8"},
      {"hardware.host.dram_gb", "768"},
      {"policy.aio.block_size", "4MiB"},
      {"policy.pin_memory", "false"},
      {"hardware.gpu.model", "L40S"},
      {"policy.io_path", "GDS"},
      {"policy.stack", "optimized"},
      {"policy.weights", "{gpu: 0.25, cpu: 0.75}"},
      {"policy.kv_cache", "cpu"}};
  for (const auto& [key, text] : cases) {
    INFO(key);
    const Option* o = find_option(key, WorkloadKind::kInference);
    REQUIRE(o != nullptr);
    Scenario read, set;
    read_option(value(text, key), *o, read);
    set_option(*o, parse_option_value(value(text, key), *o), set);
    CHECK(text_of(*o, read) == text_of(*o, set));
    // Different from the default-constructed scenario's, so the check above tests the setter.
    Scenario blank;
    CHECK(text_of(*o, set) != text_of(*o, blank));
  }
}

TEST_CASE("reading a typed value checks it as the loader does", "[config][options]") {
  const Option* batch = find_option("workload.batch", WorkloadKind::kInference);
  const Option* bits = find_option("policy.weight_bits", WorkloadKind::kInference);
  const Option* weights = find_option("policy.weights", WorkloadKind::kInference);
  CHECK_THROWS_WITH(parse_option_value(value("0", "workload.batch"), *batch),
                    Catch::Contains("--set: workload.batch: expected a positive integer, got '0'"));
  CHECK_THROWS_WITH(parse_option_value(value("12", "policy.weight_bits"), *bits),
                    Catch::Contains("expected one of 16, 8, 4, got '12'"));
  CHECK_THROWS_WITH(parse_option_value(value("{gpu: 0.5}", "policy.weights"), *weights),
                    Catch::Contains("fractions must sum to 1"));
  Scenario s;
  CHECK_THROWS_AS(read_option(value("0", "workload.batch"), *batch, s), ConfigError);
}
}  // namespace config_options_test
