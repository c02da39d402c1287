#include "study/sweep.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "config/options.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "store/results_store.hpp"
#include "store/schema.hpp"
#include "store/sweep_tables.hpp"
#include "sim/simulate.hpp"

namespace tiersim::sweep {
namespace {

namespace fs = std::filesystem;
using config::YNode;

// Ranges are inclusive of `to`; this slack keeps 0.1-steps from missing the end by rounding.
constexpr double kRangeSlack = 1e-9;
// More values than this in one range is almost certainly a typo (step 0.001 instead of 0.1).
constexpr std::size_t kMaxRangeValues = 100000;

std::string emit_flow(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

// Rounds away binary noise from from + k * step (0.30000000000000004 -> 0.3) so values print and
// hash the same however they were generated.
double tidy(double v) {
  if (v == 0) return 0;
  const double scale = std::pow(10.0, 12 - std::ceil(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

std::vector<double> range_values(const YNode& node) {
  node.check_keys({"from", "to", "step", "factor"});
  const double from = node.require("from", "the first value").as_double(-1e300, 1e300);
  const double to = node.require("to", "the last value").as_double(-1e300, 1e300);
  const auto step = node.get("step");
  const auto factor = node.get("factor");
  if (step && factor) node.fail("give either step (arithmetic range) or factor (geometric), not both");
  if (!step && !factor) node.fail_missing("step", "step: N (arithmetic) or factor: N (geometric)");
  std::vector<double> out;
  if (step) {
    const double s = step->as_double(0, 1e300, true);
    if (to < from) node.fail("`to` must be >= `from`");
    for (std::size_t k = 0;; ++k) {
      const double v = from + double(k) * s;
      if (v > to + kRangeSlack * std::max(1.0, std::fabs(to))) break;
      out.push_back(tidy(v));
      if (out.size() > kMaxRangeValues) step->fail("range has more than 100000 values");
    }
  } else {
    const double f = factor->as_double(1, 1e300, true);
    if (from <= 0) node.fail("a geometric range needs `from` > 0");
    if (to < from) node.fail("`to` must be >= `from`");
    for (double v = from; v <= to * (1 + kRangeSlack); v *= f) {
      out.push_back(tidy(v));
      if (out.size() > kMaxRangeValues) factor->fail("range has more than 100000 values");
    }
  }
  return out;
}

// {split: [gpu, cpu], from: 0, to: 1, step: 0.25} -> {gpu: x, cpu: 1-x}: a placement axis that
// moves a fraction between two tiers.
std::vector<AxisValue> split_values(const YNode& node) {
  node.check_keys({"split", "from", "to", "step"});
  const YNode tiers = node.require("split", "two tiers, e.g. [gpu, cpu]");
  const auto items = tiers.items();
  if (items.size() != 2) tiers.fail("expected two tiers, e.g. [gpu, cpu]");
  const std::vector<std::string> valid = {"gpu", "cpu", "nvme"};
  std::string a = config::to_lower(items[0].as_string()), b = config::to_lower(items[1].as_string());
  for (const auto* t : {&items[0], &items[1]}) {
    const std::string name = config::to_lower(t->as_string());
    if (name != "gpu" && name != "cpu" && name != "nvme")
      t->fail("unknown tier '" + name + "'" + config::did_you_mean(name, valid) + "; valid: gpu, cpu, nvme");
  }
  if (a == b) tiers.fail("the two tiers must differ");
  YAML::Node range;
  for (const char* k : {"from", "to", "step"})
    if (auto v = node.get(k)) range[k] = v->raw();
  if (!node.get("from")) range["from"] = 0;
  if (!node.get("to")) range["to"] = 1;
  std::vector<AxisValue> out;
  const YNode range_node(range, std::make_shared<const std::string>(node.file()), node.path());
  for (double x : range_values(range_node)) {
    if (x < 0 || x > 1 + kRangeSlack) node.fail("split fractions must lie in [0, 1]");
    x = std::min(1.0, x);
    out.push_back({"{" + a + ": " + config::format_number(x) + ", " + b + ": " +
                       config::format_number(tidy(1.0 - x)) + "}",
                   node.line()});
  }
  return out;
}

std::vector<AxisValue> axis_values(const YNode& node) {
  std::vector<AxisValue> out;
  if (node.is_sequence()) {
    for (const auto& item : node.items()) {
      if (item.is_null()) item.fail("expected a value, got nothing");
      out.push_back({emit_flow(item.raw()), item.line()});
    }
    if (out.empty()) node.fail("an axis needs at least one value");
  } else if (node.is_map() && node.get("split")) {
    out = split_values(node);
  } else if (node.is_map() && (node.get("from") || node.get("to"))) {
    for (double v : range_values(node)) out.push_back({config::format_number(v), node.line()});
    if (out.empty()) node.fail("the range is empty");
  } else if (node.is_map()) {
    node.fail("expected a list of values, a range {from, to, step} or {from, to, factor}, or "
              "{split: [gpu, cpu], from, to, step}; to sweep maps, list them: [{gpu: 1}, {cpu: 1}]");
  } else {
    out.push_back({emit_flow(node.raw()), node.line()});  // one value: same as `set`
  }
  return out;
}

std::vector<std::string> all_option_paths() {
  std::vector<std::string> paths;
  for (const auto& o : config::scenario_options()) paths.push_back(o.path);
  return paths;
}

void check_key(const YNode& at, const std::string& key) {
  if (!config::find_options(key).empty() || config::is_section(key)) return;
  at.fail("unknown scenario key '" + key + "'" + config::did_you_mean(key, all_option_paths()) +
          " (keys as in `tiersim schema`)");
}

}  // namespace

std::size_t PointSpace::point_count() const {
  std::size_t n = 1;
  for (const auto& a : axes)
    if (__builtin_mul_overflow(n, a.size(), &n)) return SIZE_MAX;
  return n;
}

void check_point_count(const PointSpace& space, std::size_t limit, const std::string& what) {
  std::size_t n = 1;
  for (const auto& a : space.axes) {
    // Four axes of 65,536 values used to wrap to "0 points" and a finished, empty sweep.
    if (__builtin_mul_overflow(n, a.size(), &n) || n > limit) {
      const int line = a.values.empty() || a.values[0].empty() ? 0 : a.values[0][0].line;
      throw ConfigError(space.file, line, a.keys.empty() ? "" : a.keys.front(),
                        "with this axis (" + std::to_string(a.size()) + " values) the " + what +
                            " has more than " + std::to_string(limit) +
                            " points, the limit for a " + what +
                            " (tiersim schema); split it into smaller " + what + "s");
    }
  }
}

PointSpace parse_point_space(const YNode& root) {
  PointSpace space;
  space.file = root.file();
  const YNode base = root.require("base", "the base scenario file, relative to this file");
  fs::path base_path = base.as_string();
  if (base_path.is_relative()) base_path = fs::path(root.file()).parent_path() / base_path;
  // The error_code form: a name the file system refuses (too long, a bad component) is the same
  // "does not exist" as a missing file, not a filesystem_error escaping as an internal error.
  std::error_code ec;
  if (!fs::exists(base_path, ec))
    base.fail("base scenario '" + base_path.string() + "' does not exist" +
              (ec ? " (" + ec.message() + ")" : ""));
  space.base_path = base_path.lexically_normal().string();
  space.base = std::make_shared<const config::ScenarioSource>(space.base_path);
  if (auto set = root.get("set")) {
    for (const auto& [key, value] : set->entries()) {
      check_key(value, key);
      if (value.is_null()) value.fail("expected a value, got nothing");
      space.fixed.push_back({key, {emit_flow(value.raw()), value.line()}});
      space.fixed_settings.emplace_back(key + "=" + space.fixed.back().second.yaml);
    }
  }
  if (auto grid = root.get("grid")) {
    for (const auto& [key, value] : grid->entries()) {
      check_key(value, key);
      Axis axis;
      axis.keys = {key};
      axis.values = {axis_values(value)};
      space.axes.push_back(std::move(axis));
    }
  }
  if (auto zip = root.get("zip")) {
    for (const auto& group : zip->items()) {
      Axis axis;
      for (const auto& [key, value] : group.entries()) {
        check_key(value, key);
        auto values = axis_values(value);
        if (!axis.values.empty() && values.size() != axis.size())
          value.fail("zipped lists must have the same length: " + std::to_string(values.size()) +
                     " values here, " + std::to_string(axis.size()) + " for '" + axis.keys.front() + "'");
        axis.keys.push_back(key);
        axis.values.push_back(std::move(values));
      }
      if (axis.keys.empty()) group.fail("a zip group needs at least one key");
      space.axes.push_back(std::move(axis));
    }
  }
  // Each axis value read once, for every point that uses it.
  for (auto& a : space.axes) {
    a.settings.resize(a.keys.size());
    for (std::size_t k = 0; k < a.keys.size(); ++k)
      for (const auto& v : a.values[k]) a.settings[k].emplace_back(a.keys[k] + "=" + v.yaml);
  }
  // A value listed twice on one axis (a row twice in a zip group) makes every point with it twice:
  // the same scenario, stored once, counted twice, and a plan's ties among copies of itself.
  for (const auto& a : space.axes) {
    std::unordered_map<std::string, std::size_t> first;  // the row's values -> its first index
    for (std::size_t i = 0; i < a.size(); ++i) {
      std::string row = a.values[0][i].yaml;
      for (std::size_t k = 1; k < a.keys.size(); ++k) row += ", " + a.values[k][i].yaml;
      const auto [at, fresh] = first.emplace(row, i);
      if (!fresh)
        throw ConfigError(root.file(), a.values[0][i].line, a.keys.front(),
                          "the value " + row + " is listed twice on this axis (also value " +
                              std::to_string(at->second + 1) + "); list each once");
    }
  }
  // One key on two axes would make the later silently win.
  std::vector<std::string> seen;
  for (const auto& a : space.axes)
    for (const auto& k : a.keys) {
      if (std::find(seen.begin(), seen.end(), k) != seen.end()) {
        // Named where it appears again (its first value's line).
        const std::size_t i = static_cast<std::size_t>(&k - a.keys.data());
        const int line = a.values[i].empty() ? root.line() : a.values[i].front().line;
        throw ConfigError(root.file(), line, k,
                          "appears on more than one axis (grid and zip, or two zip groups); the "
                          "later would silently win: keep it on one");
      }
      seen.push_back(k);
    }
  return space;
}

SweepSpec parse_sweep_text(const std::string& text, const std::string& file) {
  return parse_sweep(config::parse_yaml_text(text, file), text);
}

SweepSpec parse_sweep(const YNode& root, const std::string& text) {
  if (!root.is_map()) root.fail("expected a sweep file (a map with name, base, grid ...), got " + root.describe());
  root.check_keys({"name", "description", "base", "set", "grid", "zip"});
  SweepSpec spec;
  spec.name = root.require("name", "the sweep name (results are stored under it)").as_string();
  if (auto d = root.get("description")) spec.description = d->as_string();
  spec.text = text;
  spec.space = parse_point_space(root);
  if (spec.space.axes.empty()) root.fail_missing("grid", "at least one axis (grid: or zip:)");
  check_point_count(spec.space, kMaxSweepPoints, "sweep");
  return spec;
}

SweepSpec parse_sweep_file(const std::string& path) {
  return parse_sweep_text(config::read_input_file(path, "sweep file"), path);
}

Point point_at(const PointSpace& space, std::size_t index) {
  Point p;
  p.index = index;
  bool typed = space.fixed_settings.size() == space.fixed.size();
  for (const auto& a : space.axes) typed = typed && a.settings.size() == a.keys.size();
  for (const auto& [key, value] : space.fixed) p.overrides.push_back(key + "=" + value.yaml);
  if (typed) p.settings = space.fixed_settings;
  // Mixed radix, last axis fastest.
  std::vector<std::size_t> digit(space.axes.size());
  std::size_t rest = index;
  for (std::size_t a = space.axes.size(); a-- > 0;) {
    digit[a] = rest % space.axes[a].size();
    rest /= space.axes[a].size();
  }
  for (std::size_t a = 0; a < space.axes.size(); ++a) {
    const Axis& axis = space.axes[a];
    for (std::size_t k = 0; k < axis.keys.size(); ++k) {
      const std::string kv = axis.keys[k] + "=" + axis.values[k][digit[a]].yaml;
      p.overrides.push_back(kv);
      if (typed) p.settings.push_back(axis.settings[k][digit[a]]);
      if (!p.label.empty()) p.label += " ";
      p.label += kv;
    }
  }
  return p;
}

Scenario load_point(const PointSpace& space, const Point& point, const config::Catalog& catalog) {
  config::LoadOptions opts;
  if (point.settings.size() == point.overrides.size())
    opts.settings = point.settings;
  else
    opts.overrides = point.overrides;
  opts.catalog = &catalog;
  // Every point starts from the same base file: read it once, not once per point.
  return space.base ? space.base->load(opts) : config::load_scenario(space.base_path, opts);
}

namespace {

// Calls `f` with each space-separated item of `label`, in order (as `>>` reads them), without
// copying the label: the planner compares the labels of many pairs of points.
// `separators`: where one item ends (white space for the items compared; a label's own items are
// joined by single spaces).
template <typename F>
void for_each_item(std::string_view label, F&& f, std::string_view separators = " \t\n\v\f\r") {
  for (std::size_t at = label.find_first_not_of(separators); at != std::string_view::npos;) {
    const std::size_t end = std::min(label.find_first_of(separators, at), label.size());
    if (!f(label.substr(at, end - at))) return;
    at = label.find_first_not_of(separators, end);
  }
}

// Whether `item` (no white space in it) stands between spaces in `label`.
bool has_item(std::string_view label, std::string_view item) {
  bool found = false;
  for_each_item(
      label,
      [&](std::string_view own) {
        found = own == item;
        return !found;
      },
      " ");
  return found;
}

}  // namespace

std::string label_items_not_in(const std::string& a, const std::string& b) {
  std::string t;
  for_each_item(a, [&](std::string_view item) {
    if (!has_item(b, item)) (t += t.empty() ? "" : " ") += item;
    return true;
  });
  return t;
}

bool differ_in_hardware_only(const std::string& a, const std::string& b) {
  const auto hardware_only = [](std::string_view from, std::string_view other) {
    bool only = true;
    for_each_item(from, [&](std::string_view item) {
      if (has_item(other, item)) return true;
      only = item.starts_with("hardware.") && !item.starts_with("hardware.host.model=");
      return only;
    });
    return only;
  };
  return hardware_only(a, b) && hardware_only(b, a);
}

void check_axis_values(const PointSpace& space, const config::Catalog& catalog) {
  Point fixed;
  for (const auto& [key, value] : space.fixed) fixed.overrides.push_back(key + "=" + value.yaml);
  Scenario base;
  try {
    base = load_point(space, fixed, catalog);
  } catch (const ConfigError& e) {
    // Name the `set` entry when the error is about one of its keys.
    for (const auto& [key, value] : space.fixed)
      if (e.key_path().rfind(key, 0) == 0)
        throw ConfigError(space.file, value.line, "set." + key, e.what());
    throw;
  } catch (const CatalogError& e) {
    throw ConfigError(space.file, 0, "base", std::string("base scenario with `set`: ") + e.what());
  }
  auto file = std::make_shared<const std::string>(space.file);
  // Reads a value into `s` as --set would: an option's value through its row of the option
  // table; a section's map (`hardware.gpu: {model: H200, count: 2}`) key by key, each through
  // its own row, so that a typo inside the map is reported at the sweep file's line too. What
  // is neither is left to the points' loads.
  const auto read_value = [&](const auto& self, const YNode& node, const std::string& path,
                              Scenario& s) -> void {
    const config::Option* opt = config::find_option(path, base.kind);
    if (!opt) {
      const auto& any = config::find_options(path);
      if (!any.empty()) opt = any.front();
    }
    if (opt) {
      config::read_option(node, *opt, s);
      if (opt->resolve) opt->resolve(s, catalog);
      return;
    }
    if (!config::is_section(path) || !node.is_map()) return;
    node.check_keys(config::keys_below(path));
    for (const auto& [k, child] : node.entries()) self(self, child, path + "." + k, s);
  };
  // A zipped axis's values are checked column by column, each key on the scenario the keys
  // before it in that column set: a value may depend on them (a cloud instance must hold the GPUs
  // the same column names, economics.cloud_instance).
  for (const auto& axis : space.axes)
    for (std::size_t i = 0; i < axis.size(); ++i) {
      Scenario s = base;
      for (std::size_t k = 0; k < axis.keys.size(); ++k) {
        const std::string& key = axis.keys[k];
        const AxisValue& v = axis.values[k][i];
        try {
          read_value(read_value, YNode(YAML::Load(v.yaml), file, key, false), key, s);
        } catch (const ConfigError& e) {
          // The value was read on its own (as if from --set): its error's own file and key would
          // repeat the sweep file's; a key below the axis's (a section's) is kept.
          const std::string where =
              e.key_path().empty() || e.key_path() == key ? "" : e.key_path() + ": ";
          throw ConfigError(space.file, v.line, key,
                            "value " + v.yaml + ": " + where + e.message());
        } catch (const CatalogError& e) {
          throw ConfigError(space.file, v.line, key, "value " + v.yaml + ": " + e.what());
        } catch (const YAML::Exception& e) {
          throw ConfigError(space.file, v.line, key, "value " + v.yaml + ": " + e.what());
        }
      }
    }
}

const char* to_string(Status s) {
  switch (s) {
    case Status::kSimulated: return "simulated";
    case Status::kNoFit: return "no-fit";
    case Status::kSkipped: return "skipped";
    case Status::kInvalid: return "invalid";
  }
  return "?";
}

namespace {

// run_points over `count` points, the k-th being index_at(k).
void run_indexed_points(const PointSpace& space, std::size_t count,
                        const std::function<std::size_t(std::size_t)>& index_at,
                        const config::Catalog& catalog, const RunOptions& options,
                        const std::function<void(Outcome&&)>& sink) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min<std::size_t>(
      options.threads > 0 ? std::size_t(options.threads) : hw, std::max<std::size_t>(1, count));
  // Bounded so that a slow writer holds back the workers instead of buffering the whole sweep,
  // but deep enough that they go on while it commits a batch and waits for the disk: at 4 x
  // threads + 64, two workers sat idle 7% of a sweep's time behind each commit's fsync.
  const std::size_t max_queued = 64 * threads + 256;

  std::mutex mu;
  std::condition_variable produced, consumed;
  // Each outcome with the worker that made it.
  std::deque<std::pair<std::size_t, Outcome>> queue;
  // Outcomes the sink is done with, by the worker that made them: that worker frees them. Freed
  // where the sink runs, each of a point's few hundred blocks went back to another thread's
  // malloc arena under its lock, a sixth of the sink thread's time in a sweep.
  std::vector<std::vector<Outcome>> spent(threads);
  std::size_t next = 0, running = threads;
  std::exception_ptr failure;
  auto stopped = [&] { return failure || (options.stop && options.stop->load()); };

  auto worker = [&](std::size_t self) {
    std::vector<Outcome> mine;  // spent outcomes taken back, freed outside the lock
    for (;;) {
      std::size_t i;
      {
        std::lock_guard lock(mu);
        mine.swap(spent[self]);
        if (next >= count || stopped()) break;
        i = index_at(next++);
      }
      mine.clear();
      Outcome out;
      try {
        out.point = point_at(space, i);
        try {
          out.scenario = load_point(space, out.point, catalog);
          if (options.done && options.done(out.scenario->hash)) {
            out.status = Status::kSkipped;
          } else {
            out.result = sim::simulate(*out.scenario);
            out.status = out.result.fits ? Status::kSimulated : Status::kNoFit;
          }
        } catch (const Error& e) {  // ConfigError, CatalogError, ModelError: this point only
          out.status = Status::kInvalid;
          out.error = e.what();
        }
      } catch (...) {
        std::lock_guard lock(mu);
        if (!failure) failure = std::current_exception();
        break;
      }
      std::unique_lock lock(mu);
      consumed.wait(lock, [&] { return queue.size() < max_queued || failure; });
      queue.emplace_back(self, std::move(out));
      produced.notify_one();
    }
    std::lock_guard lock(mu);
    --running;
    produced.notify_one();
  };

  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(worker, t);
  try {
    for (;;) {
      std::deque<std::pair<std::size_t, Outcome>> batch;
      {
        std::unique_lock lock(mu);
        produced.wait(lock, [&] { return !queue.empty() || running == 0; });
        if (queue.empty()) break;
        batch.swap(queue);
        consumed.notify_all();
      }
      for (auto& [from, o] : batch) sink(std::move(o));
      std::lock_guard lock(mu);
      for (auto& [from, o] : batch) spent[from].push_back(std::move(o));
    }
  } catch (...) {
    std::lock_guard lock(mu);
    if (!failure) failure = std::current_exception();
    consumed.notify_all();
  }
  // The sink threw: let the workers drain (they stop taking points) before rethrowing.
  {
    std::unique_lock lock(mu);
    while (running > 0) {
      queue.clear();
      consumed.notify_all();
      produced.wait_for(lock, std::chrono::milliseconds(10));
    }
  }
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

void run_points(const PointSpace& space, const std::vector<std::size_t>& indices,
                const config::Catalog& catalog, const RunOptions& options,
                const std::function<void(Outcome&&)>& sink) {
  run_indexed_points(
      space, indices.size(), [&](std::size_t k) { return indices[k]; }, catalog, options, sink);
}

void run_points(const PointSpace& space, const PointIndices& indices,
                const config::Catalog& catalog, const RunOptions& options,
                const std::function<void(Outcome&&)>& sink) {
  run_indexed_points(
      space, indices.count, [&](std::size_t k) { return indices.at(k); }, catalog, options, sink);
}

Progress::Progress(std::ostream& os, std::string what, std::size_t total, bool tty)
    : line_(os, tty), what_(std::move(what)), total_(total), start_s_(monotonic_s()) {}

std::size_t Progress::done() const { return counts_[0] + counts_[1] + counts_[2] + counts_[3]; }

void Progress::add(Status s) {
  ++counts_[static_cast<std::size_t>(s)];
  line_.update(text(false));
}

void Progress::finish() { line_.finish(text(true)); }

std::string Progress::text(bool final_line) const {
  const double elapsed = monotonic_s() - start_s_;
  const std::size_t n = done();
  const std::size_t worked = n - counts_[2];  // skipped points cost almost nothing
  const double rate = elapsed > 0 ? double(worked) / elapsed : 0;
  // The ETA counts only simulated points: skipped ones (already stored) take no time.
  const std::string eta =
      rate > 0 ? eta_text(n, total_, double(n) / rate) : (n >= total_ ? clock_text(0) : "--:--");
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s: %zu/%zu (%.1f%%) simulated %zu, no-fit %zu, skipped %zu, invalid %zu | %.1f "
                "points/s | %s %s",
                what_.c_str(), n, total_, total_ ? 100.0 * double(n) / double(total_) : 100.0,
                counts_[0], counts_[1], counts_[2], counts_[3], rate,
                final_line ? "elapsed" : "ETA",
                final_line ? clock_text(elapsed).c_str() : eta.c_str());
  return buf;
}

// ---------------------------------------------------------------------------------------------

SweepStore::SweepStore(const std::string& path)
    : results_(std::make_unique<store::ResultsStore>(path)) {
  auto& db = results_->database();
  // WAL + NORMAL: a committed point survives the process being killed (the WAL is in the OS page
  // cache); only a power loss can drop the last commits, which a re-run then recomputes. FULL
  // would fsync every point and dominate short simulations.
  db.exec("PRAGMA synchronous=NORMAL");
  // Each point is stored in a savepoint inside its batch (ResultsStore::save), whose statement
  // journal keeps every page the point changes; past 64 KiB SQLite spills it to a temporary file,
  // which a point's rows reached, so every point wrote that file page by page. In memory: temporary
  // files (that journal, sorts) hold nothing that must outlive the connection.
  db.exec("PRAGMA temp_store=MEMORY");
  store::ensure_schema(db, store::SchemaPart::kSweeps);
}

SweepStore::~SweepStore() {
  try {
    flush();
  } catch (...) {
    // The batch is lost, as if the process had been killed; a re-run recomputes it.
  }
}

void SweepStore::flush() {
  if (!batch_) return;
  batch_->commit();
  batch_.reset();
  batch_points_ = 0;
}

void SweepStore::begin_sweep(const SweepSpec& spec, std::size_t points, const std::string& tool_version) {
  auto& db = results_->database();
  store::Transaction tx(db);
  // A sweep of this name stored from another definition (an edited grid, set or base path): its
  // points would silently mix with the new ones in reports and be counted as done. Refused; the
  // message says how to keep both or start over.
  if (const auto old = store::stored_sweep_definition(db, spec.name); old && *old != spec.text) {
    const std::int64_t stored = store::sweep_run_count(db, spec.name);
    if (stored > 0)
      throw ConfigError(spec.space.file, 0, "name",
                        "the results database already holds " + std::to_string(stored) +
                            " points of a sweep named '" + spec.name +
                            "' that was run from a different definition (the file was edited); "
                            "re-running it would mix old and new points. Not run: give the "
                            "edited sweep a new name, or store it in another --db");
  }
  // Failures are re-evaluated on every run (invalid points are never skipped): start_sweep clears
  // them.
  store::start_sweep(db,
                     {spec.name, fs::path(spec.space.file).filename().string(), spec.description,
                      spec.text},
                     static_cast<std::int64_t>(points), tool_version);
  tx.commit();
}

void SweepStore::finish_sweep(const std::string& sweep) {
  flush();
  store::finish_sweep(results_->database(), sweep);
}

std::unordered_set<std::string> SweepStore::done_hashes(const std::string& sweep) const {
  return store::sweep_run_hashes(results_->database(), sweep);
}

void SweepStore::save(const Outcome& o, const std::string& sweep, const std::string& tool_version) {
  if (o.status == Status::kSkipped) return;
  if (!batch_) {
    batch_ = std::make_unique<store::Transaction>(results_->database());
    batch_started_s_ = monotonic_s();
  }
  save_one(o, sweep, tool_version);
  if (++batch_points_ >= kBatchPoints || monotonic_s() - batch_started_s_ >= kBatchSeconds) flush();
}

void SweepStore::save_one(const Outcome& o, const std::string& sweep,
                          const std::string& tool_version) {
  if (o.status == Status::kInvalid) {
    store::record_sweep_failure(results_->database(), sweep, o.point.label,
                                o.scenario ? o.scenario->hash : std::string(), o.error);
    return;
  }
  // The point's axis values name the run (runs.variant): the points of a sweep or a plan share
  // their base scenario's name, and a report labels each by what varies.
  results_->save(*o.scenario, o.result, tool_version, sweep, store::OnDuplicate::kSkip,
                 o.point.label);
}

std::size_t SweepStore::run_count(const std::string& sweep) const {
  return static_cast<std::size_t>(store::sweep_run_count(results_->database(), sweep));
}

std::size_t SweepStore::failure_count(const std::string& sweep) const {
  return static_cast<std::size_t>(store::sweep_failure_count(results_->database(), sweep));
}

SweepSummary run_sweep(const SweepSpec& spec, SweepStore& store, const config::Catalog& catalog,
                       const RunOptions& options, const std::string& tool_version,
                       std::ostream* progress, std::size_t limit) {
  const double t0 = monotonic_s();
  check_axis_values(spec.space, catalog);
  const std::size_t n = spec.space.point_count();
  store.begin_sweep(spec, n, tool_version);
  const auto done = store.done_hashes(spec.name);

  std::atomic<bool> stop{false};
  RunOptions opts = options;
  opts.stop = &stop;
  opts.done = [&done](const std::string& h) { return done.count(h) > 0; };
  // The indices are generated as the workers take them: a 1e9-point sweep used to allocate
  // 8 GB of them before the first simulation.
  const PointIndices indices{0, 1, n};

  SweepSummary sum;
  sum.points = n;
  std::optional<Progress> bar;
  if (progress) bar.emplace(*progress, "sweep " + spec.name, n, options.progress_tty);
  std::size_t stored = 0;
  run_points(spec.space, indices, catalog, opts, [&](Outcome&& o) {
    if (stop.load()) return;  // stopping: drop what is in flight, as a kill would
    if (options.stop && options.stop->load()) {
      stop = true;
      return;
    }
    store.save(o, spec.name, tool_version);
    switch (o.status) {
      case Status::kSimulated: ++sum.simulated; break;
      case Status::kNoFit: ++sum.no_fit; break;
      case Status::kSkipped: ++sum.skipped; break;
      case Status::kInvalid:
        ++sum.invalid;
        if (sum.failures.size() < 5) sum.failures.push_back(o.point.label + ": " + o.error);
        break;
    }
    if (bar) bar->add(o.status);
    if (o.status != Status::kSkipped && ++stored == limit) stop = true;
  });
  store.flush();
  if (bar) bar->finish();
  if (!stop.load()) store.finish_sweep(spec.name);
  sum.wall_s = monotonic_s() - t0;
  return sum;
}

std::string serialize_result(const sim::RunResult& r) {
  nlohmann::json j;
  j["w"] = r.workload;
  j["f"] = r.fits;
  j["s"] = r.shortfall;
  j["b"] = r.bottleneck;
  j["e"] = r.events;
  auto& ms = j["m"] = nlohmann::json::array();
  for (const auto& m : r.metrics) ms.push_back({m.name, m.value, m.unit});
  auto& mem = j["t"] = nlohmann::json::array();
  for (const auto& t : r.memory) {
    nlohmann::json items = nlohmann::json::array();
    for (const auto& i : t.items) items.push_back({i.what, i.bytes});
    mem.push_back({t.tier, t.required_bytes, t.capacity_bytes, items});
  }
  auto& us = j["u"] = nlohmann::json::array();
  for (const auto& u : r.utilization) us.push_back({u.name, u.unit, u.busy_s, u.utilization});
  return j.dump();
}

sim::RunResult deserialize_result(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  sim::RunResult r;
  r.workload = j.at("w").get<std::string>();
  r.fits = j.at("f").get<bool>();
  r.shortfall = j.at("s").get<std::string>();
  r.bottleneck = j.at("b").get<std::string>();
  r.events = j.at("e").get<std::uint64_t>();
  for (const auto& m : j.at("m")) r.metrics.push_back({m[0].get<std::string>(), m[1].get<double>(), m[2].get<std::string>()});
  for (const auto& t : j.at("t")) {
    TierMemory tm;
    tm.tier = t[0].get<std::string>();
    tm.required_bytes = t[1].get<double>();
    tm.capacity_bytes = t[2].get<double>();
    for (const auto& i : t[3]) tm.items.push_back({i[0].get<std::string>(), i[1].get<double>()});
    r.memory.push_back(std::move(tm));
  }
  for (const auto& u : j.at("u"))
    r.utilization.push_back(sim::usage_from_name(u[0].get<std::string>(), u[1].get<std::string>(),
                                                 u[2].get<double>(), u[3].get<double>()));
  return r;
}

namespace {

// The outcomes whose message carries a run (and whose scenario the writer rebuilds).
bool carries_result(Status s) {
  return s == Status::kSimulated || s == Status::kNoFit;
}

}  // namespace

std::string encode_outcome(const Outcome& o) {
  nlohmann::json j;
  j["i"] = o.point.index;
  j["s"] = static_cast<int>(o.status);
  j["e"] = o.error;
  if (carries_result(o.status)) j["r"] = serialize_result(o.result);
  return j.dump();
}

Outcome decode_outcome(const std::string& text, const PointSpace& space,
                       const config::Catalog& catalog) {
  const auto j = nlohmann::json::parse(text);
  Outcome o;
  o.point = point_at(space, j.at("i").get<std::size_t>());
  o.status = static_cast<Status>(j.at("s").get<int>());
  o.error = j.at("e").get<std::string>();
  if (carries_result(o.status)) {
    // Rebuilt here rather than shipped: the same overrides give the same hash.
    o.scenario = load_point(space, o.point, catalog);
    o.result = deserialize_result(j.at("r").get<std::string>());
  }
  return o;
}

}  // namespace tiersim::sweep
