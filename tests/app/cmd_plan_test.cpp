// `tiersim plan` as people read it: each best configuration with its error band, and whether the
// first's margin over the second is larger than the bands.
#include <catch2/catch.hpp>
#include <string>

#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace app_cmd_plan_test {

TEST_CASE("plan: each best configuration's error band and the margin against the bands",
          "[app][plan][accuracy][release-only]") {
  tiersim::test::TempDir dir;
  const std::string text = tiersim::test::tiersim_stdout(
      "plan scenarios/plans/opt66b-10tps.yaml --out '" + dir.file("plan") + "'",
      dir.file("out.txt"));
  INFO(text);
  CHECK(text.find("     error band ") != std::string::npos);
  CHECK(text.find("(group ") != std::string::npos);
  // The first against the second, on the objective, and what the bands say of it.
  CHECK(text.find("  1. is ") != std::string::npos);
  CHECK(text.find(" 2. on usd_per_million_tokens: ") != std::string::npos);
  const std::string json = tiersim::test::tiersim_stdout(
      "plan scenarios/plans/opt66b-10tps.yaml --json --force --out '" + dir.file("plan") + "'",
      dir.file("out.json"));
  CHECK(json.find("\"accuracy\"") != std::string::npos);
  CHECK(json.find("\"error_band_pct\"") != std::string::npos);
}

}  // namespace app_cmd_plan_test
