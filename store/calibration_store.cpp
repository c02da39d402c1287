// The calibration tables of the results store. Schema documented in calibrate/README.md.
#include "store/calibration_store.hpp"
#include "store/schema.hpp"

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

std::int64_t insert_point(store::Database& db, const CalibrationPoint& p) {
  auto st = db.prepare(
      "INSERT INTO calibration_points (run_id, target, target_count, filesystem, device, rw, engine, block_bytes, "
      "queue_depth, threads, duration_s, bytes, ios, bandwidth_gbps, iops, lat_mean_us, lat_p50_us, lat_p90_us, "
      "lat_p99_us, lat_p999_us, lat_max_us, converged, fit_role) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  st.bind(1, p.run_id)
      .bind(2, p.target)
      .bind(3, p.target_count)
      .bind(4, p.filesystem)
      .bind(5, p.device)
      .bind(6, p.rw)
      .bind(7, p.engine)
      .bind(8, p.block_bytes)
      .bind(9, p.queue_depth)
      .bind(10, p.threads)
      .bind(11, p.duration_s)
      .bind(12, p.bytes)
      .bind(13, p.ios)
      .bind(14, p.bandwidth_gbps)
      .bind(15, p.iops)
      .bind(16, p.lat_mean_us)
      .bind(17, p.lat_p50_us)
      .bind(18, p.lat_p90_us)
      .bind(19, p.lat_p99_us)
      .bind(20, p.lat_p999_us)
      .bind(21, p.lat_max_us)
      .bind(22, p.converged ? 1 : 0)
      .bind(23, p.fit_role.empty() ? std::string("none") : p.fit_role);
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
  auto st = db.prepare(
      "SELECT id, run_id, target, target_count, filesystem, device, rw, engine, block_bytes, queue_depth, threads, "
      "duration_s, bytes, ios, bandwidth_gbps, iops, lat_mean_us, lat_p50_us, lat_p90_us, lat_p99_us, lat_p999_us, "
      "lat_max_us, converged, fit_role, coalesce(model_bandwidth_gbps, 0) FROM calibration_points WHERE run_id = ? "
      "ORDER BY id");
  st.bind(1, run_id);
  while (st.step()) {
    CalibrationPoint p;
    p.id = st.column_int(0);
    p.run_id = st.column_int(1);
    p.target = st.column_text(2);
    p.target_count = static_cast<int>(st.column_int(3));
    p.filesystem = st.column_text(4);
    p.device = st.column_text(5);
    p.rw = st.column_text(6);
    p.engine = st.column_text(7);
    p.block_bytes = st.column_int(8);
    p.queue_depth = static_cast<int>(st.column_int(9));
    p.threads = static_cast<int>(st.column_int(10));
    p.duration_s = st.column_double(11);
    p.bytes = st.column_int(12);
    p.ios = st.column_int(13);
    p.bandwidth_gbps = st.column_double(14);
    p.iops = st.column_double(15);
    p.lat_mean_us = st.column_double(16);
    p.lat_p50_us = st.column_double(17);
    p.lat_p90_us = st.column_double(18);
    p.lat_p99_us = st.column_double(19);
    p.lat_p999_us = st.column_double(20);
    p.lat_max_us = st.column_double(21);
    p.converged = st.column_int(22) != 0;
    p.fit_role = st.column_text(23);
    p.model_bandwidth_gbps = st.column_double(24);
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
