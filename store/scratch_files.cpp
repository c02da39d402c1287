#include "store/scratch_files.hpp"

#include "store/schema.hpp"
#include "store/sqlite.hpp"

namespace tiersim::store {

ScratchFileTable::ScratchFileTable(const std::string& db_path)
    : db_(std::make_unique<Database>(db_path)) {
  ensure_schema(*db_, SchemaPart::kCalibrationFiles);
}

ScratchFileTable::~ScratchFileTable() = default;

void ScratchFileTable::insert(const ScratchFileRow& row) {
  db_->prepare(
         "INSERT INTO calibration_files (token, path, device, inode, pid, host, created_at) "
         "VALUES (?,?,?,?,?,?,?)")
      .bind(1, row.token)
      .bind(2, row.path)
      .bind(3, static_cast<std::int64_t>(row.device))
      .bind(4, static_cast<std::int64_t>(row.inode))
      .bind(5, row.pid)
      .bind(6, row.host)
      .bind(7, row.created_at)
      .run();
}

void ScratchFileTable::erase(const std::string& token) {
  db_->prepare("DELETE FROM calibration_files WHERE token = ?").bind(1, token).run();
}

std::vector<ScratchFileRow> ScratchFileTable::on_host(const std::string& host) {
  std::vector<ScratchFileRow> rows;
  auto st = db_->prepare(
      "SELECT token, path, device, inode, pid, host, created_at FROM calibration_files "
      "WHERE host = ?");
  st.bind(1, host);
  while (st.step()) {
    ScratchFileRow r;
    r.token = st.column_text(0);
    r.path = st.column_text(1);
    r.device = static_cast<std::uint64_t>(st.column_int(2));
    r.inode = static_cast<std::uint64_t>(st.column_int(3));
    r.pid = st.column_int(4);
    r.host = st.column_text(5);
    r.created_at = st.column_text(6);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace tiersim::store
