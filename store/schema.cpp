#include "store/schema.hpp"

#include <sqlite3.h>
#include <algorithm>
#include <string>

#include "model/errors.hpp"

namespace tiersim::store {

namespace {

// One row per part: which part wrote a file, at which layout.
constexpr std::string_view kSchemaVersionDdl = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (
  component TEXT PRIMARY KEY,
  version INTEGER NOT NULL
);)sql";

// A serving capacity search (`tiersim capacity --db`) stores each rate it tries as a run of the
// sweep 'capacity:NAME'; those runs are load points of one configuration, and capacity_studies
// (version 4) says so, with the search's answer: the run that stands for the configuration in a
// report (at its sustained rate, or the zero-load probe when no rate meets the targets) and why.
// Foreign keys with ON DELETE CASCADE make "replace" one DELETE plus inserts. The expression
// index enforces "no duplicates" also for runs outside a sweep: SQLite's UNIQUE treats NULLs as
// distinct, so UNIQUE(scenario_hash, sweep) alone would let NULL-sweep runs repeat.
// Provenance (where each resolved value came from, 56 entries for a Llama-3-70B scenario) is
// stored as sets that runs share (version 3): a sweep's points differ in a few keys at most, and
// writing every entry for every point was half the rows a sweep stored. A set is identified by
// a digest of its entries (ResultsStore::save); sets outlive the runs that used them, so a
// process can keep using a set id it has seen. The `provenance` view gives the per-run rows
// versions 1 and 2 stored, for readers and queries written against them.
constexpr std::string_view kResultsDdl = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,  -- AUTOINCREMENT: a replaced run never hands its id to another
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
  variant TEXT NULL,  -- the compare file's variant name (version 2); NULL outside a compare
  provenance_set INTEGER NULL REFERENCES provenance_sets(id),  -- its provenance (version 3)
  UNIQUE (scenario_hash, sweep)
);
CREATE UNIQUE INDEX IF NOT EXISTS runs_hash_sweep ON runs (scenario_hash, ifnull(sweep, ''));
CREATE INDEX IF NOT EXISTS runs_sweep ON runs (sweep);
CREATE TABLE IF NOT EXISTS metrics (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value REAL,
  unit TEXT,
  PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS memory (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  tier TEXT NOT NULL,
  required_bytes REAL,
  capacity_bytes REAL
);
CREATE INDEX IF NOT EXISTS memory_run ON memory (run_id);
CREATE TABLE IF NOT EXISTS utilization (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  resource TEXT NOT NULL,
  utilization REAL,
  busy_s REAL
);
CREATE INDEX IF NOT EXISTS utilization_run ON utilization (run_id);
CREATE TABLE IF NOT EXISTS timeline (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  resource TEXT NOT NULL,
  label TEXT,
  start_s REAL,
  end_s REAL,
  phase INTEGER,
  item INTEGER
);
CREATE INDEX IF NOT EXISTS timeline_run ON timeline (run_id);
CREATE TABLE IF NOT EXISTS provenance_sets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  digest TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS provenance_entries (
  set_id INTEGER NOT NULL REFERENCES provenance_sets(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  source TEXT,
  PRIMARY KEY (set_id, key)
);
CREATE VIEW IF NOT EXISTS provenance AS
  SELECT runs.id AS run_id, e.key AS key, e.source AS source
  FROM runs JOIN provenance_entries AS e ON e.set_id = runs.provenance_set;
CREATE TABLE IF NOT EXISTS capacity_studies (
  sweep TEXT PRIMARY KEY,  -- the sweep its load points are stored under ('capacity:NAME')
  scenario_name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  attainment_pct REAL NOT NULL,
  slo_ttft_s REAL,  -- NULL: no TTFT target (or --no-slo)
  slo_tbt_s REAL,
  stability INTEGER NOT NULL,
  found INTEGER NOT NULL,
  unbounded INTEGER NOT NULL,
  zero_load_miss INTEGER NOT NULL,
  rate_requests_per_s REAL,
  failing_rate_requests_per_s REAL,
  limit_reason TEXT NOT NULL,
  entry_run INTEGER NULL REFERENCES runs(id) ON DELETE SET NULL
);)sql";

constexpr std::string_view kSweepsDdl = R"sql(
CREATE TABLE IF NOT EXISTS sweeps (
  name TEXT PRIMARY KEY,
  file TEXT,
  description TEXT,
  definition TEXT,
  points INTEGER,
  tool_version TEXT,
  started_at TEXT,
  finished_at TEXT
);
CREATE TABLE IF NOT EXISTS sweep_failures (
  sweep TEXT NOT NULL,
  point TEXT NOT NULL,
  scenario_hash TEXT,
  reason TEXT NOT NULL,
  UNIQUE (sweep, point)
);
CREATE TABLE IF NOT EXISTS plan_verdicts (
  sweep TEXT NOT NULL,          -- the plan's name (its runs' sweep)
  point TEXT NOT NULL,          -- the point's axis values, as the plan lists it
  scenario_hash TEXT NOT NULL,  -- its run's, when simulated
  status TEXT NOT NULL,         -- feasible, rejected (simulated), pruned (not simulated), equivalent
  reason TEXT NOT NULL,         -- why it was rejected or pruned ('' when feasible)
  UNIQUE (sweep, point)
);
CREATE TABLE IF NOT EXISTS plan_capacity (
  sweep TEXT NOT NULL,          -- the plan's name
  point TEXT NOT NULL,          -- the point's axis values (plan_verdicts.point)
  scenario_hash TEXT NOT NULL,  -- its stored run's: at the sustained rate, else the lowest tried
  attainment_pct REAL NOT NULL,
  slo_ttft_s REAL,              -- NULL: no TTFT target (or capacity_search slo: false)
  slo_tbt_s REAL,
  stability INTEGER NOT NULL,
  found INTEGER NOT NULL,
  unbounded INTEGER NOT NULL,
  zero_load_miss INTEGER NOT NULL,
  rate_requests_per_s REAL,
  failing_rate_requests_per_s REAL,
  limit_reason TEXT NOT NULL,
  UNIQUE (sweep, point)
);)sql";

