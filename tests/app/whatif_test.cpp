// `tiersim whatif` through the program: one call answers, the JSON carries the same answer, and
// bad command lines are usage errors (exit 2) that say what to add.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace app_whatif_test {

namespace {

// Two identical boxes: b's server price has to rise for a to have 1.3x b's return per dollar
// (tokens/s per capex), so an answer exists by construction.
std::string comparison(const tiersim::test::TempDir& dir) {
  const std::string path = dir.file("cmp.yaml");
  std::ofstream(path) << "compare:\n"
                         "  name: t\n"
                         "  variants:\n"
                         "    - name: a\n"
                         "      scenario: &box\n"
                         "        name: box\n"
                         "        hardware:\n"
                         "          gpu: {model: L40S, count: 1}\n"
                         "          host: {model: generic-2s-ddr5, dram_gb: 256}\n"
                         "        model: {name: opt-6.7b}\n"
                         "        workload: {kind: inference, batch: 8, prompt_tokens: 128, "
                         "gen_tokens: 4}\n"
                         "        policy: {weights: cpu, kv_cache: gpu}\n"
                         "    - name: b\n"
                         "      scenario: *box\n";
  return path;
}

}  // namespace

TEST_CASE("whatif answers in one call, as text and as JSON", "[app][whatif]") {
  const std::string bin = tiersim::test::tiersim_bin();
  if (bin.empty()) {
    WARN("TIERSIM_BIN not set: skipping");
    return;
  }
  tiersim::test::TempDir dir;
  const std::string cmp = comparison(dir), out = dir.file("out");
  const std::string args = " whatif " + cmp +
                           " --variants a b --ratio 1.3 --vary-b economics.prices.platform_usd"
                           "=0.5:8 --quiet";
  REQUIRE(tiersim::test::shell(bin + args + " >" + out + " 2>&1") == 0);
  const std::string text = tiersim::test::slurp(out);
  CHECK_THAT(text, Catch::Contains("as given: a "));
  CHECK_THAT(text, Catch::Contains("answer: yes"));
  CHECK_THAT(text, Catch::Contains("settings of 'b': --set economics.prices.platform_usd="));
  CHECK_THAT(text, Catch::Contains("distance: "));

  REQUIRE(tiersim::test::shell(bin + args + " --json >" + out + " 2>&1") == 0);
  const nlohmann::json j = nlohmann::json::parse(tiersim::test::slurp(out));
  CHECK(j["found"] == true);
  CHECK(j["nearest"]["ratio"].get<double>() >= 1.3);
  CHECK(j["nearest"]["settings_a"].empty());
  CHECK(j["nearest"]["settings_b"].size() == 1);
  CHECK(j["points"].get<int>() <= 3000);
}

TEST_CASE("whatif: a bad command line says what is missing", "[app][whatif][errors]") {
  const std::string bin = tiersim::test::tiersim_bin();
  if (bin.empty()) {
    WARN("TIERSIM_BIN not set: skipping");
    return;
  }
  tiersim::test::TempDir dir;
  const std::string cmp = comparison(dir), out = dir.file("out");
  auto run = [&](const std::string& args) {
    const int rc = tiersim::test::shell(bin + " whatif " + args + " >" + out + " 2>&1");
    return std::pair{rc, tiersim::test::slurp(out)};
  };
  auto [rc1, t1] = run(cmp);
  CHECK(rc1 == 2);
  CHECK_THAT(t1, Catch::Contains("missing --ratio R"));
  auto [rc2, t2] = run(cmp + " --ratio 2 --vary economics.prices.gpu_usdd");
  CHECK(rc2 == 2);
  CHECK_THAT(t2, Catch::Contains("did you mean 'economics.prices.gpu_usd'?"));
  auto [rc3, t3] = run(cmp + " --ratio 2 --variants a c");
  CHECK(rc3 == 2);
  CHECK_THAT(t3, Catch::Contains("names no variant"));
  auto [rc4, t4] = run(cmp + " --ratio 2 --vary economics.pue=2:3");
  CHECK(rc4 == 2);
  CHECK_THAT(t4, Catch::Contains("LOW <= 1 <= HIGH"));
}
}  // namespace app_whatif_test
