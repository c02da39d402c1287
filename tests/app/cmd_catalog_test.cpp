// `tiersim catalog hosts`: the host table says how each platform runs its workloads, the label
// that picks the fault-in rate of fresh pages (model/perf.hpp fresh_pages_s); `catalog models`
// says which of an MoE's layers are dense.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace app_cmd_catalog_test {

namespace {

// The table row of one host, or "" when it is not listed.
std::string row_of(const std::string& table, const std::string& host) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(host + " ", 0) == 0) return line;
  return "";
}

}  // namespace

TEST_CASE("catalog hosts: each platform is listed as a VM or bare metal", "[app][catalog]") {
  tiersim::test::TempDir dir;
  const std::string out = tiersim::test::tiersim_stdout("catalog hosts", dir.file("out.txt"));
  CHECK(out.find("runs as") != std::string::npos);
  const std::string azure = row_of(out, "azure-nd-h200-v5");
  const std::string dgx = row_of(out, "dgx-h100");
  REQUIRE_FALSE(azure.empty());
  REQUIRE_FALSE(dgx.empty());
  CHECK(azure.find(" VM ") != std::string::npos);
  CHECK(azure.find("bare metal") == std::string::npos);
  CHECK(dgx.find("bare metal") != std::string::npos);
}

TEST_CASE("catalog models: an MoE's dense layers are listed with its experts", "[app][catalog]") {
  tiersim::test::TempDir dir;
  const std::string out = tiersim::test::tiersim_stdout("catalog models", dir.file("out.txt"));
  CHECK(row_of(out, "glm-4.5").find("160 (top-8) + shared 1536; 3 dense layers of 12288") !=
        std::string::npos);
  CHECK(row_of(out, "glm-4.5-air").find("; 1 dense layer of 10944") != std::string::npos);
  // Every layer with its experts: nothing more said.
  const std::string mixtral = row_of(out, "mixtral-8x7b");
  REQUIRE_FALSE(mixtral.empty());
  CHECK(mixtral.find("dense") == std::string::npos);
}

}  // namespace app_cmd_catalog_test
