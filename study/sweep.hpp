#pragma once
// Sweeps: one base scenario, axes over any scenario key path, every point simulated in parallel
// and stored in the results store (reports/results_store.hpp) keyed by the resolved scenario's
// hash, so a re-run (or a run resumed after kill -9) simulates only what is missing.
//
// File format: scenarios/sweeps/README.md. The axis grammar (grid, zip, ranges) is shared with
// plan files (sim/planner.hpp).
#include <atomic>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/progress.hpp"
#include "config/catalog.hpp"
#include "config/scenario_loader.hpp"
#include "config/yaml_reader.hpp"
#include "model/scenario.hpp"
#include "sim/result.hpp"

namespace tiersim::store {
class ResultsStore;
class Transaction;
}

namespace tiersim::sweep {

// One value of an axis as YAML text ("16", "generic-gen5", "{gpu: 0.25, cpu: 0.75}") with the
// sweep-file line it came from, so that a bad value is reported where it was written.
struct AxisValue {
  std::string yaml;
  int line = 0;
};

// One axis of the grid. Several keys form a zipped axis: they advance together.
struct Axis {
  std::vector<std::string> keys;
  std::vector<std::vector<AxisValue>> values;  // values[key][i]; every key has size() values
  // The same values as typed settings (settings[key][i]), read once by parse_point_space; empty
  // when the axis was built otherwise (points then read the values' text).
  std::vector<std::vector<config::Setting>> settings;
  std::size_t size() const { return values.empty() ? 0 : values.front().size(); }
};

// The part of a sweep or plan file that defines points: a base scenario, fixed overrides and axes.
struct PointSpace {
  std::string file;       // the sweep/plan file, for messages
  std::string base_path;  // the base scenario, resolved relative to the sweep file
  // The base file's text, read once by parse_point_space (null: read base_path at each load).
  std::shared_ptr<const config::ScenarioSource> base;
  std::vector<std::pair<std::string, AxisValue>> fixed;  // `set:` overrides, applied first
  std::vector<config::Setting> fixed_settings;  // the same as typed settings (see Axis::settings)
  std::vector<Axis> axes;                                // product, last axis fastest
  // The product of the axis sizes, saturating at SIZE_MAX (parse_sweep and parse_plan have
  // checked it against their limit, check_point_count).
  std::size_t point_count() const;
};

// Stated limits on the number of points (`tiersim schema` prints them). A sweep streams its points
// (nothing is allocated per point up front) and stores one row each: 1e8 rows is far beyond what
// can be simulated in a day and keeps a results database under tens of GB. A plan keeps every
// candidate in memory to prune and rank them (2.8 KB each before its scenario is loaded, about
// 10 KB after), so its bound keeps that near a gigabyte; the shipped plans have up to 5,760.
inline constexpr std::size_t kMaxSweepPoints = 100'000'000;
inline constexpr std::size_t kMaxPlanPoints = 100'000;

// Multiplies the axis sizes with overflow-safe arithmetic and throws ConfigError (file, line and
// key of the axis that takes the product past `limit`) when the space has more than `limit`
// points. `what` names the file kind ("sweep", "plan").
void check_point_count(const PointSpace& space, std::size_t limit, const std::string& what);

struct SweepSpec {
  std::string name;  // the sweep name in the results store
  std::string description;
  std::string text;  // the sweep file's text (stored in the sweeps table)
  PointSpace space;
};

// One point: the overrides that make it, in application order.
struct Point {
  std::size_t index = 0;
  std::vector<std::string> overrides;  // "key.path=value"
  // The same overrides as typed settings, one for each (from the space's, by point_at); when the
  // counts differ, load_point reads `overrides` instead.
  std::vector<config::Setting> settings;
  std::string label;                   // "workload.batch=16 hardware.nvme.count=2" (axes only)
};

// Reads the `base`, `set`, `grid` and `zip` keys of a sweep or plan file (the caller checks the
// other keys). Throws ConfigError with file, line and key path.
PointSpace parse_point_space(const config::YNode& root);
SweepSpec parse_sweep_text(const std::string& text, const std::string& file);
// The same from the already parsed `root` of `text` (the fuzz target parses each input once).
SweepSpec parse_sweep(const config::YNode& root, const std::string& text);
SweepSpec parse_sweep_file(const std::string& path);

Point point_at(const PointSpace& space, std::size_t index);

// The items ("key=value") of point label `a` that label `b` does not have, space-separated in
// a's order; "" when a has none b lacks.
std::string label_items_not_in(const std::string& a, const std::string& b);
// Whether two points (their labels) may be one configuration with hardware its run leaves unused,
// once their timings are the same: every key in which they differ is a hardware key (drives, DRAM,
// ...), and none is the host platform (another host is another server) or anything else (another
// cloud instance rents the same GPUs at another price; another policy is another way to run).
bool differ_in_hardware_only(const std::string& a, const std::string& b);

// Loads the base once per distinct axis value with only that value applied (a zipped axis: with
// the column's earlier keys applied too) and rethrows a ConfigError about that key at the
// sweep-file line of the value (typos in drive names, values out of range). Errors that depend on
// a combination of axes are left to the points themselves.
void check_axis_values(const PointSpace& space, const config::Catalog& catalog);

// The point's resolved scenario. Throws ConfigError/CatalogError/ModelError for invalid points.
Scenario load_point(const PointSpace& space, const Point& point, const config::Catalog& catalog);

enum class Status {
  kSimulated,  // fits and was simulated
  kNoFit,      // the capacity check failed; result holds the shortfall
  kSkipped,    // already stored (resume)
  kInvalid,    // the scenario could not be built or the model cannot express it
};
const char* to_string(Status s);

struct Outcome {
  Point point;
  Status status = Status::kSimulated;
  std::optional<Scenario> scenario;  // set unless the scenario itself was invalid
  sim::RunResult result;
  std::string error;  // kInvalid: why
};

struct RunOptions {
  int threads = 0;  // 0 = every hardware thread
  // Called from worker threads with a point's scenario hash; true = already done, skip it. Must be
  // safe to call concurrently (read-only lookups).
  std::function<bool(const std::string& hash)> done;
  // Set by the caller (or a signal handler) to stop handing out points; points in flight finish.
  const std::atomic<bool>* stop = nullptr;
  bool progress_tty = false;  // run_sweep's progress stream is a terminal (overwrite one line)
};

// Simulates `indices` of `space` on a pool of threads. Each worker loads and simulates its own
// points (the loader and the simulator share nothing mutable: the catalog is read-only and each
// simulation owns its Engine). `sink` runs on the calling thread only, once per point, in
// completion order: the one writer.
// Points first, first + stride, ... (count of them), generated as the workers take them.
struct PointIndices {
  std::size_t first = 0;
  std::size_t stride = 1;
  std::size_t count = 0;
  std::size_t at(std::size_t k) const { return first + k * stride; }
};
void run_points(const PointSpace& space, const PointIndices& indices,
                const config::Catalog& catalog, const RunOptions& options,
                const std::function<void(Outcome&&)>& sink);
void run_points(const PointSpace& space, const std::vector<std::size_t>& indices,
                const config::Catalog& catalog, const RunOptions& options,
                const std::function<void(Outcome&&)>& sink);

// A sweep's progress: points by status, rate and ETA, drawn by the one progress line
// (common/progress.hpp): redrawn on a terminal, a plain line every 5 s otherwise.
class Progress {
 public:
  Progress(std::ostream& os, std::string what, std::size_t total, bool tty);
  void add(Status s);
  void finish();
  std::size_t count(Status s) const { return counts_[static_cast<std::size_t>(s)]; }
  std::size_t done() const;