// Columns documented in calibrate/README.md.
constexpr std::string_view kCalibrationDdl = R"sql(
CREATE TABLE IF NOT EXISTS calibration_runs (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at      TEXT NOT NULL,
  finished_at     TEXT,
  host            TEXT NOT NULL,
  kernel          TEXT NOT NULL,
  mode            TEXT NOT NULL,
  engine          TEXT NOT NULL,
  direct          INTEGER NOT NULL,
  file_size_bytes INTEGER NOT NULL,
  targets         TEXT NOT NULL,
  options         TEXT NOT NULL,
  tool_version    TEXT NOT NULL,
  profile_path    TEXT
);
CREATE TABLE IF NOT EXISTS calibration_points (
  id                   INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id               INTEGER NOT NULL REFERENCES calibration_runs(id) ON DELETE CASCADE,
  target               TEXT NOT NULL,
  target_count         INTEGER NOT NULL,
  filesystem           TEXT NOT NULL,
  device               TEXT NOT NULL,
  rw                   TEXT NOT NULL,
  engine               TEXT NOT NULL,
  block_bytes          INTEGER NOT NULL,
  queue_depth          INTEGER NOT NULL,
  threads              INTEGER NOT NULL,
  duration_s           REAL NOT NULL,
  bytes                INTEGER NOT NULL,
  ios                  INTEGER NOT NULL,
  bandwidth_gbps       REAL NOT NULL,
  iops                 REAL NOT NULL,
  lat_mean_us          REAL NOT NULL,
  lat_p50_us           REAL NOT NULL,
  lat_p90_us           REAL NOT NULL,
  lat_p99_us           REAL NOT NULL,
  lat_p999_us          REAL NOT NULL,
  lat_max_us           REAL NOT NULL,
  converged            INTEGER NOT NULL,
  fit_role             TEXT NOT NULL DEFAULT 'none',
  model_bandwidth_gbps REAL
);
CREATE INDEX IF NOT EXISTS calibration_points_run ON calibration_points(run_id);)sql";

// (device, inode) identify the very file calibration created, so a file replaced since is never
// removed (calibrate/target.cpp, remove_created_file).
constexpr std::string_view kCalibrationFilesDdl = R"sql(
CREATE TABLE IF NOT EXISTS calibration_files (
  token TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  device INTEGER NOT NULL,
  inode INTEGER NOT NULL,
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  created_at TEXT NOT NULL
);)sql";

constexpr std::string_view kReplayDdl = R"sql(
CREATE TABLE IF NOT EXISTS replay_runs (
  id INTEGER PRIMARY KEY,
  created_at TEXT, target TEXT, name TEXT, kind TEXT, detail TEXT,
  predicted_prefill_s REAL, measured_prefill_s REAL,
  predicted_decode_s REAL, measured_decode_s REAL,
  predicted_total_s REAL, measured_total_s REAL, error_pct REAL,
  predicted_point_total_s REAL, point_error_pct REAL,
  replay_read_gbps REAL, calibrated_read_gbps REAL
);)sql";

// Steps that bring an older file's part up to this tiersim's version, in version order. A step
// runs when the file's version is below `to_version`; its SQL must leave the tables exactly as
// the current DDL would create them (tests/store/schema_test.cpp builds each old layout and
// checks that).
struct MigrationStep {
  SchemaPart part;
  int to_version;
  std::string_view sql;
};

