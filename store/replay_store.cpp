#include "store/replay_store.hpp"

#include "store/columns.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"

namespace tiersim::store {

namespace {

// replay_runs' columns after its id (schema.cpp kReplayDdl).
#define C(member) TIERSIM_COLUMN(ReplayRunRow, member)
constexpr Column<ReplayRunRow> kReplayColumns[] = {C(created_at),
                                                   C(target),
                                                   C(name),
                                                   C(kind),
                                                   C(detail),
                                                   C(predicted_prefill_s),
                                                   C(measured_prefill_s),
                                                   C(predicted_decode_s),
                                                   C(measured_decode_s),
                                                   C(predicted_total_s),
                                                   C(measured_total_s),
                                                   C(error_pct),
                                                   C(predicted_point_total_s),
                                                   C(point_error_pct),
                                                   C(replay_read_gbps),
                                                   C(calibrated_read_gbps)};
#undef C

}  // namespace

void append_replay_runs(const std::string& db_path, const std::vector<ReplayRunRow>& rows) {
  Database db(db_path);
  ensure_schema(db, SchemaPart::kReplay);
  Transaction tx(db);
  auto st = db.prepare(insert_sql<ReplayRunRow>("replay_runs", kReplayColumns));
  for (const auto& r : rows) {
    bind_columns<ReplayRunRow>(st, kReplayColumns, r);
    st.run();
  }
  tx.commit();
}

}  // namespace tiersim::store
