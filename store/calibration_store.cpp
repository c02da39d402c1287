// The calibration tables of the results store. Schema documented in calibrate/README.md.
#include "store/calibration_store.hpp"
#include "store/columns.hpp"
#include "store/schema.hpp"

#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

namespace tiersim::store {

void create_calibration_tables(store::Database& db) {
  store::ensure_schema(db, store::SchemaPart::kCalibration);
}

std::int64_t insert_run(store::Database& db, const CalibrationRun& run) {
  create_calibration_tables(db);
  auto st = db.prepare(
      "INSERT INTO calibration_runs (started_at, host, kernel, mode, engine, direct, file_size_bytes, targets, "
      "options, tool_version) VALUES (?,?,?,?,?,?,?,?,?,?)");
  st.bind(1, run.started_at)
      .bind(2, run.host)
      .bind(3, run.kernel)
      .bind(4, run.mode)
      .bind(5, run.engine)
      .bind(6, run.direct ? 1 : 0)
      .bind(7, run.file_size_bytes)
      .bind(8, nlohmann::json(run.targets).dump())
      .bind(9, run.options_json)
      .bind(10, run.tool_version);
  st.run();
  return db.last_insert_rowid();
}

namespace {

// calibration_points' measured columns (schema.cpp), after its id; model_bandwidth_gbps, set by
// the fit later (update_point_fit), is read on its own.
#define C(member) TIERSIM_COLUMN(CalibrationPoint, member)
constexpr Column<CalibrationPoint> kPointColumns[] = {
    C(run_id),     C(target),         C(target_count), C(filesystem),  C(device),     C(rw),
    C(engine),     C(block_bytes),    C(queue_depth),  C(threads),     C(duration_s), C(bytes),
    C(ios),        C(bandwidth_gbps), C(iops),         C(lat_mean_us), C(lat_p50_us), C(lat_p90_us),
    C(lat_p99_us), C(lat_p999_us),    C(lat_max_us),   C(converged),   C(fit_role)};
#undef C

}  // namespace

std::int64_t insert_point(store::Database& db, const CalibrationPoint& p) {
  auto st = db.prepare(insert_sql<CalibrationPoint>("calibration_points", kPointColumns));
  if (p.fit_role.empty()) {
    CalibrationPoint unfitted = p;
    unfitted.fit_role = "none";
    bind_columns<CalibrationPoint>(st, kPointColumns, unfitted);
  } else {
    bind_columns<CalibrationPoint>(st, kPointColumns, p);
  }
  st.run();
  return db.last_insert_rowid();
}

void update_point_fit(store::Database& db, std::int64_t point_id, const std::string& fit_role,
                      double model_bandwidth_gbps) {
  auto st = db.prepare("UPDATE calibration_points SET fit_role = ?, model_bandwidth_gbps = ? WHERE id = ?");
  st.bind(1, fit_role).bind(2, model_bandwidth_gbps).bind(3, point_id);
  st.run();
}

void set_run_profile(store::Database& db, std::int64_t run_id, const std::string& profile_path,
                     const std::string& finished_at) {
  auto st = db.prepare("UPDATE calibration_runs SET profile_path = ?, finished_at = ? WHERE id = ?");
  if (profile_path.empty()) {
    st.bind_null(1);
  } else {
    st.bind(1, profile_path);
  }
  st.bind(2, finished_at).bind(3, run_id);
  st.run();
}

std::int64_t latest_calibration_run(store::Database& db) {
  auto has = db.prepare("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='calibration_runs'");
  if (!has.step() || has.column_int(0) == 0) return 0;
  auto st = db.prepare("SELECT coalesce(max(id), 0) FROM calibration_runs");
  return st.step() ? st.column_int(0) : 0;
}

std::vector<CalibrationPoint> read_calibration_points(store::Database& db, std::int64_t run_id) {
  if (run_id == 0) run_id = latest_calibration_run(db);
  std::vector<CalibrationPoint> out;
  if (run_id == 0) return out;
  auto st = db.prepare("SELECT id, " + column_names<CalibrationPoint>(kPointColumns) +
                       ", coalesce(model_bandwidth_gbps, 0) FROM calibration_points WHERE "
                       "run_id = ? ORDER BY id");
  st.bind(1, run_id);
  constexpr int kModelColumn = 1 + static_cast<int>(std::size(kPointColumns));
  while (st.step()) {
    CalibrationPoint p;
    p.id = st.column_int(0);
    read_columns<CalibrationPoint>(st, kPointColumns, p, 1);
    p.model_bandwidth_gbps = st.column_double(kModelColumn);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<BandwidthCurve> read_bandwidth_curves(store::Database& db, std::int64_t run_id) {
  using Key = std::tuple<std::string, std::string, int, int>;  // target, rw, threads, queue depth
  std::map<Key, std::map<std::int64_t, const CalibrationPoint*>> grouped;
  const auto points = read_calibration_points(db, run_id);
  for (const auto& p : points) grouped[{p.target, p.rw, p.threads, p.queue_depth}][p.block_bytes] = &p;
  std::vector<BandwidthCurve> curves;
  for (const auto& [key, by_block] : grouped) {
    BandwidthCurve c;
    std::tie(c.target, c.rw, c.threads, c.queue_depth) = key;
    for (const auto& [block, p] : by_block) {
      c.target_count = p->target_count;
      c.block_bytes.push_back(static_cast<double>(block));
      c.bandwidth_gbps.push_back(p->bandwidth_gbps);
      c.model_bandwidth_gbps.push_back(p->model_bandwidth_gbps);
    }
    curves.push_back(std::move(c));
  }
  return curves;
}

}  // namespace tiersim::store
