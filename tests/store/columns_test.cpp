// A table's column list (store/columns.hpp): the INSERT it writes, and a row of every member type
// written and read back through it unchanged, an absent optional as NULL.
#include "store/columns.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "store/sqlite.hpp"
#include "tests/temp_dir.hpp"

namespace store_columns_test {

namespace store = tiersim::store;

struct Row {
  std::string text;
  double real = 0;
  std::int64_t big = 0;
  int small = 0;
  bool flag = false;
  std::optional<double> maybe;
};

constexpr store::Column<Row> kColumns[] = {
    {"text", &Row::text},   {"real", &Row::real}, {"big", &Row::big},
    {"small", &Row::small}, {"flag", &Row::flag}, {"maybe", &Row::maybe},
};

TEST_CASE("a column list writes the INSERT and round-trips a row", "[store][columns]") {
  CHECK(store::column_names<Row>(kColumns) == "text, real, big, small, flag, maybe");
  CHECK(store::insert_sql<Row>("t", kColumns) ==
        "INSERT INTO t (text, real, big, small, flag, maybe) VALUES (?,?,?,?,?,?)");

  tiersim::test::TempDir dir;
  store::Database db(dir.file("c.db"));
  db.exec(
      "CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT, real REAL, big INTEGER, small INTEGER, "
      "flag INTEGER, maybe REAL)");

  Row a;
  a.text = "nvme0n1";
  a.real = 6.25;
  a.big = std::int64_t{1} << 40;
  a.small = -3;
  a.flag = true;
  a.maybe = 0.5;
  Row b = a;
  b.flag = false;
  b.maybe.reset();

  auto ins = db.prepare(store::insert_sql<Row>("t", kColumns));
  for (const Row& r : {a, b}) {
    store::bind_columns<Row>(ins, kColumns, r);
    ins.run();
  }

  auto st = db.prepare("SELECT id, " + store::column_names<Row>(kColumns) + " FROM t ORDER BY id");
  for (const Row& want : {a, b}) {
    REQUIRE(st.step());
    Row got;
    got.maybe = 99.0;  // a NULL must clear it
    store::read_columns<Row>(st, kColumns, got, 1);
    CHECK(got.text == want.text);
    CHECK(got.real == want.real);
    CHECK(got.big == want.big);
    CHECK(got.small == want.small);
    CHECK(got.flag == want.flag);
    CHECK(got.maybe == want.maybe);
  }
  CHECK_FALSE(st.step());
}

}  // namespace store_columns_test
