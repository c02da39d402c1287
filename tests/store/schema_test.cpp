// The one schema (store/schema.cpp): every part creates exactly the tables it declares, records
// its version, and a file from a newer tiersim is refused rather than written.
#include "store/schema.hpp"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "model/errors.hpp"
#include "tests/temp_dir.hpp"

namespace store_schema_test {

namespace store = tiersim::store;

using namespace tiersim;

namespace {

std::set<std::string> tables_in(store::Database& db) {
  std::set<std::string> out;
  auto st = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 7) <> 'sqlite_'");
  while (st.step()) out.insert(st.column_text(0));
  return out;
}

}  // namespace

TEST_CASE("schema: each part creates exactly its declared tables and records its version",
          "[store][schema]") {
  for (const auto& part : store::schema_parts()) {
    DYNAMIC_SECTION(part.name) {
      test::TempDir dir;
      store::Database db(dir.file("t.db"));
      store::ensure_schema(db, part.part);
      std::set<std::string> expected(part.tables.begin(), part.tables.end());
      expected.insert("schema_version");
      CHECK(tables_in(db) == expected);
      CHECK(store::stored_version(db, part.part) == part.version);
      // Idempotent: a second call changes nothing and does not fail.
      store::ensure_schema(db, part.part);
      CHECK(tables_in(db) == expected);
      for (const auto& t : part.tables) CHECK(store::is_tiersim_table(t));
    }
  }
  CHECK(store::is_tiersim_table("schema_version"));
  CHECK_FALSE(store::is_tiersim_table("customers"));
}

TEST_CASE("schema: part names and table names are unique", "[store][schema]") {
  std::set<std::string> names, tables;
  for (const auto& part : store::schema_parts()) {
    CHECK(names.insert(std::string(part.name)).second);
    for (const auto& t : part.tables) CHECK(tables.insert(std::string(t)).second);
    CHECK(&store::schema_part(part.part) == &part);
  }
}

TEST_CASE("schema: a part newer than this tiersim is refused, the file left as it was",
          "[store][schema]") {
  test::TempDir dir;
  store::Database db(dir.file("t.db"));
  store::ensure_schema(db, store::SchemaPart::kResults);
  db.exec("UPDATE schema_version SET version = 99 WHERE component = 'results'");
  CHECK_THROWS_WITH(
      store::ensure_schema(db, store::SchemaPart::kResults),
      Catch::Contains("results schema version 99") && Catch::Contains("upgrade tiersim"));
  CHECK(store::stored_version(db, store::SchemaPart::kResults) == 99);
  // Inside a caller's transaction the part joins it instead of nesting BEGIN.
  store::Transaction tx(db);
  store::ensure_schema(db, store::SchemaPart::kSweeps);
  tx.commit();
  CHECK(store::stored_version(db, store::SchemaPart::kSweeps) ==
        store::schema_part(store::SchemaPart::kSweeps).version);
}
}  // namespace store_schema_test
