#include "study/sensitivity.hpp"
#include "study/metric_names.hpp"

#include <algorithm>
#include <tuple>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

#include "config/options.hpp"
#include "model/errors.hpp"
#include "sim/metrics.hpp"
#include "sim/simulate.hpp"
#include "study/parallel.hpp"
#include "study/sweep.hpp"

namespace tiersim::sensitivity {
namespace {

std::string unit_of(const config::Option& o) {
  return o.unit;
}

}  // namespace

const config::Option* numeric_option(const std::string& key, WorkloadKind kind) {
  const config::Option* o = config::find_option(key, kind);
  if (!o || (o->type != config::ValueType::kNumber && o->type != config::ValueType::kInt))
    return nullptr;
  return o;
}

void check_numeric_key(const std::string& key, const std::string& where) {
  const auto& opts = config::find_options(key);
  const bool numeric = std::any_of(opts.begin(), opts.end(), [](const config::Option* o) {
    return o->type == config::ValueType::kNumber || o->type == config::ValueType::kInt;
  });
  if (numeric) return;
  std::vector<std::string> all;
  for (const auto& o : config::scenario_options())
    if (o.type == config::ValueType::kNumber || o.type == config::ValueType::kInt)
      all.push_back(o.path);
  throw ConfigError(where, 0, key,
                    (opts.empty() ? "unknown scenario key" : "not a numeric scenario key") +
                        config::did_you_mean(key, all) + " (numeric keys as in `tiersim schema`)");
}

std::optional<double> value_of(const config::Option& o, Scenario& s) {
  if (config::option_unset(o, s)) return std::nullopt;
  const YAML::Node n = config::option_yaml(o, s);
  if (!n.IsScalar()) return std::nullopt;
  try {
    return std::stod(n.Scalar());
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The variant is read once (config::VariantSource): each evaluation sets its keys on the typed
// values.
Evaluation evaluate(const config::VariantSource& v, const std::vector<std::string>& extra,
                    const std::string& metric, const std::atomic<bool>* stop) {
  Evaluation e;
  try {
    const Scenario s = v.load(extra);
    sim::SimOptions so;
    so.stop = stop;
    const sim::RunResult r = sim::simulate(s, so);
    if (!r.fits) {
      e.error = "does not fit: " + r.shortfall;
      e.no_fit = true;
      return e;
    }
    e.metric = r.find(metric);
    if (!e.metric) e.error = "no metric " + metric;
    for (const auto& m : r.metrics)
      if (m.name == metric) e.unit = m.unit;
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& err) {
    e.error = err.what();
  }
  return e;
}

std::vector<Input> default_inputs(double range) {
  const double lo = 1 - range, hi = 1 + range;
  // The inputs a buyer cannot pin down from a datasheet: street prices move (DRAM and NAND
  // contract prices swing by tens of percent a quarter), electricity tariffs differ by site,
  // utilisation and achievable rates depend on the software stack.
  return {
      {"economics.prices.gpu_usd", "GPU price", lo, hi},
      {"economics.prices.platform_usd", "server (platform) price", lo, hi},
      {"economics.prices.dram_usd_per_gb", "DRAM price per GB", lo, hi},
      {"economics.prices.drive_usd", "NVMe drive price", lo, hi},
      {"economics.usd_per_kwh", "electricity price", lo, hi},
      {"economics.duty_cycle", "utilisation (duty cycle)", lo, hi},
      {"economics.amortization_years", "amortisation period", lo, hi},
      {"economics.pue", "PUE", lo, hi},
      {"hardware.gpu.fp16_tflops", "GPU achievable FP16 rate", lo, hi},
      {"hardware.gpu.hbm_gbps", "GPU memory bandwidth", lo, hi},
      {"hardware.gpu.pcie_h2d_gbps", "PCIe host-to-GPU rate", lo, hi},
      {"hardware.nvme.read_gbps", "NVMe read bandwidth per drive", lo, hi},
      {"hardware.host.dram_gbps", "host DRAM bandwidth", lo, hi},
      {"hardware.host.cpu_fp32_gflops", "CPU FP32 rate (host attention)", lo, hi},
      {"hardware.host.cpu_fp16_gflops", "CPU FP16 rate", lo, hi},
  };
}

std::pair<double, double> parse_factor_range(const std::string& range_text,
                                             const FactorRangeContext& context) {
  const auto colon = range_text.find(':');
  try {
    std::size_t used1 = 0, used2 = 0;
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    const double low = std::stod(range_text.substr(0, colon), &used1);
    const double high = std::stod(range_text.substr(colon + 1), &used2);
    if (used1 != colon || used2 != range_text.size() - colon - 1)
      throw std::invalid_argument("trailing");
    return {low, high};
  } catch (const std::exception&) {
    throw ConfigError(context.where, 0, context.key,
                      "expected KEY=LOW:HIGH with factors of " + context.factors_of + ", e.g. " +
                          context.key + "=" + context.example + ", got '" + context.text + "'");
  }
}

Input parse_input(const std::string& text, double range, const std::string& where) {
  Input in;
  const auto eq = text.find('=');
  in.key = text.substr(0, eq);
  check_numeric_key(in.key, where);
  for (const auto& d : default_inputs(range))
    if (d.key == in.key) in.what = d.what;
  if (in.what.empty()) in.what = in.key;
  in.low_factor = 1 - range;
  in.high_factor = 1 + range;
  if (eq != std::string::npos) {
    const std::string f = text.substr(eq + 1);
    std::tie(in.low_factor, in.high_factor) =
        parse_factor_range(f, {in.key, text, where, "the base value", "0.5:1.5"});
    if (!(in.low_factor >= 0 && in.low_factor <= in.high_factor && std::isfinite(in.high_factor)))
      throw ConfigError(where, 0, in.key, "need 0 <= LOW <= HIGH, both finite, got '" + f + "'");
  }
  return in;
}

void check_metric_name(const std::string& metric, const std::string& where) {
  const std::string problem = study::unknown_metric_text(metric);
  if (!problem.empty()) throw ConfigError(where, 0, metric, problem);
}

double Swing::swing() const {
  if (!metric_low || !metric_high) return 0;
  return std::fabs(*metric_high - *metric_low);
}

std::string override_text(const std::string& key, double value, bool integer) {
  return key + "=" + (integer ? std::to_string(std::llround(value)) : config::format_number(value));
}

Tornado run_tornado(const config::VariantSpec& variant, const Options& options, int threads) {
  Tornado t;
  t.metric = options.metric;
  t.variant = variant.name;
  const std::vector<Input> inputs = options.inputs.empty() ? default_inputs(0.2) : options.inputs;
  Scenario base;
  const config::VariantSource source(variant, options.load);
  if (options.stop && *options.stop) throw Interrupted("sensitivity interrupted");
  try {
    base = source.load();
    if (t.variant.empty()) t.variant = base.name;
    sim::SimOptions sim_options;
    sim_options.stop = options.stop;  // throws Interrupted, which is no ModelError
    const sim::RunResult r = sim::simulate(base, sim_options);
    if (!r.fits) {
      t.error = "does not fit: " + r.shortfall;
      return t;
    }
    const auto m = r.find(options.metric);
    if (!m) {
      t.error = "has no metric '" + options.metric + "'";
      return t;
    }
    t.base_metric = *m;
    for (const auto& x : r.metrics)
      if (x.name == options.metric) t.unit = x.unit;
  } catch (const ModelError& e) {
    t.error = e.what();
    return t;
  }

  t.rows.resize(inputs.size());
  std::vector<std::pair<std::size_t, bool>> jobs;  // (row, high end)
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Swing& sw = t.rows[i];
    sw.input = inputs[i];
    const config::Option* o = numeric_option(sw.input.key, base.kind);
    if (!o) {
      sw.skipped = "does not apply to this workload";
      continue;
    }
    sw.unit = unit_of(*o);
    const auto v = value_of(*o, base);
    if (!v || *v == 0) {
      sw.skipped = "not used by this configuration (value 0 or unset)";
      continue;
    }
    sw.base_value = *v;
    // Each end stays inside the key's valid range: a duty cycle of 1 cannot grow by 20 %.
    auto clamp = [&](double x) {
      double c = std::clamp(x, o->min, o->max);
      if (o->type == config::ValueType::kInt) c = std::round(c);
      if (c != x) sw.clamped = true;
      return c;
    };
    sw.low_value = clamp(*v * sw.input.low_factor);
    sw.high_value = clamp(*v * sw.input.high_factor);
    if (o->min_exclusive && sw.low_value <= o->min) {
      sw.skipped = "the low end would leave the key's valid range";
      continue;
    }
    jobs.push_back({i, false});
    jobs.push_back({i, true});
  }
  study::parallel_for(jobs.size(), threads, [&](std::size_t j) {
    Swing& sw = t.rows[jobs[j].first];
    const bool high = jobs[j].second;
    const bool integer =
        config::find_option(sw.input.key, base.kind)->type == config::ValueType::kInt;
    if (options.stop && *options.stop) return;  // thrown below, once every thread has stopped
    const Evaluation e =
        evaluate(source, {override_text(sw.input.key, high ? sw.high_value : sw.low_value, integer)},
                 options.metric, options.stop);
    (high ? sw.metric_high : sw.metric_low) = e.metric;
    if (!e.error.empty()) sw.error = (high ? "high end: " : "low end: ") + e.error;
  });
  if (options.stop && *options.stop) throw Interrupted("sensitivity interrupted");
  std::stable_sort(t.rows.begin(), t.rows.end(), [](const Swing& a, const Swing& b) {
    if (a.skipped.empty() != b.skipped.empty()) return a.skipped.empty();
    return a.swing() > b.swing();
  });
  return t;
}

BreakEven break_even(const config::VariantSpec& a, const config::VariantSpec& b,
                     const BreakEvenOptions& opt) {
  check_numeric_key(opt.key, "--vary");
  BreakEven out;
  out.key = opt.key;
  out.metric = opt.metric;
  const config::VariantSource source_a(a, opt.load), source_b(b, opt.load);
  Scenario sa = source_a.load(), sb = source_b.load();
  out.a = a.name.empty() ? sa.name : a.name;
  out.b = b.name.empty() ? sb.name : b.name;
  const config::Option* oa = numeric_option(opt.key, sa.kind);
  const config::Option* ob = numeric_option(opt.key, sb.kind);
  std::optional<double> va, vb;
  if (oa) va = value_of(*oa, sa);
  if (ob) vb = value_of(*ob, sb);
  // A key a configuration does not use (a drive price without drives) is held fixed there.
  out.a_uses_key = va && *va != 0;
  out.b_uses_key = vb && *vb != 0;
  if (!out.a_uses_key && !out.b_uses_key)
    throw ConfigError("--vary", 0, opt.key,
                      "is not used by '" + out.a + "' nor by '" + out.b +
                          "' (unset or 0 in both), so it cannot make them tie");
  const config::Option& o = *(out.a_uses_key ? oa : ob);
  out.key_unit = o.unit;
  out.integer = o.type == config::ValueType::kInt;
  out.base_a = va.value_or(0);
  out.base_b = vb.value_or(0);
  const double base = out.a_uses_key ? *va : *vb;
  out.low = opt.low.value_or(std::max(o.min, base / 4));
  out.high = opt.high.value_or(std::min(o.max, base * 4));
  if (!(out.low < out.high))
    throw ConfigError("--between", 0, opt.key,
                      "the range must have LOW < HIGH, got " + config::format_number(out.low) +
                          " .. " + config::format_number(out.high));
  if (out.low < o.min || out.high > o.max || (o.min_exclusive && out.low <= o.min))
    throw ConfigError("--between", 0, opt.key,
                      "the range " + config::format_number(out.low) + " .. " +
                          config::format_number(out.high) + " leaves the key's valid range " +
                          config::range_text(o));

  auto sample = [&](double x) {
    if (opt.stop && *opt.stop) throw Interrupted("break-even interrupted");
    BreakEvenSample s;
    s.value = out.integer ? std::round(x) : x;
    const std::vector<std::string> extra = {override_text(opt.key, s.value, out.integer)};
    const std::vector<std::string> none;
    Evaluation ea = evaluate(source_a, out.a_uses_key ? extra : none, opt.metric, opt.stop);
    Evaluation eb = evaluate(source_b, out.b_uses_key ? extra : none, opt.metric, opt.stop);
    if (opt.stop && *opt.stop) throw Interrupted("break-even interrupted");
    out.simulations += 2;
    if (out.unit.empty()) out.unit = !ea.unit.empty() ? ea.unit : eb.unit;
    s.metric_a = ea.metric;
    s.metric_b = eb.metric;
    if (!ea.error.empty()) s.error = out.a + ": " + ea.error;
    if (!eb.error.empty()) s.error += (s.error.empty() ? "" : "; ") + out.b + ": " + eb.error;
    s.no_fit = ea.no_fit || eb.no_fit;
    return s;
  };
  auto diff = [](const BreakEvenSample& s) -> std::optional<double> {
    if (!s.metric_a || !s.metric_b) return std::nullopt;
    return *s.metric_a - *s.metric_b;
  };
  const int n = std::max(2, opt.scan_points);
  auto runs = [&](const BreakEvenSample& s) { return diff(s).has_value(); };
  // Evenly spaced samples. A whole-number value that a configuration rejects (a batch its
  // data-parallel ranks cannot divide) is replaced by the nearest accepted one within 4, between
  // the neighbouring samples, so the scan shows values that ran.
  auto scan = [&](double lo, double hi) {
    std::vector<BreakEvenSample> v;
    const double step = (hi - lo) / double(n - 1);
    for (int i = 0; i < n; ++i) {
      const double x = lo + step * double(i);
      BreakEvenSample s = sample(x);
      for (int k = 1; out.integer && !runs(s) && !s.no_fit && k <= 8; ++k) {
        const double y = std::round(x) + (k % 2 ? (k + 1) / 2 : -(k / 2));
        if (y < lo || y > hi || std::fabs(y - x) >= 0.5 * step) continue;
        BreakEvenSample t = sample(y);
        if (runs(t) || t.no_fit) s = std::move(t);
      }
      v.push_back(std::move(s));
    }
    return v;
  };
  out.scan = scan(out.low, out.high);
  const bool any_no_fit = std::any_of(out.scan.begin(), out.scan.end(),
                                      [](const BreakEvenSample& x) { return x.no_fit; });
  if (!any_no_fit) {
    // Both fit everywhere scanned: the whole range is searched (a sample with an invalid value
    // is listed as failed and skipped).
    out.runs_low = out.low;
    out.runs_high = out.high;
    for (const auto& x : out.scan)
      if (!runs(x)) out.failed.push_back(x);
  } else {
    // Searching where a configuration does not fit tells nothing: find the part of the range
    // where both fit and search that. The stretches of samples between those that do not fit,
    // as index ranges of their first and last sample that ran (an invalid value in between is
    // skipped, not an end).
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    bool open = false;
    for (std::size_t i = 0; i < out.scan.size(); ++i) {
      const BreakEvenSample& x = out.scan[i];
      if (!runs(x)) {
        out.failed.push_back(x);
        if (x.no_fit) open = false;
        continue;
      }
      if (open)
        spans.back().second = i;
      else
        spans.push_back({i, i});
      open = true;
    }
    if (!spans.empty()) {
      // The span holding the value as given, else the longest.
      const double given = out.a_uses_key ? out.base_a : out.base_b;
      auto holds = [&](std::size_t k) {
        const std::size_t lo = spans[k].first > 0 ? spans[k].first - 1 : 0;
        const std::size_t hi = std::min(spans[k].second + 1, out.scan.size() - 1);
        return out.scan[lo].value <= given && given <= out.scan[hi].value;
      };
      auto len = [&](std::size_t k) { return spans[k].second - spans[k].first; };
      std::size_t pick = 0;
      for (std::size_t k = 1; k < spans.size(); ++k)
        if ((holds(k) && !holds(pick)) || (holds(k) == holds(pick) && len(k) > len(pick)))
          pick = k;
      for (std::size_t k = 0; k < spans.size(); ++k)
        if (k != pick)
          out.other_runs.push_back(
              {out.scan[spans[k].first].value, out.scan[spans[k].second].value});
      // Widens the span from sample `in` (both ran) towards `out_at` (a value past the span) by
      // bisection, to 0.1 % of the range (about ten simulations of each configuration per end);
      // a midpoint with an invalid value is moved to the nearest valid one inside the bracket
      // (whole-number keys), else the bracket stays.
      auto edge = [&](BreakEvenSample in, BreakEvenSample fail) {
        const double tol = out.integer ? 1 : 1e-3 * (out.high - out.low);
        for (int it = 0; it < 60 && std::fabs(fail.value - in.value) > tol; ++it) {
          const double mid = 0.5 * (in.value + fail.value);
          BreakEvenSample m = sample(mid);
          const double dir = fail.value > in.value ? 1 : -1;
          for (int step = 1; out.integer && !runs(m) && !m.no_fit && step <= 8; ++step) {
            const double x = std::round(mid) + dir * (step % 2 ? (step + 1) / 2 : -step / 2);
            if ((x - in.value) * dir <= 0 || (fail.value - x) * dir <= 0) continue;
            m = sample(x);
          }
          if (runs(m))
            in = std::move(m);
          else if (m.no_fit)
            fail = std::move(m);
          else
            break;
        }
        return std::pair{in, fail};
      };
      const auto [first, last] = spans[pick];
      // Each end: found by bisection towards the nearest sample that does not fit, else the
      // range's end (only invalid values, or none, lie past the span).
      BreakEvenSample lo = out.scan[first], hi = out.scan[last];
      bool lo_known = true, hi_known = true;
      // The nearest sample past each end that does not fit (nothing to widen towards when the
      // span runs to the range's end, or only invalid values lie past it).
      auto past = [&](std::size_t from, int dir) -> std::optional<std::size_t> {
        for (std::size_t i = from; dir < 0 ? i-- > 0 : ++i < out.scan.size();)
          if (out.scan[i].no_fit) return i;
        return std::nullopt;
      };
      if (const auto i = past(first, -1)) {
        auto [in, fail] = edge(lo, out.scan[*i]);
        lo = in;
        out.stops_low = fail.error;
      } else {
        lo = out.scan.front();
        lo_known = false;
      }
      if (const auto i = past(last, +1)) {
        auto [in, fail] = edge(hi, out.scan[*i]);
        hi = in;
        out.stops_high = fail.error;
      } else {
        hi = out.scan.back();
        hi_known = false;
      }
      out.runs_low = lo.value;
      out.runs_high = hi.value;
      if (hi.value > lo.value) {
        out.scan = scan(lo.value, hi.value);
        // The ends found by bisection ran already; a sample inside can still fail (an invalid
        // value, or a gap the first scan missed).
        if (lo_known) out.scan.front() = lo;
        if (hi_known) out.scan.back() = hi;
      } else {
        out.scan = {lo};
      }
    } else {
      out.scan.clear();
    }
  }

  // Equal at every sample where both ran: the key does not separate them (two equal
  // configurations), and no one value of it is where they tie.
  std::size_t ran = 0, equal = 0;
  for (const auto& x : out.scan)
    if (const auto d = diff(x)) {
      ++ran;
      if (*d == 0) ++equal;
    }
  if (ran >= 2 && equal == ran) {
    out.equal_everywhere = true;
    return out;
  }

  // The first bracket (from low) where a - b changes sign or is zero.
  std::optional<std::size_t> bracket;
  const BreakEvenSample* prev = nullptr;
  for (std::size_t i = 0; i < out.scan.size(); ++i) {
    const auto d = diff(out.scan[i]);
    if (!d) continue;
    if (*d == 0) {
      if (!bracket) {
        out.tie = out.scan[i].value;
        out.tie_metric = out.scan[i].metric_a;
      }
      ++out.crossings;
      prev = &out.scan[i];
      continue;
    }
    if (prev) {
      const double pd = *diff(*prev);
      if (pd != 0 && (pd < 0) != (*d < 0)) {
        ++out.crossings;
        if (!bracket && !out.tie) bracket = i;
      }
    }
    prev = &out.scan[i];
  }
  if (!bracket && !out.tie) {
    // No tie inside the part searched: where would the straight line through its two outermost
    // samples put it? Says how far off a tie is (or that it needs a value the key cannot take),
    // but not across values where a configuration fails: the line says nothing there.
    const BreakEvenSample *first = nullptr, *last = nullptr;
    for (const auto& s : out.scan)
      if (diff(s)) {
        if (!first) first = &s;
        last = &s;
      }
    if (first && last != first) {
      const double d0 = *diff(*first), d1 = *diff(*last);
      if (d0 != d1) {
        const double x = first->value - d0 * (last->value - first->value) / (d1 - d0);
        if (x < first->value && !out.stops_low.empty())
          out.extrapolation_blocked = out.stops_low;
        else if (x > last->value && !out.stops_high.empty())
          out.extrapolation_blocked = out.stops_high;
        else
          out.extrapolated_tie = x;
      }
    }
    out.valid_min = o.min;
    out.valid_max = o.max;
  }
  if (!bracket || out.tie) return out;

  // Bisection between the bracketing samples: robust where the metric has kinks (a resource
  // becoming the bottleneck), and the metric is cheap to evaluate.
  std::size_t j = *bracket - 1;
  while (!diff(out.scan[j])) --j;  // the previous sample with both metrics
  BreakEvenSample lo = out.scan[j], hi = out.scan[*bracket];
  const double tol = opt.relative_tolerance * (out.high - out.low);
  for (int it = 0; it < 200; ++it) {
    if (out.integer ? hi.value - lo.value <= 1 : hi.value - lo.value <= tol) break;
    const BreakEvenSample mid = sample(0.5 * (lo.value + hi.value));
    const auto dm = diff(mid);
    if (!dm) break;  // cannot refine past a failed point: report the bracket
    if (*dm == 0) {
      lo = hi = mid;
      break;
    }
    ((*dm < 0) == (*diff(lo) < 0) ? lo : hi) = mid;
  }
  if (out.integer && lo.value != hi.value) {
    out.tie_below = lo.value;
    out.tie_above = hi.value;
  }
  // Linear interpolation inside the final bracket.
  const double dl = *diff(lo), dh = *diff(hi);
  const double w = dl == dh ? 0.5 : dl / (dl - dh);
  out.tie = lo.value + w * (hi.value - lo.value);
  out.tie_metric = *lo.metric_a + w * (*hi.metric_a - *lo.metric_a);
  return out;
}

}  // namespace tiersim::sensitivity
