#include "store/sqlite.hpp"

#include "store/schema.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <set>

namespace tiersim::store {

namespace {

// Result code of reading the file header (the first page).
int probe_header(sqlite3* db) {
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? SQLITE_OK : rc;
}

// `path` as an SQLite URI filename (https://www.sqlite.org/uri.html): % ? # escaped.
std::string uri_path(const std::string& path) {
  std::string out = "file:";
  for (char c : path) {
    if (c == '%')
      out += "%25";
    else if (c == '?')
      out += "%3f";
    else if (c == '#')
      out += "%23";
    else
      out += c;
  }
  return out;
}

bool not_a_database(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT;
}

}  // namespace

// Before SQLite's first use in the process: no memory statistics. SQLite counts every allocation
// under a global mutex to serve sqlite3_status(), which tiersim never asks for; a sweep's store
// makes tens of allocations per point. Once per process, before any connection opens (SQLite
// refuses the call afterwards, which changes nothing).
namespace {
void configure_sqlite_once() {
  static std::once_flag once;
  std::call_once(once, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}
}  // namespace

Database::Database(const std::string& path, Access access)
    : path_(path), read_only_(access == Access::kReadOnly) {
  configure_sqlite_once();
  // NOMUTEX: a connection is used by one thread at a time (a Database, with its cached
  // statements, is not shared between threads), so SQLite's per-call connection mutex of its
  // default serialized mode is not needed.
  const int flags =
      SQLITE_OPEN_NOMUTEX |
      (read_only_ ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError("cannot open results database '" + path + "': " + msg);
  }
  // SQLite calls this for every rollback of a whole transaction, including the ones it makes
  // itself after an error; savepoints rolled back are counted by Transaction. The Database is
  // neither copied nor moved, so `this` stays valid for the connection's life.
  sqlite3_rollback_hook(
      db_, [](void* self) { static_cast<Database*>(self)->count_rollback(); }, this);
  // The destructor does not run when a constructor throws: close here on every error path.
  try {
    sqlite3_busy_timeout(db_, 60000);
    if (read_only_ && path != ":memory:") {
      // A WAL database in a folder this process may not write: SQLite cannot create the -shm
      // index and every read fails (SQLITE_READONLY or SQLITE_CANTOPEN). Without a -wal file
      // every committed page is in the main file, which SQLite can then read as immutable
      // (https://www.sqlite.org/wal.html#readonly).
      const int rc = probe_header(db_) & 0xff;
      std::error_code ec;
      if ((rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN) &&
          !std::filesystem::exists(path + "-wal", ec)) {
        sqlite3_close_v2(db_);
        db_ = nullptr;
        const std::string uri = uri_path(path) + "?immutable=1";
        if (sqlite3_open_v2(uri.c_str(), &db_,
                            SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                            nullptr) != SQLITE_OK)
          throw StoreError("cannot open results database '" + path +
                           "': " + (db_ ? sqlite3_errmsg(db_) : "out of memory"));
      }
    }
    claim_or_refuse();
    if (!read_only_ && path != ":memory:") exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA foreign_keys=ON");
  } catch (...) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw;
  }
}

Database::~Database() {
  // The cached statements first: a connection closes only once its statements are finalized.
  savepoint_.reset();
  release_.reset();
  sqlite3_close_v2(db_);
}

void Database::run_cached(std::unique_ptr<Statement>& cached, std::string_view sql) {
  if (!cached)
    cached = std::make_unique<Statement>(*this, sql);
  else
    cached->reset();  // a run that failed part-way (a busy database) left it stepped
  cached->run();
}

void Database::refuse(const std::string& why) const {
  throw StoreError("'" + path_ + "' is not a tiersim results database (" + why +
                   "); tiersim leaves it as it is. Give --db a new file or one tiersim wrote.");
}

void Database::claim_or_refuse() {
  // Reads only, until the file is known to be ours. A file that is not SQLite at all fails the
  // first read with SQLITE_NOTADB.
  auto query = [&](const char* sql, auto&& on_row) {
    sqlite3_stmt* st = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql, -1, &st, nullptr);
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
      rc = sqlite3_step(st);
      if (rc == SQLITE_ROW) on_row(st);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return;
    if (not_a_database(rc) || not_a_database(sqlite3_extended_errcode(db_)))
      refuse(std::string("not an SQLite database, or a damaged one: ") + sqlite3_errmsg(db_));
    fail("reading the file header failed", sql);
  };
  std::int64_t application_id = 0, user_version = 0;
  query("PRAGMA application_id",
        [&](sqlite3_stmt* st) { application_id = sqlite3_column_int64(st, 0); });
  query("PRAGMA user_version",
        [&](sqlite3_stmt* st) { user_version = sqlite3_column_int64(st, 0); });
  if (application_id == kApplicationId) {
    if (user_version > kFileFormatVersion)
      throw StoreError("results database '" + path_ + "' has file format " +
                       std::to_string(user_version) + ", newer than this tiersim understands (" +
                       std::to_string(kFileFormatVersion) + "); upgrade tiersim");
    return;
  }
  if (application_id != 0) {
    char id[16];
    std::snprintf(id, sizeof id, "0x%08x", static_cast<unsigned>(application_id));
    refuse(std::string("it carries another application's id, ") + id);
  }
  // tiersim sets user_version only together with its application id, and versions before the id
  // never set it: a file with a user_version but no id is another program's, even when empty.
  if (user_version != 0)
    refuse("it carries a user_version (" + std::to_string(user_version) +
           ") but not tiersim's application id");
  std::vector<std::string> tables;
  query(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 7) <> 'sqlite_' "
      "ORDER BY name",
      [&](sqlite3_stmt* st) {
        tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
      });
  std::string foreign;
  bool unversioned_only = true;
  for (const auto& t : tables) {
    if (!is_tiersim_table(t)) foreign += (foreign.empty() ? "" : ", ") + t;
    if (!is_legacy_unversioned_table(t)) unversioned_only = false;
  }
  if (!foreign.empty()) refuse("it holds tables tiersim does not write: " + foreign);
  if (!unversioned_only) {
    // tiersim's results tables always come with a schema_version row (one transaction).
    std::int64_t components = 0;
    if (std::find(tables.begin(), tables.end(), "schema_version") != tables.end())
      query("SELECT count(*) FROM schema_version",
            [&](sqlite3_stmt* st) { components = sqlite3_column_int64(st, 0); });
    if (components == 0) refuse("it has tiersim's table names but no schema_version rows");
  }
  // Empty (new) or written by an older tiersim: ours. Stamp it so the next open needs no guess.
  if (!read_only_)
    exec("PRAGMA application_id = " + std::to_string(kApplicationId) +
         "; PRAGMA user_version = " + std::to_string(kFileFormatVersion));
}

