#pragma once
// The `calibration_files` table: scratch files a calibration or replay created on a target
// drive, registered before they grow so that a later run can remove those a killed run left
// (calibrate/target.hpp, FileRegistry). Every write to it goes through here.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tiersim::store {

class Database;

struct ScratchFileRow {
  std::string token;  // random, also in the file's header: the file is ours only if they match
  std::string path;   // absolute
  std::uint64_t device = 0, inode = 0;  // the file as created: a replaced file is not ours
  std::int64_t pid = 0;                 // the process that created it
  std::string host;                     // the machine it was created on
  std::string created_at;               // ISO 8601 UTC
};

// One open results database holding the table (created, or brought up to date, on opening).
class ScratchFileTable {
 public:
  explicit ScratchFileTable(const std::string& db_path);
  ~ScratchFileTable();
  ScratchFileTable(const ScratchFileTable&) = delete;
  ScratchFileTable& operator=(const ScratchFileTable&) = delete;

  void insert(const ScratchFileRow& row);
  void erase(const std::string& token);
  // Every file registered on `host`, in no particular order.
  std::vector<ScratchFileRow> on_host(const std::string& host);

 private:
  std::unique_ptr<Database> db_;
};

}  // namespace tiersim::store
