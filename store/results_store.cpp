#include "store/results_store.hpp"

#include "store/columns.hpp"
#include "store/schema.hpp"

#include "model/stable_hash.hpp"
#include "sim/workloads/names.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <set>

namespace tiersim::store {
namespace {

// "" is stored as NULL: no sweep, no variant.
void bind_or_null(store::Statement& st, int index, const std::string& text) {
  if (text.empty())
    st.bind_null(index);
  else
    st.bind(index, text);
}

// The run with a scenario hash in a sweep ("" outside one), by find() and save()'s duplicate check.
constexpr std::string_view kFindRunSql =
    "SELECT id FROM runs WHERE scenario_hash = ? AND ifnull(sweep, '') = ?";

// The id `st` (kFindRunSql, freshly reset) finds; the statement is reset again for its next use.
std::optional<std::int64_t> find_with(store::Statement& st, const std::string& scenario_hash,
                                      const std::string& sweep) {
  st.bind(1, scenario_hash).bind(2, sweep);
  std::optional<std::int64_t> id;
  if (st.step()) id = st.column_int(0);
  st.reset();
  return id;
}

}  // namespace

std::vector<sim::TimelineSpan> representative_step(const std::vector<sim::TimelineSpan>& spans,
                                                   std::size_t max_rows) {
  if (spans.empty()) return {};
  std::set<int> phases;
  for (const auto& s : spans) phases.insert(s.phase);
  // Inference: phase 0 is prefill, 1.. are decode steps. The middle decode step is steady state
  // (the first one still overlaps prefill's tail, the last one has nothing to prefetch).
  std::vector<int> candidates;
  for (int p : phases)
    if (p > 0 || phases.size() == 1) candidates.push_back(p);
  const int phase = candidates[candidates.size() / 2];
  double begin = 0, end = 0;
  bool first = true;
  for (const auto& s : spans) {
    if (s.phase != phase) continue;
    begin = first ? s.start_s : std::min(begin, s.start_s);
    end = first ? s.end_s : std::max(end, s.end_s);
    first = false;
  }
  // Every span overlapping the step's window, whatever its phase, so the Gantt shows prefetching
  // of the next step running under this one.
  std::vector<sim::TimelineSpan> out;
  for (const auto& s : spans) {
    if (s.end_s < begin || s.start_s > end) continue;
    if (out.size() >= max_rows) break;
    out.push_back(s);
  }
  return out;
}

ResultsStore::ResultsStore(const std::string& path, store::Access access) : db_(path, access) {
  if (access == store::Access::kReadOnly) {
    if (!db_.has_table("runs") || !db_.has_table("schema_version"))
      throw StoreError("results database '" + db_.path() +
                       "' holds no runs (it has no runs table; store some with tiersim run "
                       "FILE --db " +
                       db_.path() + ")");
    check_version();
    // Read-only never migrates: an old file is read as it is, without the column it lacks.
    has_variant_column_ = store::stored_version(db_, store::SchemaPart::kResults) >= 2;
  } else {
    create_schema();
  }
}

void ResultsStore::check_version() {
  store::check_schema_version(db_, store::SchemaPart::kResults);
}

void ResultsStore::create_schema() {
  store::ensure_schema(db_, store::SchemaPart::kResults);
}

struct ResultsStore::Inserts {
  explicit Inserts(store::Database& db)
      : run(db,
            "INSERT INTO runs (created_at, tool_version, scenario_name, scenario_hash, "
            "scenario_yaml, workload, fits, shortfall, bottleneck, sweep, variant, "
            "provenance_set) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"),
        metric(db, "INSERT INTO metrics (run_id, name, value, unit) VALUES (?,?,?,?)"),
        memory(
            db,
            "INSERT INTO memory (run_id, tier, required_bytes, capacity_bytes) VALUES (?,?,?,?)"),
        utilization(db,
                    "INSERT INTO utilization (run_id, resource, utilization, busy_s) "
                    "VALUES (?,?,?,?)"),
        timeline(db,
                 "INSERT INTO timeline (run_id, resource, label, start_s, end_s, phase, item) "
                 "VALUES (?,?,?,?,?,?,?)"),
        find_set(db, "SELECT id FROM provenance_sets WHERE digest = ?"),
        add_set(db, "INSERT INTO provenance_sets (digest) VALUES (?)"),
        set_entry(db, "INSERT INTO provenance_entries (set_id, key, source) VALUES (?,?,?)"),
        set_entries(db, "SELECT key, source FROM provenance_entries WHERE set_id = ? ORDER BY key"),
        find_run(db, kFindRunSql) {}
  void reset() {
    for (store::Statement* st : {&run, &metric, &memory, &utilization, &timeline, &find_set,
                                 &add_set, &set_entry, &set_entries, &find_run})
      st->reset();
  }
  store::Statement run, metric, memory, utilization, timeline;
  store::Statement find_set, add_set, set_entry, set_entries;
  // save()'s duplicate check (find), here rather than prepared on every save.
  store::Statement find_run;
};

ResultsStore::~ResultsStore() = default;

std::int64_t ResultsStore::save(const Scenario& scenario, const sim::RunResult& result,
                                const std::string& tool_version, const std::string& sweep,
                                OnDuplicate on_duplicate, const std::string& variant) {
  if (scenario.hash.empty())
    throw StoreError("results database '" + db_.path() + "': scenario '" + scenario.name +
                     "' has no hash (was it built by the scenario loader?)");
  // BEGIN IMMEDIATE takes the write lock first, so check-then-insert is atomic across processes.
  store::Transaction tx(db_);
  if (!inserts_) inserts_ = std::make_unique<Inserts>(db_);
  inserts_->reset();  // a save that failed part-way may have left one stepped
  if (auto existing = find_with(inserts_->find_run, scenario.hash, sweep)) {
    if (on_duplicate == OnDuplicate::kSkip) {
      tx.commit();
      return *existing;
    }
    db_.prepare("DELETE FROM runs WHERE id = ?").bind(1, *existing).run();
  }
  const std::int64_t set_id = provenance_set(scenario.provenance.entries());
  auto& ins = inserts_->run;
  ins.bind(1, store::utc_timestamp())
      .bind(2, tool_version)
      .bind(3, scenario.name)
      .bind(4, scenario.hash)
      .bind(5, scenario.portable_yaml.empty() ? scenario.resolved_yaml : scenario.portable_yaml)
      .bind(6, result.workload)
      .bind(7, result.fits ? 1 : 0)
      .bind(8, result.shortfall)
      .bind(9, result.bottleneck);
  bind_or_null(ins, 10, sweep);
  bind_or_null(ins, 11, variant);
  ins.bind(12, set_id);
  ins.run();
  const std::int64_t id = db_.last_insert_rowid();

  auto& met = inserts_->metric;
  for (const auto& m : result.metrics)
    met.bind(1, id).bind(2, m.name).bind(3, m.value).bind(4, m.unit).run();
  auto& mem = inserts_->memory;
  for (const auto& t : result.memory)
    mem.bind(1, id).bind(2, t.tier).bind(3, t.required_bytes).bind(4, t.capacity_bytes).run();
  auto& use = inserts_->utilization;
  for (const auto& u : result.utilization)
    use.bind(1, id).bind(2, u.name).bind(3, u.utilization).bind(4, u.busy_s).run();
  auto& tl = inserts_->timeline;
  for (const auto& s : representative_step(result.timeline))
    tl.bind(1, id)
        .bind(2, s.resource)
        .bind(3, s.label)
        .bind(4, s.start_s)
        .bind(5, s.end_s)
        .bind(6, s.phase)
        .bind(7, s.item)
        .run();
  tx.commit();
  return id;
}

// A set is identified by its entries: each key and source, NUL-terminated, in key order. The
// digest stored with it is that text's FNV-1a 64 with its length and entry count; a set found by
// digest is compared entry by entry before it is used, so a digest collision is an error, never
// another run's provenance.
std::int64_t ResultsStore::provenance_set(const std::map<std::string, std::string>& provenance) {
  if (db_.rollbacks() != provenance_sets_rollbacks_) {
    provenance_sets_.clear();  // a rollback may have taken a cached set back
    last_set_.reset();
    provenance_sets_rollbacks_ = db_.rollbacks();
  }
  // A sweep's points mostly share their provenance with the point stored before: comparing the
  // entries is cheaper than joining them into the key below and hashing it.
  if (last_set_ && last_set_->first == provenance) return last_set_->second;
  const std::int64_t id = provenance_set_of(provenance);
  last_set_.emplace(provenance, id);
  return id;
}

std::int64_t ResultsStore::provenance_set_of(const std::map<std::string, std::string>& provenance) {
  std::string entries;
  for (const auto& [key, source] : provenance) {
    entries += key;
    entries += '\0';
    entries += source;
    entries += '\0';
  }
  if (const auto it = provenance_sets_.find(entries); it != provenance_sets_.end())
    return it->second;
  char digest[64];
  std::snprintf(digest, sizeof digest, "fnv1a64:%016llx:%zu:%zu",
                static_cast<unsigned long long>(fnv1a64(entries)), entries.size(),
                provenance.size());
  std::int64_t id = 0;
  auto& find = inserts_->find_set;
  find.bind(1, digest);
  if (find.step()) {
    id = find.column_int(0);
    find.reset();
    std::map<std::string, std::string> stored;
    auto& read = inserts_->set_entries;
    read.bind(1, id);
    while (read.step()) stored[read.column_text(0)] = read.column_text(1);
    read.reset();
    if (stored != provenance)
      throw StoreError("results database '" + db_.path() + "': provenance set " +
                       std::to_string(id) + " has the digest " + digest +
                       " of different entries (a hash collision); the run was not stored");
  } else {
    find.reset();
    inserts_->add_set.bind(1, digest).run();
    id = db_.last_insert_rowid();
    auto& entry = inserts_->set_entry;
    for (const auto& [key, source] : provenance)
      entry.bind(1, id).bind(2, key).bind(3, source).run();
  }
  provenance_sets_.emplace(std::move(entries), id);
  return id;
}

std::optional<std::int64_t> ResultsStore::find(const std::string& scenario_hash,
                                               const std::string& sweep) const {
  auto st = db_.prepare(kFindRunSql);
  return find_with(st, scenario_hash, sweep);
}

bool ResultsStore::has(const std::string& scenario_hash, const std::string& sweep) const {
  return find(scenario_hash, sweep).has_value();
}

namespace {

// The runs columns a StoredRun reads back, after its id; variant, which files written before
// results schema version 2 lack, follows them (runs()).
#define C(member) TIERSIM_COLUMN(StoredRun, member)
constexpr store::Column<StoredRun> kRunColumns[] = {
    C(created_at), C(tool_version), C(scenario_name), C(scenario_hash), C(scenario_yaml),
    C(workload),   C(fits),         C(shortfall),     C(bottleneck),    C(sweep)};
#undef C

}  // namespace

std::vector<StoredRun> ResultsStore::runs(const RunFilter& filter) const {
  std::string sql = "SELECT id, " + store::column_names<StoredRun>(kRunColumns) + ", " +
                    std::string(has_variant_column_ ? "variant" : "NULL") + " FROM runs WHERE 1=1";
  if (filter.sweep) sql += " AND ifnull(sweep, '') = ?1";
  if (!filter.scenario_hash.empty()) sql += " AND scenario_hash = ?2";
  if (!filter.scenario_name.empty()) sql += " AND scenario_name = ?3";
  sql += " ORDER BY id";
  auto st = db_.prepare(sql);
  if (filter.sweep) st.bind(1, *filter.sweep);
  if (!filter.scenario_hash.empty()) st.bind(2, filter.scenario_hash);
  if (!filter.scenario_name.empty()) st.bind(3, filter.scenario_name);
  constexpr int kVariantColumn = 1 + static_cast<int>(std::size(kRunColumns));
  std::vector<StoredRun> out;
  while (st.step()) {
    StoredRun r;
    r.id = st.column_int(0);
    store::read_columns<StoredRun>(st, kRunColumns, r, 1);
    r.variant = st.column_text(kVariantColumn);
    out.push_back(std::move(r));
  }
  if (filter.details)
    for (auto& r : out) read_details(r);
  return out;
}

void ResultsStore::read_details(StoredRun& r) const {
  auto met = db_.prepare("SELECT name, value, unit FROM metrics WHERE run_id = ? ORDER BY name");
  met.bind(1, r.id);
  while (met.step())
    r.metrics.push_back({met.column_text(0), met.column_double(1), met.column_text(2)});
  auto mem = db_.prepare(
      "SELECT tier, required_bytes, capacity_bytes FROM memory WHERE run_id = ? ORDER BY rowid");
  mem.bind(1, r.id);
  while (mem.step())
    r.memory.push_back({mem.column_text(0), mem.column_double(1), mem.column_double(2)});
  auto use = db_.prepare(
      "SELECT resource, utilization, busy_s FROM utilization WHERE run_id = ? ORDER BY rowid");
  use.bind(1, r.id);
  while (use.step())
    r.utilization.push_back(
        sim::usage_from_name(use.column_text(0), "", use.column_double(2), use.column_double(1)));
  auto tl = db_.prepare(
      "SELECT resource, label, start_s, end_s, phase, item FROM timeline WHERE run_id = ? "
      "ORDER BY rowid");
  tl.bind(1, r.id);
  while (tl.step()) {
    std::string label = tl.column_text(1);
    const sim::Activity activity = sim::parse_activity(label).value_or(sim::Activity{});
    r.timeline.push_back({tl.column_text(0), std::move(label), tl.column_double(2),
                          tl.column_double(3), static_cast<int>(tl.column_int(4)),
                          static_cast<int>(tl.column_int(5)), activity});
  }
  auto prov = db_.prepare("SELECT key, source FROM provenance WHERE run_id = ? ORDER BY key");
  prov.bind(1, r.id);
  while (prov.step()) r.provenance[prov.column_text(0)] = prov.column_text(1);
}

std::optional<StoredRun> ResultsStore::run(std::int64_t id) const {
  auto st = db_.prepare("SELECT scenario_hash, ifnull(sweep, '') FROM runs WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  RunFilter f;
  f.scenario_hash = st.column_text(0);
  f.sweep = st.column_text(1);
  auto rs = runs(f);
  if (rs.empty()) return std::nullopt;
  return std::move(rs.front());
}

std::vector<std::string> ResultsStore::sweeps() const {
  auto st = db_.prepare("SELECT DISTINCT sweep FROM runs WHERE sweep IS NOT NULL ORDER BY sweep");
  std::vector<std::string> out;
  while (st.step()) out.push_back(st.column_text(0));
  return out;
}

bool ResultsStore::remove(std::int64_t id) {
  store::Transaction tx(db_);
  db_.prepare("DELETE FROM runs WHERE id = ?").bind(1, id).run();
  const bool removed = sqlite3_changes(db_.handle()) > 0;
  tx.commit();
  return removed;
}

}  // namespace tiersim::store
