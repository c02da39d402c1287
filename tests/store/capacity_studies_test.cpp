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

TEST_CASE("plan capacity: a serving plan's targets and answers per point, replaced per plan",
          "[store][capacity]") {
  tiersim::test::TempDir dir;
  store::Database db(dir.file("r.db"));
  CHECK(store::plan_capacities(db, "").empty());  // no table yet: nothing, not an error
  store::ensure_schema(db, store::SchemaPart::kSweeps);
  store::PlanCapacity six{"hardware.gpu.count=6", "aaaa", {}};
  six.study.sweep = "p";
  six.study.slo_ttft_s = 2.0;
  six.study.slo_tbt_s = 0.2;
  six.study.found = true;
  six.study.rate_requests_per_s = 2.1;
  store::PlanCapacity one{"hardware.gpu.count=1", "bbbb", {}};
  one.study.sweep = "p";
  one.study.slo_ttft_s = 2.0;
  one.study.zero_load_miss = true;
  one.study.limit = "cannot meet the SLO at any load: zero-load TTFT p90 2.5 s > 2 s target";
  store::PlanCapacity other{"x=1", "cccc", {}};
  other.study.sweep = "q";
  store::save_plan_capacity(db, six);
  store::save_plan_capacity(db, one);
  store::save_plan_capacity(db, other);
  const auto rows = store::plan_capacities(db, "p");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].point == "hardware.gpu.count=6");
  CHECK(rows[0].scenario_hash == "aaaa");
  CHECK(rows[0].study.found);
  CHECK(rows[0].study.rate_requests_per_s == 2.1);
  CHECK(rows[0].study.slo_tbt_s == 0.2);
  CHECK(rows[1].study.zero_load_miss);
  CHECK_FALSE(rows[1].study.slo_tbt_s);
  CHECK_FALSE(rows[1].study.rate_requests_per_s);
  CHECK(rows[1].study.limit == one.study.limit);
  CHECK(store::plan_capacities(db, "").size() == 3);
  // A new run of the plan searches again.
  store::clear_plan_capacity(db, "p");
  CHECK(store::plan_capacities(db, "p").empty());
  CHECK(store::plan_capacities(db, "q").size() == 1);
}
}  // namespace store_capacity_studies_test
