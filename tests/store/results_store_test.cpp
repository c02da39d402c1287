// The results store: round trip, transactions, duplicates.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "config/scenario_loader.hpp"
#include "sim/simulate.hpp"
#include "store/results_store.hpp"
#include "store/schema.hpp"
#include "tests/temp_dir.hpp"

namespace store_results_store_test {

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

TEST_CASE("results store: a scenario naming a file by a relative path is stored with it absolute",
          "[report][store]") {
  // The loader sets portable_yaml only then (tests/config/hf_config_test.cpp); what the store
  // keeps is that text, the hash stays the scenario's own.
  Scenario s = load("opt30b-a6000-quant.yaml");
  s.portable_yaml = s.resolved_yaml + "# stands for the text with absolute paths\n";
  store::ResultsStore store(":memory:");
  const auto id = store.save(s, sim::simulate(s), "1");
  const auto back = store.run(id);
  REQUIRE(back);
  CHECK(back->scenario_yaml == s.portable_yaml);
  CHECK(back->scenario_hash == s.hash);
}

TEST_CASE("results store: duplicates are replaced or skipped, never repeated", "[report][store]") {
  store::ResultsStore store(":memory:");
  const Scenario s = load("opt30b-a6000-quant.yaml");
  sim::RunResult r = sim::simulate(s);
  const auto first = store.save(s, r, "1");
  r.set(sim::metric::kThroughputTokensPerS, 123.0);
  const auto second = store.save(s, r, "2");  // default: replace atomically
  CHECK(second != first);
  auto all = store.runs();
  REQUIRE(all.size() == 1);
  CHECK(all[0].tool_version == "2");
  CHECK(all[0].get("throughput_tokens_per_s") == 123.0);
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
INSERT INTO provenance VALUES (1, 'gpu.hbm_bytes', 'catalog gpu l40s'), (1, 'model.name', 'file');
)sql");
}

// What a file's layout is, for comparing a migrated file with a fresh one: each table's and
// view's name with its columns' names and declared types, in order.
std::vector<std::string> layout(store::Database& db) {
  std::vector<std::string> out;
  auto objects = db.prepare(
      "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') "
      "AND name NOT LIKE 'sqlite_%' ORDER BY name");
  while (objects.step()) {
    const std::string name = objects.column_text(1);
    std::string entry = objects.column_text(0);
    entry.append(" ").append(name).append(":");
    auto cols = db.prepare("SELECT name, type FROM pragma_table_info(?) ORDER BY cid");
    cols.bind(1, name);
    while (cols.step())
      entry.append(" ").append(cols.column_text(0)).append(" ").append(cols.column_text(1));
    out.push_back(entry);
  }
  return out;
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
    CHECK(runs[0].get("tokens_per_s") == 12.5);
    CHECK(runs[0].provenance.size() == 2);
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
  // Version 3 keeps provenance as shared sets; the old run's entries became a set of its own.
  const std::map<std::string, std::string> old_provenance = {{"gpu.hbm_bytes", "catalog gpu l40s"},
                                                             {"model.name", "file"}};
  CHECK(old[0].provenance == old_provenance);
  {
    // The migrated file has the layout a new file gets: same tables, views and columns.
    store::ResultsStore fresh(dir.file("fresh.sqlite"));
    CHECK(layout(writer.database()) == layout(fresh.database()));
  }
  const Scenario s = load("opt30b-a6000-quant-kvoffload.yaml");
  const auto id =
      writer.save(s, sim::simulate(s), "9.9.9", "", store::OnDuplicate::kReplace, "named");
  CHECK(writer.run(id)->variant == "named");
  CHECK(writer.run(id)->provenance == s.provenance);
  CHECK(writer.runs().size() == 2);
  // A second opening finds nothing left to migrate.
  store::ResultsStore again(path);
  CHECK(again.runs().size() == 2);
  CHECK(again.run(old[0].id)->provenance == old_provenance);
}

