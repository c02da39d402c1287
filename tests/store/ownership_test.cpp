// Foreign data is read-only to tiersim: a database that is not a tiersim results database is
// refused before anything in it changes, `tiersim report` opens its database read-only, and a
// refused open leaves no connection behind.
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/scenario_loader.hpp"
#include "store/results_store.hpp"
#include "sim/simulate.hpp"
#include "tests/temp_dir.hpp"
#include "tests/support.hpp"

namespace store_ownership_test {

namespace store = tiersim::store;

using namespace tiersim;
namespace fs = std::filesystem;

namespace {

using test::slurp;

// Runs SQL with the SQLite library directly, as another program would.
void raw_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  REQUIRE(msg.empty());
  REQUIRE(rc == SQLITE_OK);
}

std::int64_t raw_int(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  std::int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

int open_fds() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

void save_one_run(const std::string& db_path) {
  config::LoadOptions opts;
  opts.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  const Scenario s = config::load_scenario(
      std::string(TIERSIM_SOURCE_DIR) + "/scenarios/reference/opt30b-a6000-quant-kvoffload.yaml",
      opts);
  store::ResultsStore(db_path).save(s, sim::simulate(s), "test");
}

void check_refusal(const std::string& path, const std::string& message) {
  INFO(message);
  CHECK(message.find("'" + path + "' is not a tiersim results database") != std::string::npos);
  CHECK(message.find("no such") == std::string::npos);  // no raw SQL error
}

}  // namespace

TEST_CASE("store: a foreign SQLite database is refused and left byte for byte unchanged",
          "[report][store]") {
  test::TempDir dir;
  const std::string path = dir.file("foreign.sqlite");
  SECTION("another program's tables, one of them named like tiersim's") {
    raw_sql(path,
            "CREATE TABLE runs (id INTEGER PRIMARY KEY, x TEXT); INSERT INTO runs (x) "
            "VALUES ('theirs');");
  }
  SECTION("another program's application_id, no tables") {
    raw_sql(path, "PRAGMA application_id = 1234; CREATE TABLE t (x); DROP TABLE t;");
  }
  SECTION("another program's user_version, no tables and no application_id") {
    raw_sql(path, "PRAGMA user_version = 7; CREATE TABLE t (x); DROP TABLE t;");
  }
  SECTION("tiersim's table names without tiersim's schema_version rows") {
    raw_sql(path,
            "CREATE TABLE schema_version (component TEXT, version INTEGER); CREATE TABLE "
            "runs (id INTEGER PRIMARY KEY);");
  }
  const std::string before = slurp(path);
  REQUIRE(!before.empty());
  try {
    store::ResultsStore store(path);
    FAIL("opened a foreign database");
  } catch (const StoreError& e) {
    check_refusal(path, e.what());
  }
  // The calibration and replay tables go through the same connection class.
  CHECK_THROWS_AS(store::Database(path), StoreError);
  CHECK(slurp(path) == before);
  CHECK_FALSE(fs::exists(path + "-wal"));
  CHECK_FALSE(fs::exists(path + "-shm"));
}

TEST_CASE("store: a file that is not SQLite is refused, unchanged, and no connection leaks",
          "[report][store]") {
  test::TempDir dir;
  const std::string path = dir.file("junk.sqlite");
  std::ofstream(path) << std::string(200, 'x') << "\n";
  const std::string before = slurp(path);
  const int fds = open_fds();
  for (int i = 0; i < 20; ++i) {
    try {
      store::ResultsStore store(path);
      FAIL("opened a file that is not a database");
    } catch (const StoreError& e) {
      check_refusal(path, e.what());
    }
  }
  // Each leaked connection would keep the file open.
  CHECK(open_fds() == fds);
  CHECK(slurp(path) == before);
}

TEST_CASE("store: a database of an older tiersim (no application_id) is opened and stamped",
          "[report][store]") {
  test::TempDir dir;
  const std::string path = dir.file("old.sqlite");
  save_one_run(path);
  raw_sql(path, "PRAGMA application_id = 0; PRAGMA user_version = 0;");
  REQUIRE(raw_int(path, "PRAGMA application_id") == 0);
  CHECK(store::ResultsStore(path).runs().size() == 1);
  CHECK(raw_int(path, "PRAGMA application_id") != 0);
}

TEST_CASE("store: tiersim report reads without writing and refuses foreign files",
          "[report][store]") {
  const std::string bin = test::tiersim_bin();
  if (bin.empty()) {
    WARN("TIERSIM_BIN not set: skipping the tiersim report runs");
    return;
  }
  test::TempDir dir;
  const std::string path = dir.file("results.sqlite");
  save_one_run(path);
  // A rollback-journal file: opening it for writing would switch it to WAL (header bytes 18-19).
  raw_sql(path, "PRAGMA journal_mode = DELETE;");
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const std::string before = slurp(path);
  const std::string report = bin + " report --no-validation --db " + path + " --out " +
                             dir.file("report") + " >" + dir.file("out.txt") + " 2>&1";
  CHECK(test::shell(report) == 0);
  INFO(slurp(dir.file("out.txt")));
  CHECK(fs::exists(dir.file("report/index.html")));
  CHECK(slurp(path) == before);
  CHECK_FALSE(fs::exists(path + "-wal"));

  const std::string foreign = dir.file("foreign.sqlite");
  raw_sql(foreign, "CREATE TABLE runs (id INTEGER PRIMARY KEY, x TEXT);");
  const std::string foreign_before = slurp(foreign);
  for (const std::string& cmd :
       {bin + " report --no-validation --db " + foreign + " --out " + dir.file("r2"),
        bin + " run " + TIERSIM_SOURCE_DIR +
            "/scenarios/reference/opt30b-a6000-quant-kvoffload.yaml --db " + foreign}) {
    CHECK(test::shell(cmd + " >" + dir.file("err.txt") + " 2>&1") != 0);
    const std::string err = slurp(dir.file("err.txt"));
    INFO(cmd << "\n" << err);
    CHECK(err.find("is not a tiersim results database") != std::string::npos);
    CHECK(slurp(foreign) == foreign_before);
  }
}

TEST_CASE("store: a read-only store reads a WAL database in a folder it may not write",
          "[report][store]") {
  test::TempDir dir;
  const std::string folder = dir.file("ro");
  fs::create_directory(folder);
  const std::string path = folder + "/results.sqlite";
  save_one_run(path);  // WAL mode; the last close folds the -wal file back in
  REQUIRE_FALSE(fs::exists(path + "-wal"));
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read |
                              fs::perms::others_exec);
  // Permissions do not bind root: there the reader runs as nobody (65534).
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) std::_Exit(3);
    try {
      store::ResultsStore store(path, store::Access::kReadOnly);
      std::_Exit(store.runs().size() == 1 ? 0 : 1);
    } catch (...) {
      std::_Exit(2);
    }
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // 2: the open or the read failed
  CHECK_FALSE(fs::exists(path + "-shm"));
  fs::permissions(folder, fs::perms::owner_all, fs::perm_options::add);
}
}  // namespace store_ownership_test
