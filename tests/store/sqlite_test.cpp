// The SQLite layer: transactions, and transactions inside a batch.
#include <catch2/catch.hpp>

#include "store/sqlite.hpp"

namespace store_sqlite_test {

using namespace tiersim;

namespace {

std::int64_t rows(store::Database& db) {
  auto st = db.prepare("SELECT count(*) FROM t");
  st.step();
  return st.column_int(0);
}

}  // namespace

TEST_CASE("a transaction inside another commits into it or undoes only itself", "[store]") {
  store::Database db(":memory:");
  db.exec("CREATE TABLE t (x INTEGER)");
  {
    store::Transaction batch(db);
    {
      store::Transaction one(db);
      db.exec("INSERT INTO t VALUES (1)");
      one.commit();
    }
    {
      store::Transaction two(db);  // destroyed uncommitted, as when an exception unwinds
      db.exec("INSERT INTO t VALUES (2)");
    }
    CHECK(rows(db) == 1);
    batch.commit();
  }
  CHECK(rows(db) == 1);
  {
    store::Transaction dropped(db);  // the outer one uncommitted drops everything inside
    store::Transaction inner(db);
    db.exec("INSERT INTO t VALUES (3)");
    inner.commit();
  }
  CHECK(rows(db) == 1);
}
}  // namespace store_sqlite_test
