// The sweeps' own tables (store/sweep_tables.hpp): a sweep's row, its failures and its runs.
#include "store/sweep_tables.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "store/capacity_studies.hpp"
#include "store/schema.hpp"
#include "tests/temp_dir.hpp"

namespace store_sweep_tables_test {

namespace store = tiersim::store;

TEST_CASE("sweep tables: start, failures, finish, and a restart clears the failures",
          "[store][sweep]") {
  tiersim::test::TempDir dir;
  store::Database db(dir.file("r.db"));
  store::ensure_schema(db, store::SchemaPart::kResults);
  store::ensure_schema(db, store::SchemaPart::kSweeps);

  CHECK_FALSE(store::stored_sweep_definition(db, "s"));
  store::start_sweep(db, {"s", "s.yaml", "a sweep", "grid: {a: [1, 2]}"}, 2, "0.1.0");
  CHECK(store::stored_sweep_definition(db, "s") == std::string("grid: {a: [1, 2]}"));
  CHECK(store::sweep_run_count(db, "s") == 0);
  CHECK(store::sweep_run_hashes(db, "s").empty());

  store::record_sweep_failure(db, "s", "0: a=1", "", "does not load");
  store::record_sweep_failure(db, "s", "0: a=1", "", "still does not load");  // replaced
  store::record_sweep_failure(db, "s", "1: a=2", "abc", "too big");
  CHECK(store::sweep_failure_count(db, "s") == 2);
  CHECK(store::sweep_failure_count(db, "other") == 0);

  store::finish_sweep(db, "s");
  {
    auto st = db.prepare("SELECT finished_at IS NOT NULL, points FROM sweeps WHERE name = 's'");
    REQUIRE(st.step());
    CHECK(st.column_int(0) == 1);
    CHECK(st.column_int(1) == 2);
  }
  // Starting it again: a new definition replaces the row, unfinished, and failures are cleared.
  store::start_sweep(db, {"s", "s.yaml", "a sweep", "grid: {a: [1, 2, 3]}"}, 3, "0.1.0");
  CHECK(store::stored_sweep_definition(db, "s") == std::string("grid: {a: [1, 2, 3]}"));
  CHECK(store::sweep_failure_count(db, "s") == 0);
  auto st = db.prepare("SELECT finished_at IS NULL, points FROM sweeps WHERE name = 's'");
  REQUIRE(st.step());
  CHECK(st.column_int(0) == 1);
  CHECK(st.column_int(1) == 3);
}

TEST_CASE("sweep tables: a plan's verdicts are recorded, replaced per point and cleared per plan",
          "[store][sweep]") {
  tiersim::test::TempDir dir;
  store::Database db(dir.file("r.db"));
  store::ensure_schema(db, store::SchemaPart::kResults);
  store::ensure_schema(db, store::SchemaPart::kSweeps);
  CHECK(store::plan_verdicts(db, "p").empty());
  store::record_plan_verdict(db, "p", {"a=1", "h1", "rejected", "memory: does not fit"});
  store::record_plan_verdict(db, "p", {"a=2", "h2", "feasible", ""});
  store::record_plan_verdict(db, "p", {"a=1", "h1", "pruned", "budget: capex_usd 9 > max 5"});
  store::record_plan_verdict(db, "q", {"a=1", "h1", "feasible", ""});
  const auto p = store::plan_verdicts(db, "p");
  REQUIRE(p.size() == 2);
  CHECK(p[1].point == "a=1");
  CHECK(p[1].status == "pruned");
  CHECK(p[1].reason == "budget: capex_usd 9 > max 5");
  CHECK(store::plan_verdicts(db, "").size() == 3);  // every plan
  store::clear_plan_verdicts(db, "p");
  CHECK(store::plan_verdicts(db, "p").empty());
  CHECK(store::plan_verdicts(db, "q").size() == 1);
}

TEST_CASE("sweep tables: a sweeps part of version 1 gains plan_verdicts and plan_capacity when "
          "opened for writing",
          "[store][sweep]") {
  tiersim::test::TempDir dir;
  store::Database db(dir.file("old.db"));
  // The sweeps part as version 1 created it, with a sweep row.
  db.exec(R"sql(
CREATE TABLE schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL);
CREATE TABLE sweeps (name TEXT PRIMARY KEY, file TEXT, description TEXT, definition TEXT,
  points INTEGER, tool_version TEXT, started_at TEXT, finished_at TEXT);
CREATE TABLE sweep_failures (sweep TEXT NOT NULL, point TEXT NOT NULL, scenario_hash TEXT,
  reason TEXT NOT NULL, UNIQUE (sweep, point));
INSERT INTO schema_version VALUES ('sweeps', 1);
INSERT INTO sweeps (name, definition) VALUES ('s', 'grid: {a: [1]}');
)sql");
  CHECK(store::plan_verdicts(db, "s").empty());  // read before the migration: no table, no rows
  store::ensure_schema(db, store::SchemaPart::kSweeps);
  CHECK(store::stored_version(db, store::SchemaPart::kSweeps) == 3);
  CHECK(store::stored_sweep_definition(db, "s") == std::string("grid: {a: [1]}"));
  store::record_plan_verdict(db, "s", {"a=1", "h", "feasible", ""});
  CHECK(store::plan_verdicts(db, "s").size() == 1);
  store::PlanCapacity row{"a=1", "h", {}};
  row.study.sweep = "s";
  store::save_plan_capacity(db, row);
  CHECK(store::plan_capacities(db, "s").size() == 1);
}
}  // namespace store_sweep_tables_test
