// The table of serving capacity searches (store/capacity_studies.hpp): a search's answer and the
// run that stands for its configuration, read back as written.
#include "store/capacity_studies.hpp"

#include <catch2/catch.hpp>

#include "store/schema.hpp"
#include "tests/temp_dir.hpp"

namespace store_capacity_studies_test {

namespace store = tiersim::store;

TEST_CASE("capacity studies: saved, replaced per sweep, read back with their optional fields",
          "[store][capacity]") {
  tiersim::test::TempDir dir;
  store::Database db(dir.file("r.db"));
  CHECK(store::capacity_studies(db).empty());  // no table yet: nothing, not an error
  store::ensure_schema(db, store::SchemaPart::kResults);
  store::CapacityStudy found;
  found.sweep = "capacity:a";
  found.scenario_name = "a";
  found.slo_ttft_s = 2.0;
  found.found = true;
  found.rate_requests_per_s = 1.25;
  found.failing_rate_requests_per_s = 1.27;
  found.limit = "slo attainment 88.0% < 90.0%";
  store::CapacityStudy none;
  none.sweep = "capacity:b";
  none.scenario_name = "b";
  none.attainment_pct = 99;
  none.slo_tbt_s = 0.2;
  none.stability = false;
  none.zero_load_miss = true;
  none.failing_rate_requests_per_s = 5e-8;
  none.limit = "cannot meet the SLO at any load: zero-load TPOT p99 0.3 s > 0.2 s target";
  store::save_capacity_study(db, none);
  store::save_capacity_study(db, found);
  found.rate_requests_per_s = 1.5;  // the same sweep searched again: replaced
  store::save_capacity_study(db, found);
  const auto studies = store::capacity_studies(db);
  REQUIRE(studies.size() == 2);
  const auto& a = studies[0];
  CHECK(a.sweep == "capacity:a");
  CHECK(a.found);
  CHECK(a.rate_requests_per_s == 1.5);
  CHECK(a.slo_ttft_s == 2.0);
  CHECK_FALSE(a.slo_tbt_s);
  CHECK_FALSE(a.entry_run);
  CHECK(a.stability);
  CHECK_FALSE(a.created_at.empty());
  const auto& b = studies[1];
  CHECK_FALSE(b.found);
  CHECK(b.zero_load_miss);
  CHECK_FALSE(b.stability);
  CHECK(b.attainment_pct == 99);
  CHECK_FALSE(b.rate_requests_per_s);
  CHECK(b.failing_rate_requests_per_s == 5e-8);
  CHECK(b.limit == none.limit);
}
}  // namespace store_capacity_studies_test
