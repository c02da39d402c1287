#pragma once
// A thin RAII layer over SQLite: one connection, prepared statements, transactions. Every failure
// throws StoreError naming the database file and the statement.
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/errors.hpp"

namespace tiersim::store {

class Database;

class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;

  // Binds by 1-based position.
  Statement& bind(int index, double value);
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bind_null(int index);
  // NULL when the value is absent.
  Statement& bind(int index, const std::optional<double>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }
  Statement& bind(int index, const std::optional<std::int64_t>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // Advances; true while a row is available.
  bool step();
  // Runs a statement that returns no rows.
  void run();
  void reset();

  double column_double(int index) const;
  std::int64_t column_int(int index) const;
  std::string column_text(int index) const;
  bool column_is_null(int index) const;
  // column_double, or nothing where the column is NULL.
  std::optional<double> column_optional_double(int index) const {
    if (column_is_null(index)) return std::nullopt;
    return column_double(index);
  }

 private:
  Database* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// Marks a file as a tiersim results database in SQLite's header (PRAGMA application_id; the
// ASCII bytes "TSIM"), so that tiersim can tell its own files from anyone else's before it
// changes anything. https://www.sqlite.org/pragma.html#pragma_application_id
inline constexpr std::int32_t kApplicationId = 0x5453494d;
// Layout version of the file as a whole (PRAGMA user_version); each component's tables carry
// their own version in the schema_version table.
inline constexpr std::int32_t kFileFormatVersion = 1;

enum class Access {
  kReadWrite,  // create when absent; claim a new file (application_id) and switch it to WAL
  kReadOnly,   // open with SQLITE_OPEN_READONLY; nothing in the file or its folder is written
};

// One connection. Used by one thread at a time (the connection is opened without SQLite's
// per-call mutex, and the statements it caches are not shared): a sweep's workers hand their
// results to the one thread that stores them.
class Database {
 public:
  // Opens (creating if needed, for kReadWrite) the database at `path`; ":memory:" for an
  // in-memory database. Before anything is written, the file must be tiersim's: its
  // application_id is kApplicationId, or it has none and is empty (a new file) or holds only
  // tiersim's tables (written by a tiersim older than the id). Any other file throws StoreError
  // "... is not a tiersim results database" and is left byte for byte as it was. WAL journal and
  // a busy timeout let several processes (sweep workers, MPI ranks) share a writable database.
  explicit Database(const std::string& path, Access access = Access::kReadWrite);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(std::string_view sql);
  Statement prepare(std::string_view sql) { return Statement(*this, sql); }
  std::int64_t last_insert_rowid() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }
  bool read_only() const { return read_only_; }
  // True when the file holds a table of this name.
  bool has_table(std::string_view name);
  // How many transactions and savepoints on this connection have been rolled back, by
  // Transaction or by SQLite itself after an error. A cache of row ids this connection wrote is
  // valid only while the count is unchanged: a rollback takes the rows, and AUTOINCREMENT's
  // counter, back with it, so a later insert can be given the same id.
  std::uint64_t rollbacks() const { return rollbacks_; }
  [[noreturn]] void fail(std::string_view what, std::string_view sql) const;

 private:
  // Throws unless the file is tiersim's (see the constructor); stamps the id on a writable one.
  void claim_or_refuse();
  [[noreturn]] void refuse(const std::string& why) const;

  sqlite3* db_ = nullptr;
  std::string path_;
  bool read_only_ = false;
  std::uint64_t rollbacks_ = 0;
  void count_rollback() { ++rollbacks_; }
  // Transaction's nested savepoint and its release, prepared on first use and reused: a sweep
  // opens one per stored point inside its batch, and compiling both statements each time
  // (sqlite3_exec) was a sixth of the storing thread's time outside the inserts.
  std::unique_ptr<Statement> savepoint_, release_;
  void run_cached(std::unique_ptr<Statement>& cached, std::string_view sql);
  friend class Transaction;  // counts the savepoints it rolls back; runs the cached statements
};

// The current time in UTC, formatted with strftime's `format`; the default is the ISO 8601 form
// every table of the results database stores.
std::string utc_timestamp(const char* format = "%Y-%m-%dT%H:%M:%SZ");

// Commits on commit(); rolls back if destroyed before that (an exception unwinding). Inside
// another transaction (a sweep storing its points in batches) it is a savepoint: commit()
// releases it into the outer one, and destroying it uncommitted undoes only its own changes.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool nested_ = false;
  bool done_ = false;
};

}  // namespace tiersim::store
