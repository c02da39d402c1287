#pragma once
// One-at-a-time sensitivity (tornado tables) and break-even solving over the uncertain inputs of
// a configuration: prices, electricity, utilisation, bandwidths and compute rates. Both change a
// scenario only through the loader's overrides (config::LoadOptions::overrides, "key=value", as
// `--set` and sweep axes do), so every value is range-checked by the option table and every
// derived quantity (capex, power, timing) is recomputed by the simulator.
#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/compare_file.hpp"
#include "config/options.hpp"
#include "config/scenario_loader.hpp"
#include "sim/result.hpp"

namespace tiersim::sensitivity {

// --- shared by the studies that vary inputs (sensitivity, break-even, whatif) -----------------

// The key's numeric (number or integer) option for this workload kind, or nullptr.
const config::Option* numeric_option(const std::string& key, WorkloadKind kind);

// Throws ConfigError naming `where` (the option) unless `key` is a numeric scenario key for some
// workload kind; the message suggests a near match.
void check_numeric_key(const std::string& key, const std::string& where);

// The key's value in `s`, in the key's unit; nullopt when it is unset or not a scalar.
std::optional<double> value_of(const config::Option& o, Scenario& s);

// One simulation of a variant with `extra` settings ("key=value") applied last.
struct Evaluation {
  std::optional<double> metric;  // nullopt: it does not fit, failed, or lacks the metric
  std::string unit;              // of the metric
  std::string error;             // why there is no metric
  bool no_fit = false;           // it does not fit its memory (else the error is an invalid value)
};

// Loads the variant with `extra` and simulates it. Errors of the point (an invalid value, a model
// error, a configuration that does not fit) are returned in `error`; Interrupted (from `stop`)
// propagates.
Evaluation evaluate(const config::VariantSource& v, const std::vector<std::string>& extra,
                    const std::string& metric, const std::atomic<bool>* stop = nullptr);

// One input to vary: a numeric scenario key and the factors of its base value at the two ends.
struct Input {
  std::string key;   // scenario key path, as in `tiersim schema`
  std::string what;  // short description for tables ("GPU price")
  double low_factor = 0.8;
  double high_factor = 1.2;
};

// The default inputs, each varied by +-`range` (0.2 = +-20 %): component prices, electricity
// price, utilisation (duty cycle), amortisation period, PUE, GPU compute rate, host link rate,
// drive read rate, host DRAM bandwidth and CPU rates. Keys a configuration does not use (no drive,
// another workload kind) are listed as skipped for it.
std::vector<Input> default_inputs(double range);

// "KEY" (varied by +-range) or "KEY=LOW:HIGH" (factors of the base value, e.g. 0.5:1.5). Throws
// ConfigError naming `where` (the option) for a key that is not a numeric scenario key.
// "LOW:HIGH", the text after KEY= in --input and --vary, as two factors of a value; a
// ConfigError naming the key, what the factors scale and an example otherwise.
struct FactorRangeContext {
  std::string key;         // the scenario key
  std::string text;        // the whole argument, for the message
  std::string where;       // the option, e.g. "--input"
  std::string factors_of;  // "the base value", "the value as given"
  std::string example;     // "0.5:1.5"
};
std::pair<double, double> parse_factor_range(const std::string& range_text,
                                             const FactorRangeContext& context);

Input parse_input(const std::string& text, double range, const std::string& where);

// One input's swing in one configuration.
struct Swing {
  Input input;
  double base_value = 0, low_value = 0, high_value = 0;  // in the key's unit
  std::string unit;                                      // of the key
  bool clamped = false;  // an end was limited to the key's valid range (e.g. duty_cycle <= 1)
  std::optional<double> metric_low, metric_high;  // nullopt: that end failed
  std::string error;                              // why an end failed
  std::string skipped;                            // why the input was not varied ("" = varied)
  // |metric_high - metric_low|; 0 when an end is missing.
  double swing() const;
};

struct Tornado {
  std::string variant;  // the variant's name (or its scenario's)
  std::string metric, unit;
  double base_metric = 0;
  std::vector<Swing> rows;  // varied inputs by decreasing swing, then the skipped ones
  std::string error;        // the configuration itself could not be simulated or lacks the metric
};

struct Options {
  std::string metric = std::string(sim::metric::kUsdPerMillionTokens.name);
  std::vector<Input> inputs;  // empty = default_inputs(0.2)
  config::LoadOptions load;   // command-line --set, data folder, catalog
  // Set by another thread (the Python module's Ctrl-C): the simulations not started are skipped
  // and run_tornado throws Interrupted.
  const std::atomic<bool>* stop = nullptr;
};

// The tornado of every variant (simulations of one variant run on up to `threads` threads; 0 =
// every hardware thread).
Tornado run_tornado(const config::VariantSpec& variant, const Options& options, int threads = 0);

// --- break-even -------------------------------------------------------------------------------

struct BreakEvenOptions {
  std::string key;                  // the input to solve for
  std::optional<double> low, high;  // search range; default: base value / 4 .. base value x 4
  std::string metric = std::string(sim::metric::kUsdPerMillionTokens.name);
  config::LoadOptions load;
  int scan_points = 9;               // evenly spaced samples before refining a sign change
  double relative_tolerance = 1e-6;  // of the range width
  // Set by another thread: break_even throws Interrupted before its next sample.
  const std::atomic<bool>* stop = nullptr;
};

struct BreakEvenSample {
  double value = 0;
  std::optional<double> metric_a, metric_b;  // nullopt: that configuration failed there
  std::string error;
  bool no_fit = false;  // a configuration does not fit there (else any failure is an invalid value)
};

struct BreakEven {
  std::string a, b;  // variant names
  std::string key, key_unit, metric, unit;
  bool a_uses_key = true, b_uses_key = true;  // false: the key does not apply (held fixed)
  double base_a = 0, base_b = 0;              // the key's value in each configuration as given
  double low = 0, high = 0;                   // the range searched
  bool integer = false;                       // the key takes whole numbers
  // The part of the range searched: where both configurations fit. The range is scanned first;
  // where a configuration does not fit at some samples, the stretch of samples between them that
  // ran (the one holding the value as given, else the longest) is widened by bisection to where
  // they stop fitting, and scanned again. A value a configuration rejects (a batch its data-
  // parallel ranks cannot divide) is a failed sample, not an end. nullopt: no sample ran.
  std::optional<double> runs_low, runs_high;
  // Why the searched part stops short of the range's low / high end ("" = it reaches it): the
  // failure just outside it.
  std::string stops_low, stops_high;
  std::vector<BreakEvenSample> failed;  // samples of the first scan where a configuration failed
  // Other parts of the range where both ran in the first scan, not searched (from, to).
  std::vector<std::pair<double, double>> other_runs;
  std::vector<BreakEvenSample> scan;          // the evenly spaced samples, low to high
  std::size_t crossings = 0;                  // sign changes of (a - b) seen in the scan
  // a and b were equal at every sample where both ran (at least two): no tie value is given.
  bool equal_everywhere = false;
  std::optional<double> tie;                  // the first value (from low) where a and b tie
  std::optional<double> tie_metric;           // the metric there
  // For integer keys: the tie lies between these two whole numbers (a and b swap order).
  std::optional<double> tie_below, tie_above;
  // No tie in the part searched: where the straight line through its outermost samples of
  // (a - b) crosses zero (nullopt when the difference is constant), and the key's valid range, so
  // the caller can say whether any valid value could tie them. Never across values where a
  // configuration fails: when the line crosses beyond an end of the part searched that a failure
  // bounds, extrapolated_tie is nullopt and `extrapolation_blocked` names that end's failure.
  std::optional<double> extrapolated_tie;
  std::string extrapolation_blocked;
  double valid_min = 0, valid_max = 0;
  int simulations = 0;
};

// Where `a` and `b` tie on the metric as `options.key` varies (applied to both configurations
// where it applies). Throws ConfigError for a key that is not a numeric scenario key or applies
// to neither, and ModelError/ConfigError when an end of the range cannot be simulated.
BreakEven break_even(const config::VariantSpec& a, const config::VariantSpec& b,
                     const BreakEvenOptions& options);

// Throws ConfigError naming `where` unless `metric` is a declared output metric (sim/metrics.hpp).
void check_metric_name(const std::string& metric, const std::string& where);

// "economics.prices.gpu_usd=8500": the override that sets `key` to `value` (whole numbers for
// integer keys).
std::string override_text(const std::string& key, double value, bool integer);

}  // namespace tiersim::sensitivity
