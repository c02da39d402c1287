// `tiersim run` as people read it: where the time goes, and values in people's forms.
#include <catch2/catch.hpp>
#include <string>

#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

TEST_CASE("run: the time breakdown and values in people's forms", "[app][run][breakdown]") {
  tiersim::test::TempDir dir;
  const std::string text = tiersim::test::tiersim_stdout(
      "run scenarios/inference/opt30b-l40s-dram.yaml", dir.file("out.txt"));
  INFO(text);
  CHECK(text.find("where the time goes") != std::string::npos);
  CHECK(text.find("prefill KV cache write-back to host") != std::string::npos);
  CHECK(text.find("bottleneck ") != std::string::npos);
  // capex as dollars with separators, bytes with their unit.
  CHECK(text.find("capex_usd                   $") != std::string::npos);
  CHECK(text.find("weights_bytes               ") != std::string::npos);
  CHECK(text.find(" GB\n") != std::string::npos);
  // The phase_* metrics are the breakdown's rows, not lines of the metric list.
  CHECK(text.find("  phase_") == std::string::npos);
}
