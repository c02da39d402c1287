#include "store/capacity_studies.hpp"

namespace tiersim::store {

namespace {

// The search's answer, the same ten columns in both tables (attainment_pct .. limit_reason),
// bound or read from column `first` on.
void bind_answer(Statement& st, int first, const CapacityStudy& s) {
  st.bind(first, s.attainment_pct);
  st.bind(first + 1, s.slo_ttft_s);
  st.bind(first + 2, s.slo_tbt_s);
  st.bind(first + 3, s.stability ? 1 : 0).bind(first + 4, s.found ? 1 : 0);
  st.bind(first + 5, s.unbounded ? 1 : 0).bind(first + 6, s.zero_load_miss ? 1 : 0);
  st.bind(first + 7, s.rate_requests_per_s);
  st.bind(first + 8, s.failing_rate_requests_per_s);
  st.bind(first + 9, s.limit);
}

void read_answer(const Statement& st, int first, CapacityStudy& s) {
  s.attainment_pct = st.column_double(first);
  s.slo_ttft_s = st.column_optional_double(first + 1);
  s.slo_tbt_s = st.column_optional_double(first + 2);
  s.stability = st.column_int(first + 3) != 0;
  s.found = st.column_int(first + 4) != 0;
  s.unbounded = st.column_int(first + 5) != 0;
  s.zero_load_miss = st.column_int(first + 6) != 0;
  s.rate_requests_per_s = st.column_optional_double(first + 7);
  s.failing_rate_requests_per_s = st.column_optional_double(first + 8);
  s.limit = st.column_text(first + 9);
}

}  // namespace

void save_capacity_study(Database& db, const CapacityStudy& s) {
  auto st = db.prepare(
      "INSERT OR REPLACE INTO capacity_studies (sweep, scenario_name, created_at, attainment_pct, "
      "slo_ttft_s, slo_tbt_s, stability, found, unbounded, zero_load_miss, rate_requests_per_s, "
      "failing_rate_requests_per_s, limit_reason, entry_run) "
      "VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%SZ','now'), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  st.bind(1, s.sweep).bind(2, s.scenario_name);
  bind_answer(st, 3, s);
  st.bind(13, s.entry_run);
  st.run();
}

std::vector<CapacityStudy> capacity_studies(Database& db) {
  std::vector<CapacityStudy> out;
  if (!db.has_table("capacity_studies")) return out;  // older file opened read-only
  auto st = db.prepare(
      "SELECT sweep, scenario_name, created_at, attainment_pct, slo_ttft_s, slo_tbt_s, stability, "
      "found, unbounded, zero_load_miss, rate_requests_per_s, failing_rate_requests_per_s, "
      "limit_reason, entry_run FROM capacity_studies ORDER BY sweep");
  while (st.step()) {
    CapacityStudy s;
    s.sweep = st.column_text(0);
    s.scenario_name = st.column_text(1);
    s.created_at = st.column_text(2);
    read_answer(st, 3, s);
    if (!st.column_is_null(13)) s.entry_run = st.column_int(13);
    out.push_back(std::move(s));
  }
  return out;
}

void clear_plan_capacity(Database& db, const std::string& sweep) {
  db.prepare("DELETE FROM plan_capacity WHERE sweep = ?").bind(1, sweep).run();
}

void save_plan_capacity(Database& db, const PlanCapacity& row) {
  const CapacityStudy& s = row.study;
  auto st = db.prepare(
      "INSERT OR REPLACE INTO plan_capacity (sweep, point, scenario_hash, attainment_pct, "
      "slo_ttft_s, slo_tbt_s, stability, found, unbounded, zero_load_miss, rate_requests_per_s, "
      "failing_rate_requests_per_s, limit_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  st.bind(1, s.sweep).bind(2, row.point).bind(3, row.scenario_hash);
  bind_answer(st, 4, s);
  st.run();
}

std::vector<PlanCapacity> plan_capacities(Database& db, const std::string& sweep) {
  std::vector<PlanCapacity> out;
  if (!db.has_table("plan_capacity")) return out;  // older file opened read-only
  auto st = db.prepare(
      "SELECT sweep, point, scenario_hash, attainment_pct, slo_ttft_s, slo_tbt_s, stability, "
      "found, unbounded, zero_load_miss, rate_requests_per_s, failing_rate_requests_per_s, "
      "limit_reason FROM plan_capacity WHERE ? = '' OR sweep = ? ORDER BY rowid");
  st.bind(1, sweep).bind(2, sweep);
  while (st.step()) {
    PlanCapacity row;
    CapacityStudy& s = row.study;
    s.sweep = st.column_text(0);
    row.point = st.column_text(1);
    row.scenario_hash = st.column_text(2);
    read_answer(st, 3, s);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace tiersim::store
