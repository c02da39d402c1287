#include "store/replay_store.hpp"

#include "store/schema.hpp"
#include "store/sqlite.hpp"

namespace tiersim::store {

void append_replay_runs(const std::string& db_path, const std::vector<ReplayRunRow>& rows) {
  Database db(db_path);
  ensure_schema(db, SchemaPart::kReplay);
  Transaction tx(db);
  for (const auto& r : rows) {
    auto st = db.prepare(
        "INSERT INTO replay_runs (created_at, target, name, kind, detail, predicted_prefill_s, "
        "measured_prefill_s, predicted_decode_s, measured_decode_s, predicted_total_s, "
        "measured_total_s, error_pct, predicted_point_total_s, point_error_pct, replay_read_gbps, "
        "calibrated_read_gbps) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    st.bind(1, r.created_at).bind(2, r.target).bind(3, r.name).bind(4, r.kind).bind(5, r.detail);
    st.bind(6, r.predicted_prefill_s).bind(7, r.measured_prefill_s);
    st.bind(8, r.predicted_decode_s).bind(9, r.measured_decode_s);
    st.bind(10, r.predicted_total_s).bind(11, r.measured_total_s).bind(12, r.error_pct);
    st.bind(13, r.predicted_point_total_s);
    st.bind(14, r.point_error_pct);
    st.bind(15, r.replay_read_gbps);
    st.bind(16, r.calibrated_read_gbps);
    st.run();
  }
  tx.commit();
}

}  // namespace tiersim::store
