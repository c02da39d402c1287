// The results store: round trip, transactions, duplicates.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "config/scenario_loader.hpp"
#include "sim/simulate.hpp"
#include "store/results_store.hpp"
#include "store/schema.hpp"
#include "tests/temp_dir.hpp"

namespace store = tiersim::store;

using namespace tiersim;
using tiersim::store::ResultsStore;

namespace {

std::string reference(const std::string& name) {
  return std::string(TIERSIM_SOURCE_DIR) + "/scenarios/reference/" + name;
}

Scenario load(const std::string& name) {
  config::LoadOptions opts;
  opts.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  return config::load_scenario(reference(name), opts);
}

sim::RunResult simulate_traced(const Scenario& s) {
  sim::SimOptions o;
  o.trace = true;
  return sim::simulate(s, o);
}

}  // namespace

TEST_CASE("results store: a run comes back identical and its YAML re-loads to the same hash",
          "[report][store]") {
  test::TempDir dir;
  const Scenario s = load("llama3-70b-a100-4x-gen4-aio.yaml");
  const sim::RunResult r = simulate_traced(s);
  REQUIRE(!r.metrics.empty());
  REQUIRE(!r.timeline.empty());

  std::int64_t id = 0;
  {
    store::ResultsStore store(dir.file("results.sqlite"));
    id = store.save(s, r, "9.9.9");
    CHECK(store.has(s.hash));
    CHECK_FALSE(store.has(s.hash, "some-sweep"));
  }
  // A fresh connection reads what the first one committed.
  store::ResultsStore store(dir.file("results.sqlite"));
  const auto back = store.run(id);
  REQUIRE(back);
  CHECK(back->scenario_name == s.name);
  CHECK(back->scenario_hash == s.hash);
  CHECK(back->scenario_yaml == s.resolved_yaml);
  CHECK(back->tool_version == "9.9.9");
  CHECK(back->workload == r.workload);
  CHECK(back->fits == r.fits);
  CHECK(back->bottleneck == r.bottleneck);
  CHECK(back->sweep.empty());
  REQUIRE(back->metrics.size() == r.metrics.size());
  for (const auto& m : r.metrics) {
    INFO(m.name);
    const sim::Metric* got = back->find_metric(m.name);
    REQUIRE(got);
    CHECK(got->value == m.value);  // REAL round-trips a double bit-exactly
    CHECK(got->unit == m.unit);
  }
  REQUIRE(back->memory.size() == r.memory.size());
  for (std::size_t i = 0; i < r.memory.size(); ++i) {
    CHECK(back->memory[i].tier == r.memory[i].tier);
    CHECK(back->memory[i].required_bytes == r.memory[i].required_bytes);
    CHECK(back->memory[i].capacity_bytes == r.memory[i].capacity_bytes);
  }
  REQUIRE(back->utilization.size() == r.utilization.size());
  CHECK(back->provenance == s.provenance);
  // Only one step's spans, capped.
  CHECK(!back->timeline.empty());
  CHECK(back->timeline.size() <= store::kMaxTimelineRows);
  CHECK(back->timeline.size() < r.timeline.size());

  config::LoadOptions opts;
  opts.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  const Scenario again = config::load_scenario_text(back->scenario_yaml, "stored run", opts);
  CHECK(again.hash == s.hash);
}

TEST_CASE("results store: duplicates are replaced or skipped, never repeated", "[report][store]") {
  store::ResultsStore store(":memory:");
  const Scenario s = load("opt30b-a6000-quant.yaml");
  sim::RunResult r = sim::simulate(s);
  const auto first = store.save(s, r, "1");
  r.set("throughput_tokens_per_s", 123.0, "tokens/s");
  const auto second = store.save(s, r, "2");  // default: replace atomically
  CHECK(second != first);
  auto all = store.runs();
  REQUIRE(all.size() == 1);
  CHECK(all[0].tool_version == "2");
  CHECK(all[0].metric("throughput_tokens_per_s") == 123.0);
  CHECK_FALSE(store.run(first));

  const auto skipped = store.save(s, r, "3", "", store::OnDuplicate::kSkip);
  CHECK(skipped == second);
  CHECK(store.runs().at(0).tool_version == "2");

  // The same hash in a sweep is a different run; within the sweep it is unique too.
  const auto in_sweep = store.save(s, r, "4", "batch");
  CHECK(store.save(s, r, "5", "batch", store::OnDuplicate::kSkip) == in_sweep);
  CHECK(store.runs().size() == 2);
  store::RunFilter f;
  f.sweep = "batch";
  CHECK(store.runs(f).size() == 1);
  f.sweep = "";
  CHECK(store.runs(f).size() == 1);
  CHECK(store.sweeps() == std::vector<std::string>{"batch"});
  // The table itself refuses a duplicate outside any sweep (the NULL-sweep case).
  CHECK_THROWS_AS(store.database().exec(
                      "INSERT INTO runs (created_at, tool_version, scenario_name, scenario_hash, "
                      "scenario_yaml, workload, fits) SELECT created_at, tool_version, "
                      "scenario_name, scenario_hash, scenario_yaml, workload, fits FROM runs "
                      "WHERE sweep IS NULL"),
                  StoreError);
}

