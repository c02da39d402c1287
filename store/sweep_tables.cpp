#include "store/sweep_tables.hpp"

namespace tiersim::store {

std::optional<std::string> stored_sweep_definition(Database& db, const std::string& name) {
  auto st = db.prepare("SELECT definition FROM sweeps WHERE name = ?");
  st.bind(1, name);
  if (!st.step()) return std::nullopt;
  return st.column_text(0);
}

std::int64_t sweep_run_count(Database& db, const std::string& sweep) {
  auto st = db.prepare("SELECT count(*) FROM runs WHERE sweep = ?");
  st.bind(1, sweep);
  return st.step() ? st.column_int(0) : 0;
}

std::int64_t sweep_failure_count(Database& db, const std::string& sweep) {
  auto st = db.prepare("SELECT count(*) FROM sweep_failures WHERE sweep = ?");
  st.bind(1, sweep);
  return st.step() ? st.column_int(0) : 0;
}

void start_sweep(Database& db, const SweepDefinition& sweep, std::int64_t points,
                 const std::string& tool_version) {
  db.prepare(
        "INSERT INTO sweeps (name, file, description, definition, points, tool_version, started_at) "
        "VALUES (?,?,?,?,?,?,strftime('%Y-%m-%dT%H:%M:%SZ','now')) ON CONFLICT(name) DO UPDATE SET "
        "file=excluded.file, description=excluded.description, definition=excluded.definition, "
        "points=excluded.points, tool_version=excluded.tool_version, started_at=excluded.started_at, "
        "finished_at=NULL")
      .bind(1, sweep.name)
      .bind(2, sweep.file)
      .bind(3, sweep.description)
      .bind(4, sweep.definition)
      .bind(5, points)
      .bind(6, tool_version)
      .run();
  db.prepare("DELETE FROM sweep_failures WHERE sweep = ?").bind(1, sweep.name).run();
}

void finish_sweep(Database& db, const std::string& sweep) {
  db.prepare("UPDATE sweeps SET finished_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE name = ?")
      .bind(1, sweep)
      .run();
}

std::unordered_set<std::string> sweep_run_hashes(Database& db, const std::string& sweep) {
  std::unordered_set<std::string> out;
  auto st = db.prepare("SELECT scenario_hash FROM runs WHERE sweep = ?");
  st.bind(1, sweep);
  while (st.step()) out.insert(st.column_text(0));
  return out;
}

void record_sweep_failure(Database& db, const std::string& sweep, const std::string& point,
                          const std::string& scenario_hash, const std::string& reason) {
  db.prepare(
        "INSERT OR REPLACE INTO sweep_failures (sweep, point, scenario_hash, reason) "
        "VALUES (?,?,?,?)")
      .bind(1, sweep)
      .bind(2, point)
      .bind(3, scenario_hash)
      .bind(4, reason)
      .run();
}

void clear_plan_verdicts(Database& db, const std::string& sweep) {
  db.prepare("DELETE FROM plan_verdicts WHERE sweep = ?").bind(1, sweep).run();
}

void record_plan_verdict(Database& db, const std::string& sweep, const PlanVerdict& v) {
  db.prepare(
        "INSERT OR REPLACE INTO plan_verdicts (sweep, point, scenario_hash, status, reason) "
        "VALUES (?,?,?,?,?)")
      .bind(1, sweep)
      .bind(2, v.point)
      .bind(3, v.scenario_hash)
      .bind(4, v.status)
      .bind(5, v.reason)
      .run();
}

std::vector<PlanVerdict> plan_verdicts(Database& db, const std::string& sweep) {
  std::vector<PlanVerdict> out;
  if (!db.has_table("plan_verdicts")) return out;
  auto st = db.prepare(
      "SELECT point, scenario_hash, status, reason FROM plan_verdicts "
      "WHERE ? = '' OR sweep = ? ORDER BY rowid");
  st.bind(1, sweep).bind(2, sweep);
  while (st.step())
    out.push_back({st.column_text(0), st.column_text(1), st.column_text(2), st.column_text(3)});
  return out;
}

}  // namespace tiersim::store
