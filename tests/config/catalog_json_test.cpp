// `tiersim catalog --json` (config/catalog_json.hpp): one key per kind asked for, every entry with
// its fields and sources, and an unknown kind named with the near match.
#include <catch2/catch.hpp>

#include "config/catalog.hpp"
#include "config/catalog_json.hpp"
#include "model/errors.hpp"

namespace config_catalog_json_test {

using namespace tiersim;

TEST_CASE("catalog_json: the kinds asked for, each entry with its sources", "[catalog]") {
  const config::Catalog c = config::Catalog::load(std::string(TIERSIM_SOURCE_DIR) + "/scenarios");
  const nlohmann::json drives = config::catalog_json(c, "drives");
  REQUIRE(drives.size() == 1);
  REQUIRE(drives["drives"].size() == c.drives().size());
  for (const auto& d : drives["drives"]) {
    CHECK(d.contains("name"));
    CHECK(d.contains("sources"));
  }
  const nlohmann::json all = config::catalog_json(c, "all");
  for (const char* kind : {"gpus", "drives", "hosts", "models", "prices"})
    CHECK(all.contains(kind));
  CHECK(all["drives"] == drives["drives"]);
}

TEST_CASE("catalog_json: an unknown kind suggests the near match", "[catalog]") {
  CHECK_THROWS_WITH(config::check_catalog_kind("drive"), Catch::Contains("did you mean 'drives'"));
  CHECK_NOTHROW(config::check_catalog_kind("prices"));
}
}  // namespace config_catalog_json_test
