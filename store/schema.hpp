// Every table tiersim writes into an SQLite database, in one place: the results database
// (tiersim-results.db or any --db file) and the calibration file registry share this list, so a
// newcomer finds the whole on-disk layout here, and the ownership check (store/sqlite.cpp) knows
// exactly which tables are tiersim's.
//
// Migrations: each part carries a version, recorded in the schema_version table when the part's
// tables are created. A file whose part is newer than this tiersim is refused (upgrade tiersim);
// an older part is migrated in place by ensure_schema() (opening for writing), by the steps in
// store/schema.cpp (kMigrations). Readers that open read-only do not migrate; they ask
// stored_version() which columns the file has (results: runs.variant from version 2).
#pragma once

#include <string_view>
#include <vector>

#include "store/sqlite.hpp"

namespace tiersim::store {

enum class SchemaPart {
  kResults,           // runs and what each stores (store/results_store.cpp)
  kSweeps,            // sweep definitions and failed points (store/sweep_tables.cpp)
  kCalibration,       // calibration runs and measured points (store/calibration_store.cpp)
  kCalibrationFiles,  // files calibration created, so it removes only its own
                      // (calibrate/target.cpp)
  kReplay,            // replay suite rows (replay/replay_suite.cpp)
};

struct SchemaPartDecl {
  SchemaPart part;
  std::string_view name;                 // its row in schema_version
  int version;                           // the layout this tiersim writes
  std::vector<std::string_view> tables;  // every table its DDL creates
  // Files written before tiersim stamped its application id held this part's tables without a
  // schema_version row; the ownership check accepts them (store/sqlite.cpp).
  bool legacy_unversioned;
  std::string_view ddl;  // CREATE ... IF NOT EXISTS statements
  // Tables an older version of the part created and its migrations replace: a file not yet
  // migrated still holds them, and is still tiersim's (results: `provenance`, a view since
  // version 3).
  std::vector<std::string_view> retired_tables = {};
};

const std::vector<SchemaPartDecl>& schema_parts();
const SchemaPartDecl& schema_part(SchemaPart part);

// Creates the part's tables when missing and records its version, in one transaction. Throws
// StoreError when the file holds a newer version of the part than this tiersim writes.
void ensure_schema(Database& db, SchemaPart part);
// The part's version recorded in the file; 0 when none is (not created, or an old file).
int stored_version(Database& db, SchemaPart part);
// Throws StoreError when the file's version of the part is newer than this tiersim's.
void check_schema_version(Database& db, SchemaPart part);

// True when some part creates a table of this name (schema_version included).
bool is_tiersim_table(std::string_view table);
// True when `table` belongs to a legacy_unversioned part.
bool is_legacy_unversioned_table(std::string_view table);

}  // namespace tiersim::store
