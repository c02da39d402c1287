#pragma once
// "What would it take": the nearest assumptions under which one configuration beats another on a
// metric by a given ratio, searched over several inputs at once (prices, bandwidths, counts,
// batch, lengths, software-stack settings), or the best ratio the stated ranges allow when no
// point reaches it. Used by `tiersim whatif`; the study function and its JSON writer are the
// interface other front ends (the Python module) call.
//
// A numeric input is a scenario key varied by a factor of each configuration's value as given
// (so a shared assumption, a GPU price, moves both configurations alike, and values that differ
// between them keep their relation); an input applies to both configurations or to one. A choice
// input (policy.stack) is tried value by value: the numeric search runs once per combination of
// the choice inputs' values, and a changed choice adds 1 to the distance. A point
// counts only where both configurations fit and simulate; the simulator recomputes everything
// derived (capex, power, timing) at each point, through config::VariantSource settings (the
// variants are read once).
//
// Distance: each input's factor range is mapped to [0, 1] on a log scale, u = ln(f / low) /
// ln(high / low); the distance of a point from the configurations as given is the Euclidean norm
// of u - u(as given). Moving one input across its whole range costs 1, so the stated ranges
// weigh the inputs: a tight range says "this input is hard to move".
//
// Search (bounded by Options::max_points): the as-given point, a scan of each input alone over
// its range (whose trend, feasible part and single-input answers are reported), a compass search
// that raises the ratio from the best scanned point (and from the corner the scans favour) until
// it reaches the target, then the nearest point: bisection along the ray from the as-given point,
// refined by linearising the ratio at the boundary (the Hasofer-Lind iteration of structural
// reliability, which finds the point of a limit surface nearest the origin) until the distance
// stops falling. When the target is not reached, every input is moved alone from the best point
// to both ends and the middle of its range, so a best point that a single input could still
// improve is not reported as the best, and inputs whose value as given does as well there are put
// back. A search over a simulator, not a proof: the output says what was checked.
#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/compare_file.hpp"
#include "config/scenario_loader.hpp"