 private:
  std::string text(bool final_line) const;
  ProgressLine line_;
  std::string what_;
  std::size_t total_;
  std::size_t counts_[4] = {0, 0, 0, 0};
  double start_s_;
};

// The results store as a sweep sees it: runs through ResultsStore (one commit per point, WAL,
// synchronous=NORMAL so a commit survives kill -9 without an fsync each), plus two tables of its
// own: `sweeps` (definition and point count per sweep name) and `sweep_failures` (points that
// could not be built or simulated, with the reason).
class SweepStore {
 public:
  explicit SweepStore(const std::string& path);
  ~SweepStore();
  SweepStore(const SweepStore&) = delete;
  SweepStore& operator=(const SweepStore&) = delete;

  void begin_sweep(const SweepSpec& spec, std::size_t points, const std::string& tool_version);
  void finish_sweep(const std::string& sweep);
  // Hashes of the runs already stored under this sweep name.
  std::unordered_set<std::string> done_hashes(const std::string& sweep) const;
  // Stores a simulated/no-fit run (skipping one already there) or records a failure. Points are
  // committed in batches (kBatchPoints, or kBatchSeconds after the batch's first): one commit
  // per point would cost more than simulating it. A process killed mid-batch loses that batch,
  // which a re-run recomputes; flush() (and the destructor) commits what is saved.
  void save(const Outcome& outcome, const std::string& sweep, const std::string& tool_version);
  void flush();
  static constexpr std::size_t kBatchPoints = 256;
  static constexpr double kBatchSeconds = 0.5;
  std::size_t run_count(const std::string& sweep) const;
  std::size_t failure_count(const std::string& sweep) const;
  store::ResultsStore& results() { return *results_; }

 private:
  std::unique_ptr<store::ResultsStore> results_;
  void save_one(const Outcome& outcome, const std::string& sweep, const std::string& tool_version);
  std::unique_ptr<store::Transaction> batch_;  // open while saved points are not committed
  std::size_t batch_points_ = 0;
  double batch_started_s_ = 0;  // monotonic clock [s]
};

struct SweepSummary {
  std::size_t points = 0, simulated = 0, no_fit = 0, skipped = 0, invalid = 0;
  double wall_s = 0;
  std::vector<std::string> failures;  // first few "label: reason"
};

// The whole single-process sweep: check, skip what is stored, simulate the rest, store. `limit`
// (when > 0) stops after that many newly stored points, as if killed (tests, smoke runs).
SweepSummary run_sweep(const SweepSpec& spec, SweepStore& store, const config::Catalog& catalog,
                       const RunOptions& options, const std::string& tool_version,
                       std::ostream* progress, std::size_t limit = 0);

// RunResult <-> compact text, for sending results between MPI ranks.
std::string serialize_result(const sim::RunResult& r);
sim::RunResult deserialize_result(const std::string& text);

// One point's outcome <-> the text a worker rank sends the writer rank (`tiersim sweep` under
// mpirun): its index in the space, status, error and result. The scenario is not sent: the
// writer rebuilds it from the point's index (the same overrides give the same scenario and hash).
std::string encode_outcome(const Outcome& o);
Outcome decode_outcome(const std::string& text, const PointSpace& space,
                       const config::Catalog& catalog);

}  // namespace tiersim::sweep