TEST_CASE("results store: runs with the same provenance share one stored set", "[report][store]") {
  test::TempDir dir;
  const std::string path = dir.file("results.sqlite");
  Scenario a = load("opt30b-a6000-quant-kvoffload.yaml");
  const sim::RunResult r = sim::simulate(a);
  Scenario b = a;  // another point of a sweep: another hash, the same provenance
  b.hash = "b-" + a.hash;
  Scenario c = a;  // a point whose resolution differs in one key
  c.hash = "c-" + a.hash;
  REQUIRE(!c.provenance.empty());
  c.provenance.set(c.provenance.entries().begin()->first, "set by a test");
  std::int64_t ia = 0, ib = 0, ic = 0;
  {
    store::ResultsStore store(path);
    ia = store.save(a, r, "9.9.9");
    ib = store.save(b, r, "9.9.9");
    ic = store.save(c, r, "9.9.9");
  }
  // A new connection finds the stored set by its digest rather than storing it again.
  Scenario d = a;
  d.hash = "d-" + a.hash;
  store::ResultsStore store(path);
  const auto id = store.save(d, r, "9.9.9");
  auto count = [&](const std::string& sql) {
    auto st = store.database().prepare(sql);
    REQUIRE(st.step());
    return st.column_int(0);
  };
  CHECK(count("SELECT count(*) FROM provenance_sets") == 2);
  CHECK(count("SELECT count(DISTINCT provenance_set) FROM runs") == 2);
  CHECK(count("SELECT count(*) FROM provenance_entries") ==
        2 * static_cast<std::int64_t>(a.provenance.size()));
  // The view gives every run its rows, as the per-run table of versions 1 and 2 did.
  CHECK(count("SELECT count(*) FROM provenance") ==
        4 * static_cast<std::int64_t>(a.provenance.size()));
  CHECK(store.run(ia)->provenance == a.provenance);
  CHECK(store.run(ib)->provenance == a.provenance);
  CHECK(store.run(ic)->provenance == c.provenance);
  CHECK(store.run(id)->provenance == a.provenance);
  // Replacing a run leaves the set its neighbours share.
  store.save(a, r, "9.9.9", "", store::OnDuplicate::kReplace);
  CHECK(store.run(*store.find(a.hash, ""))->provenance == a.provenance);
  CHECK(store.run(ib)->provenance == a.provenance);
}

TEST_CASE("results store: a set taken back by a rollback is never used for a later run",
          "[report][store]") {
  test::TempDir dir;
  store::ResultsStore store(dir.file("results.sqlite"));
  const Scenario a = load("opt30b-a6000-quant-kvoffload.yaml");
  const sim::RunResult r = sim::simulate(a);
  Scenario c = a;
  c.hash = "c-" + a.hash;
  c.provenance.set(c.provenance.entries().begin()->first, "set by a test");
  Scenario a2 = a;
  a2.hash = "a2-" + a.hash;
  {
    // A sweep's batch given up: a's run and its new set are rolled back.
    store::Transaction batch(store.database());
    store.save(a, r, "9.9.9");
  }
  CHECK_FALSE(store.has(a.hash));
  // c's set may be given the id a's set had; a2 must not be handed c's set for it.
  const auto ic = store.save(c, r, "9.9.9");
  const auto ia2 = store.save(a2, r, "9.9.9");
  CHECK(store.run(ic)->provenance == c.provenance);
  CHECK(store.run(ia2)->provenance == a.provenance);
  // The same after a save fails and takes its own transaction back: a trigger refuses e's run
  // row after e's new set has been stored.
  Scenario e = a;
  e.hash = "e-" + a.hash;
  e.provenance.set(e.provenance.entries().begin()->first, "another test value");
  store.database().exec(
      "CREATE TRIGGER refuse_e BEFORE INSERT ON runs WHEN NEW.scenario_hash LIKE 'e-%' "
      "BEGIN SELECT RAISE(ABORT, 'refused by a test'); END");
  CHECK_THROWS(store.save(e, r, "9.9.9"));
  store.database().exec("DROP TRIGGER refuse_e");
  Scenario f = c;
  f.hash = "f-" + a.hash;
  f.provenance.set(f.provenance.entries().begin()->first, "a third test value");
  const auto iff = store.save(f, r, "9.9.9");
  e.hash = "e2-" + a.hash;
  const auto ie = store.save(e, r, "9.9.9");
  CHECK(store.run(iff)->provenance == f.provenance);
  CHECK(store.run(ie)->provenance == e.provenance);
}
}  // namespace store_results_store_test