TEST_CASE("results store: a failed save leaves no partial run", "[report][store]") {
  test::TempDir dir;
  store::ResultsStore store(dir.file("r.sqlite"));
  const Scenario s = load("opt30b-a6000-quant.yaml");
  const sim::RunResult good = sim::simulate(s);
  store.save(s, good, "1");
  // A metric name twice violates metrics' primary key after the runs row went in.
  sim::RunResult bad = good;
  bad.metrics.push_back(bad.metrics.front());
  Scenario other = s;
  other.hash = "0000000000000000";
  CHECK_THROWS_AS(store.save(other, bad, "1"), StoreError);
  CHECK_FALSE(store.has(other.hash));
  CHECK(store.runs().size() == 1);
  // Replacing with a bad result keeps the old run.
  CHECK_THROWS_AS(store.save(s, bad, "2"), StoreError);
  REQUIRE(store.runs().size() == 1);
  CHECK(store.runs()[0].tool_version == "1");
  auto orphans = store.database().prepare(
      "SELECT count(*) FROM metrics WHERE run_id NOT IN (SELECT id FROM runs)");
  REQUIRE(orphans.step());
  CHECK(orphans.column_int(0) == 0);
}

TEST_CASE("results store: unopenable path names the file", "[report][store]") {
  try {
    store::ResultsStore store("/nonexistent-dir-for-tiersim/x.sqlite");
    FAIL("expected StoreError");
  } catch (const StoreError& e) {
    CHECK(std::string(e.what()).find("cannot open results database") != std::string::npos);
  }
}

TEST_CASE("results store: a compare variant's name is stored; runs without one read back empty",
          "[report][store]") {
  test::TempDir dir;
  const Scenario a = load("llama3-70b-a100-4x-gen4-aio.yaml");
  const Scenario b = load("opt30b-a6000-quant-kvoffload.yaml");
  store::ResultsStore store(dir.file("results.sqlite"));
  const auto ia =
      store.save(a, sim::simulate(a), "9.9.9", "", store::OnDuplicate::kReplace, "four-a100");
  const auto ib = store.save(b, sim::simulate(b), "9.9.9");
  CHECK(store.run(ia)->variant == "four-a100");
  CHECK(store.run(ia)->display_name() == "four-a100");
  CHECK(store.run(ib)->variant.empty());
  CHECK(store.run(ib)->display_name() == b.name);
  auto st = store.database().prepare("SELECT count(*) FROM runs WHERE variant IS NULL");
  REQUIRE(st.step());
  CHECK(st.column_int(0) == 1);  // "" is stored as NULL, as sweep is
}

namespace {

// The runs table as results schema version 1 created it (before runs.variant), with its version
// row, exactly as a tiersim of that version left a file. Only the tables a run row needs.
void write_version_1_database(const std::string& path) {
  store::Database db(path);
  db.exec(R"sql(
CREATE TABLE schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  scenario_name TEXT NOT NULL,
  scenario_hash TEXT NOT NULL,
  scenario_yaml TEXT NOT NULL,
  workload TEXT NOT NULL,
  fits INTEGER NOT NULL,
  shortfall TEXT,
  bottleneck TEXT,
  sweep TEXT NULL,
  UNIQUE (scenario_hash, sweep)
);
CREATE UNIQUE INDEX runs_hash_sweep ON runs (scenario_hash, ifnull(sweep, ''));
CREATE INDEX runs_sweep ON runs (sweep);
CREATE TABLE metrics (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name TEXT NOT NULL, value REAL, unit TEXT, PRIMARY KEY (run_id, name));
CREATE TABLE memory (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  tier TEXT NOT NULL, required_bytes REAL, capacity_bytes REAL);
CREATE TABLE utilization (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  resource TEXT NOT NULL, utilization REAL, busy_s REAL);
CREATE TABLE timeline (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  resource TEXT NOT NULL, label TEXT, start_s REAL, end_s REAL, phase INTEGER, item INTEGER);
CREATE TABLE provenance (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key TEXT NOT NULL, source TEXT, PRIMARY KEY (run_id, key));
INSERT INTO schema_version VALUES ('results', 1);
INSERT INTO runs (created_at, tool_version, scenario_name, scenario_hash, scenario_yaml,
  workload, fits, shortfall, bottleneck, sweep)
  VALUES ('2026-01-01T00:00:00Z', '0.1', 'old-run', '0123456789abcdef', 'name: old-run',
          'inference', 1, '', 'nvme', NULL);
INSERT INTO metrics VALUES (1, 'tokens_per_s', 12.5, 'tokens/s');
)sql");
}

bool runs_has_variant_column(store::Database& db) {
  auto st = db.prepare("SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'variant'");
  return st.step() && st.column_int(0) == 1;
}

}  // namespace

TEST_CASE("results store: a version-1 file is read read-only as it is, upgraded when written",
          "[report][store]") {
  test::TempDir dir;
  const std::string path = dir.file("old.sqlite");
  write_version_1_database(path);
  {
    store::ResultsStore reader(path, store::Access::kReadOnly);
    const auto runs = reader.runs();
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].scenario_name == "old-run");
    CHECK(runs[0].variant.empty());
    CHECK(runs[0].display_name() == "old-run");
    CHECK(runs[0].metric("tokens_per_s") == 12.5);
    // Reading changed nothing.
    CHECK(store::stored_version(reader.database(), store::SchemaPart::kResults) == 1);
    CHECK_FALSE(runs_has_variant_column(reader.database()));
  }
  store::ResultsStore writer(path);
  CHECK(store::stored_version(writer.database(), store::SchemaPart::kResults) ==
        store::schema_part(store::SchemaPart::kResults).version);
  CHECK(runs_has_variant_column(writer.database()));
  const auto old = writer.runs();
  REQUIRE(old.size() == 1);
  CHECK(old[0].scenario_name == "old-run");
  CHECK(old[0].variant.empty());
  const Scenario s = load("opt30b-a6000-quant-kvoffload.yaml");
  const auto id =
      writer.save(s, sim::simulate(s), "9.9.9", "", store::OnDuplicate::kReplace, "named");
  CHECK(writer.run(id)->variant == "named");
  CHECK(writer.runs().size() == 2);
  // A second opening finds nothing left to migrate.
  store::ResultsStore again(path);
  CHECK(again.runs().size() == 2);
}