namespace tiersim::whatif {

// Which configurations an input changes.
enum class Scope { kBoth, kA, kB };

struct Input {
  std::string key;  // numeric or choice scenario key (tiersim schema)
  Scope scope = Scope::kBoth;
  double low_factor = 0.25;  // numeric: factors of each configuration's value as given
  double high_factor = 4;
  std::string what;  // short description for tables
  // A choice key (the software stack, the I/O path): the values tried, the value as given
  // included; empty for a numeric key. Each value is searched in turn (the numeric inputs within
  // each), and a changed choice adds 1 to the distance, as moving a numeric input across its
  // whole range does.
  std::vector<std::string> choices;
};

// The inputs searched when none are given: component prices, the electricity price, GPU, PCIe,
// NVMe and DRAM rates, the drive count, the batch and the prompt and generated lengths, each
// from a quarter to four times its value as given (the drive count 1 to 8 times), in both
// configurations; and B's software stack (policy.stack), each of its values.
std::vector<Input> default_inputs();

// "KEY" (the default range: that of default_inputs() for its keys, else 0.25:4) or
// "KEY=LOW:HIGH" (factors of the value as given); for a choice key, "KEY" (every value) or
// "KEY=V1,V2" (these and the value as given). Throws ConfigError naming `where` (the option) for
// a key that is neither a numeric nor a choice scenario key, a malformed range or an unknown
// value.
Input parse_input(const std::string& text, Scope scope, const std::string& where);

// "KEY" for both configurations, "a:KEY" / "b:KEY" for one.
std::string input_label(const Input& in);

struct Progress {
  std::string phase;  // "scan", "raise the ratio", "nearest point", "check the best point"
  int points = 0;     // evaluated so far
  int max_points = 0;
  double best_ratio = 0;  // best ratio reached so far with both fitting (0: none yet)
};

struct Options {
  std::string metric = "return_per_dollar";
  bool higher_is_better = true;  // the metric's sense (plan::known_sense for the common ones)
  double ratio = 1;              // wanted: A better than B by at least this factor
  std::vector<Input> inputs;     // empty = default_inputs()
  config::LoadOptions load;      // command-line --set, data folder, catalog
  int scan_points = 7;           // per input alone, evenly spaced on the log scale, ends included
  int max_points = 3000;  // points evaluated in all (each simulates A and B unless cached),
                         // shared evenly by the combinations of the choice inputs
  int threads = 0;               // simulations of one batch in parallel; 0 = every hardware thread
  const std::atomic<bool>* stop = nullptr;  // set by another thread (Ctrl-C): the search stops
  std::function<void(const Progress&)> on_progress;  // after each batch of points
};

// One point of the search: a factor per input (1 = as given; inputs not varied stay 1).
struct Point {
  std::vector<double> factors;
  std::vector<std::string> choices;  // per input: a choice key's value ("" = as given, numeric)
  std::optional<double> metric_a, metric_b;  // nullopt: that configuration failed there
  std::optional<double> ratio;               // A's advantage over B; nullopt unless both ran
  std::string error;                         // why it has no ratio
  double distance = 0;                       // from the as-given point (see the header comment)
  bool meets = false;                        // ratio >= the target
};

struct ScanSample {
  double factor = 1;
  std::optional<double> ratio;
  std::string error;
};

struct InputReport {
  Input input;
  std::string unit;       // of the key
  bool integer = false;   // whole numbers (the applied value is rounded)
  bool used_a = false, used_b = false;  // the key applies to (and is set in) that configuration
  double value_a = 0, value_b = 0;      // as given, in the key's unit
  std::string text_a, text_b;           // a choice key's value as given
  bool clamped = false;   // the range was narrowed to keep every value inside the key's range
  std::string skipped;    // why the input is not varied ("" = varied)
  std::vector<ScanSample> scan;  // the input alone, low to high factor
  // How the ratio moves with this input alone over its fitting samples: "rises", "falls",
  // "flat", "rises then falls", ... ("" when fewer than two samples fit).
  std::string trend;
  std::optional<double> fits_low, fits_high;  // factors of the outermost fitting samples
  bool gaps = false;  // a sample that does not fit lies between two that do
  // The nearest factor at which this input alone reaches the target (refined by bisection).
  std::optional<double> alone;
};

// The search over the numeric inputs with one value of each choice input.
struct ChoiceOutcome {
  std::vector<std::string> values;  // per choice input, in the order of Result::inputs
  bool found = false;
  double distance = 0;              // of its nearest point reaching the target (found)
  std::optional<double> as_given_ratio;  // with the numeric inputs as given
  std::optional<double> best_ratio;  // the highest ratio reached with both fitting
  std::string error;                 // why it could not be searched
  int points = 0;
};

struct Result {
  std::string a, b;  // the configurations' names
  std::string metric, unit;
  bool higher_is_better = true;
  double target = 1;
  std::vector<InputReport> inputs;  // in the order given
  Point as_given;
  bool found = false;  // a point with both fitting and ratio >= target
  Point nearest;       // found: the nearest such point
  Point best;          // the highest ratio reached with both fitting (as_given when none fit)
  std::vector<std::string> at_bound;  // inputs `best` moved to an end of their range (labels)
  // Not found: checks made at the best point. `best_single_checked`: every varied input moved
  // alone from it to both ends and the middle of its range gives no higher ratio.
  bool best_single_checked = false;
  // One entry per combination of the choice inputs' values (none without choice inputs); the
  // per-input scans above are those of the values as given.
  std::vector<ChoiceOutcome> choice_outcomes;
  bool budget_reached = false;  // the search stopped at Options::max_points
  bool interrupted = false;     // stopped by Options::stop; the result holds what was found
  int points = 0, simulations = 0;
  double wall_s = 0;
};

// Searches for the nearest assumptions under which `a` beats `b` by `options.ratio` on
// `options.metric`. Throws ConfigError for an input that is not a numeric scenario key, applies
// to neither configuration, or a ratio <= 0; a configuration that cannot be loaded as given
// throws as its load does.
Result solve(const config::VariantSpec& a, const config::VariantSpec& b, const Options& options);

// The distance rule and the search, in words (printed under the answer).
std::string method_text(const Result& r, const Options& options);

// The result as JSON (the `tiersim whatif --json` object).
nlohmann::json to_json(const Result& r);

// The settings ("key=value") that put configuration `a` (which_a) or `b` at `p`: what `tiersim
// run --set` takes to reproduce the point.
std::vector<std::string> point_settings(const Result& r, const Point& p, bool which_a);

}  // namespace tiersim::whatif