bool Database::has_table(std::string_view name) {
  auto st = prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?");
  st.bind(1, name);
  return st.step() && st.column_int(0) > 0;
}

void Database::fail(std::string_view what, std::string_view sql) const {
  throw StoreError("results database '" + path_ + "': " + std::string(what) + ": " +
                   sqlite3_errmsg(db_) + " (in: " + std::string(sql.substr(0, 120)) + ")");
}

void Database::exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw StoreError("results database '" + path_ + "': " + msg + " (in: " + s.substr(0, 120) +
                     ")");
  }
}

std::int64_t Database::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_);
}

Statement::Statement(Database& db, std::string_view sql) : db_(&db), sql_(sql) {
  if (sqlite3_prepare_v2(db.handle(), sql_.c_str(), static_cast<int>(sql_.size()), &stmt_,
                         nullptr) != SQLITE_OK)
    db.fail("prepare failed", sql_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), sql_(std::move(other.sql_)) {
  other.stmt_ = nullptr;
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) db_->fail("bind failed", sql_);
  return *this;
}
Statement& Statement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) db_->fail("bind failed", sql_);
  return *this;
}
Statement& Statement::bind(int index, std::string_view value) {
  if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK)
    db_->fail("bind failed", sql_);
  return *this;
}
Statement& Statement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) db_->fail("bind failed", sql_);
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail("step failed", sql_);
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

double Statement::column_double(int index) const {
  return sqlite3_column_double(stmt_, index);
}
std::int64_t Statement::column_int(int index) const {
  return sqlite3_column_int64(stmt_, index);
}
std::string Statement::column_text(int index) const {
  const unsigned char* t = sqlite3_column_text(stmt_, index);
  return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
}
bool Statement::column_is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

std::string utc_timestamp(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

Transaction::Transaction(Database& db)
    : db_(db), nested_(sqlite3_get_autocommit(db.handle()) == 0) {
  if (nested_)
    db_.run_cached(db_.savepoint_, "SAVEPOINT tiersim_nested");
  else
    db_.exec("BEGIN IMMEDIATE");
}
Transaction::~Transaction() {
  if (!done_) {
    try {
      db_.exec(nested_ ? "ROLLBACK TO tiersim_nested; RELEASE tiersim_nested" : "ROLLBACK");
    } catch (...) {
    }
    if (nested_) db_.count_rollback();  // SQLite's rollback hook does not see savepoints
  }
}
void Transaction::commit() {
  if (nested_)
    db_.run_cached(db_.release_, "RELEASE tiersim_nested");
  else
    db_.exec("COMMIT");
  done_ = true;
}

}  // namespace tiersim::store