constexpr MigrationStep kMigrations[] = {
    // results 1 -> 2: runs.variant, the name `tiersim compare` gives a configuration, so the
    // report labels it as the comparison did (issue 17). Old runs keep NULL: no variant known.
    {SchemaPart::kResults, 2, "ALTER TABLE runs ADD COLUMN variant TEXT NULL;"},
    // results 2 -> 3: provenance as shared sets. Each old run's entries become a set of their own
    // (its digest names the run, so a new set never matches one); the view replaces the table.
    {SchemaPart::kResults, 3, R"sql(
CREATE TABLE provenance_sets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  digest TEXT NOT NULL UNIQUE
);
CREATE TABLE provenance_entries (
  set_id INTEGER NOT NULL REFERENCES provenance_sets(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  source TEXT,
  PRIMARY KEY (set_id, key)
);
ALTER TABLE runs ADD COLUMN provenance_set INTEGER NULL REFERENCES provenance_sets(id);
INSERT INTO provenance_sets (id, digest) SELECT DISTINCT run_id, 'run ' || run_id FROM provenance;
INSERT INTO provenance_entries (set_id, key, source) SELECT run_id, key, source FROM provenance;
UPDATE runs SET provenance_set = id WHERE id IN (SELECT id FROM provenance_sets);
DROP TABLE provenance;)sql"},
    // results 3 -> 4 (capacity_studies, issue 33), sweeps 1 -> 2 (plan_verdicts) and sweeps
    // 2 -> 3 (plan_capacity: a serving plan's targets and each point's search) add tables only:
    // the part's DDL, run after the steps (CREATE TABLE IF NOT EXISTS), creates them in an older
    // database as in a new one, so they need no step of their own.
};

}  // namespace

const std::vector<SchemaPartDecl>& schema_parts() {
  static const std::vector<SchemaPartDecl> parts = {
      {SchemaPart::kResults,
       "results",
       4,
       {"runs", "metrics", "memory", "utilization", "timeline", "provenance_sets",
        "provenance_entries", "capacity_studies"},
       false,
       kResultsDdl,
       {"provenance"}},
      {SchemaPart::kSweeps, "sweeps", 3,
       {"sweeps", "sweep_failures", "plan_verdicts", "plan_capacity"}, false,
       kSweepsDdl},
      {SchemaPart::kCalibration,
       "calibration",
       1,
       {"calibration_runs", "calibration_points"},
       true,
       kCalibrationDdl},
      {SchemaPart::kCalibrationFiles,
       "calibration_files",
       1,
       {"calibration_files"},
       true,
       kCalibrationFilesDdl},
      {SchemaPart::kReplay, "replay", 1, {"replay_runs"}, true, kReplayDdl},
  };
  return parts;
}

const SchemaPartDecl& schema_part(SchemaPart part) {
  const auto& parts = schema_parts();
  const auto it = std::find_if(parts.begin(), parts.end(),
                               [&](const SchemaPartDecl& d) { return d.part == part; });
  return *it;  // every enumerator has a row (tests/store/schema_test.cpp)
}

int stored_version(Database& db, SchemaPart part) {
  if (!db.has_table("schema_version")) return 0;
  auto get = db.prepare("SELECT version FROM schema_version WHERE component = ?");
  get.bind(1, schema_part(part).name);
  return get.step() ? static_cast<int>(get.column_int(0)) : 0;
}

void check_schema_version(Database& db, SchemaPart part) {
  const SchemaPartDecl& d = schema_part(part);
  const int v = stored_version(db, part);
  if (v > d.version)
    throw StoreError("database '" + db.path() + "' has " + std::string(d.name) +
                     " schema version " + std::to_string(v) +
                     ", newer than this tiersim understands (" + std::to_string(d.version) +
                     "); upgrade tiersim");
}

void ensure_schema(Database& db, SchemaPart part) {
  const SchemaPartDecl& d = schema_part(part);
  // Inside a caller's transaction the statements join it (SQLite does not nest BEGIN).
  const bool own_transaction = sqlite3_get_autocommit(db.handle()) != 0;
  if (own_transaction) db.exec("BEGIN IMMEDIATE");
  try {
    db.exec(kSchemaVersionDdl);
    check_schema_version(db, part);
    // Migrate before the DDL: its CREATE ... IF NOT EXISTS leaves an old table as it is, and an
    // index on a new column would fail on it.
    const int stored = stored_version(db, part);
    if (stored > 0)
      for (const auto& step : kMigrations)
        if (step.part == part && step.to_version > stored) db.exec(step.sql);
    db.exec(d.ddl);
    db.prepare(
          "INSERT INTO schema_version (component, version) VALUES (?, ?) "
          "ON CONFLICT (component) DO UPDATE SET version = excluded.version")
        .bind(1, d.name)
        .bind(2, d.version)
        .run();
    if (own_transaction) db.exec("COMMIT");
  } catch (...) {
    if (own_transaction) {
      try {
        db.exec("ROLLBACK");
      } catch (...) {
      }
    }
    throw;
  }
}

bool is_tiersim_table(std::string_view table) {
  if (table == "schema_version") return true;
  for (const auto& d : schema_parts())
    if (std::find(d.tables.begin(), d.tables.end(), table) != d.tables.end() ||
        std::find(d.retired_tables.begin(), d.retired_tables.end(), table) !=
            d.retired_tables.end())
      return true;
  return false;
}

bool is_legacy_unversioned_table(std::string_view table) {
  for (const auto& d : schema_parts())
    if (d.legacy_unversioned &&
        std::find(d.tables.begin(), d.tables.end(), table) != d.tables.end())
      return true;
  return false;
}

}  // namespace tiersim::store
