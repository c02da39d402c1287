#pragma once
// The results store: every simulated run, with its fully resolved scenario, in one SQLite file
// that people can query with sqlite3 (schema: reports/README.md). `tiersim run --db`, `compare
// --db` and sweeps write it; `tiersim report` reads it.
//
// Duplicates: a run is identified by (scenario hash, sweep). save() with OnDuplicate::kReplace
// (the default) deletes the old run and inserts the new one in the same transaction, so readers
// see either the old or the new run, never both or neither; OnDuplicate::kSkip keeps the stored
// run and returns its id. Sweeps call has() before simulating (cheap skip) and save with kSkip
// (no duplicates even when two workers race on the same point).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/scenario.hpp"
#include "sim/result.hpp"
#include "store/sqlite.hpp"

namespace tiersim::store {

// At most this many timeline spans are stored per run (one decode step's spans, see save()).
inline constexpr std::size_t kMaxTimelineRows = 4000;

struct StoredMemory {
  std::string tier;
  double required_bytes = 0;
  double capacity_bytes = 0;
};

struct StoredRun {
  std::int64_t id = 0;
  std::string created_at;  // ISO 8601 UTC
  std::string tool_version;
  std::string scenario_name;
  std::string scenario_hash;
  std::string scenario_yaml;  // fully resolved; load_scenario_text() re-creates the scenario
  std::string workload;
  bool fits = true;
  std::string shortfall;
  std::string bottleneck;
  std::string sweep;  // "" when the run belongs to no sweep (NULL in the table)
  // The name `tiersim compare` gave this configuration; "" when it ran outside a compare file's
  // variants (NULL in the table, and always for files written before results schema version 2).
  std::string variant;
  std::vector<sim::Metric> metrics;  // in name order
  std::vector<StoredMemory> memory;
  std::vector<sim::ResourceUsage> utilization;    // unit is empty (not stored)
  std::vector<sim::TimelineSpan> timeline;        // one step's spans; empty when not traced
  std::map<std::string, std::string> provenance;  // key path -> source

  // What reports call the run: its compare variant's name, else its scenario's name.
  const std::string& display_name() const { return variant.empty() ? scenario_name : variant; }

  // Metric reads as RunResult has them (sim/result.hpp): by handle or, for metrics named at run
  // time, by name; get() throws sim::MissingMetric for a metric the run did not report.
  const sim::Metric* find_metric(std::string_view name) const {
    return sim::find_metric_in(metrics, name);
  }
  std::optional<double> find(std::string_view name) const { return sim::metric_if(metrics, name); }
  std::optional<double> find(const sim::MetricDecl& m) const { return find(m.name); }
  double get(std::string_view name) const { return sim::metric_value(metrics, name); }
  double get(const sim::MetricDecl& m) const { return get(m.name); }
  bool has(std::string_view name) const { return find_metric(name) != nullptr; }
  bool has(const sim::MetricDecl& m) const { return has(m.name); }
};

// Which runs runs() returns. Empty fields do not filter.
struct RunFilter {
  std::optional<std::string> sweep;  // "" = runs outside any sweep; nullopt = every run
  std::string scenario_hash;
  std::string scenario_name;
  bool details = true;  // also read metrics, memory, utilization, timeline and provenance
};

enum class OnDuplicate { kReplace, kSkip };

class ResultsStore {
 public:
  // Opens or creates the database and its tables. Throws StoreError ("cannot open results
  // database ...") when the file cannot be opened, when it is not tiersim's (store::Database), or
  // when it was written by a newer tiersim. kReadOnly (readers such as `tiersim report`) writes
  // nothing, works on read-only files, and throws StoreError when the file holds no runs table.
  explicit ResultsStore(const std::string& path, store::Access access = store::Access::kReadWrite);
  ~ResultsStore();
  ResultsStore(const ResultsStore&) = delete;
  ResultsStore& operator=(const ResultsStore&) = delete;

  // Stores one run in one transaction and returns its id. A failure leaves nothing behind.
  // sweep "" = not part of a sweep; variant "" = not a named compare variant. The timeline is
  // reduced to one decode step (the middle one; for other workloads the middle phase) and capped at
  // kMaxTimelineRows spans.
  std::int64_t save(const Scenario& scenario, const sim::RunResult& result,
                    const std::string& tool_version, const std::string& sweep = "",
                    OnDuplicate on_duplicate = OnDuplicate::kReplace,
                    const std::string& variant = "");

  bool has(const std::string& scenario_hash, const std::string& sweep = "") const;
  // Id of the run with this hash in this sweep.
  std::optional<std::int64_t> find(const std::string& scenario_hash,
                                   const std::string& sweep = "") const;

  // Runs in id order (oldest first).
  std::vector<StoredRun> runs(const RunFilter& filter = {}) const;
  std::optional<StoredRun> run(std::int64_t id) const;
  // Distinct non-empty sweep names, sorted.
  std::vector<std::string> sweeps() const;
  bool remove(std::int64_t id);

  // The connection, for readers of other tables in the same file (calibration points).
  store::Database& database() const { return db_; }
  const std::string& path() const { return db_.path(); }

 private:
  void create_schema();
  void check_version();
  void read_details(StoredRun& run) const;
  // False for a file opened read-only at results schema version 1 (no runs.variant column).
  bool has_variant_column_ = true;
  // mutable: reading prepares statements, which needs a non-const connection.
  mutable store::Database db_;
  // save()'s inserts, prepared on the first save and reused (a sweep saves thousands of runs;
  // compiling six statements each time was a tenth of its storing). After db_: freed before it.
  struct Inserts;
  std::unique_ptr<Inserts> inserts_;
  // The provenance set holding exactly `provenance`, stored now if the file has none yet.
  std::int64_t provenance_set(const std::map<std::string, std::string>& provenance);
  // Set ids this connection has stored or found, by their entries (see provenance_set). tiersim
  // never deletes a set, so an id stays valid until a rollback on this connection (a failed save,
  // a sweep's batch given up) takes back the sets stored in it: the cache is emptied when
  // Database::rollbacks() moves on from provenance_sets_rollbacks_.
  std::unordered_map<std::string, std::int64_t> provenance_sets_;
  std::uint64_t provenance_sets_rollbacks_ = 0;
  // provenance_set's work past the last set's check: the cache above, then the file.
  std::int64_t provenance_set_of(const std::map<std::string, std::string>& provenance);
  // The entries and id of the set provenance_set returned last (emptied with the cache above).
  std::optional<std::pair<std::map<std::string, std::string>, std::int64_t>> last_set_;
};

// The spans save() keeps: those overlapping the time window of one representative phase.
std::vector<sim::TimelineSpan> representative_step(const std::vector<sim::TimelineSpan>& spans,
                                                   std::size_t max_rows = kMaxTimelineRows);

}  // namespace tiersim::store
